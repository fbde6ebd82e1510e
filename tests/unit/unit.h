/*
 * unit.h -- a fake request for the handler unit tests: CGI variables
 * from a table and a body given as pointer plus length, so a provider's
 * verify and identify run exactly as under serve.c; and the checks the
 * provider tests share.  Include after <cmocka.h>.
 */
#ifndef IH_UNIT_H
#define IH_UNIT_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "ih.h"
#include "json.h"
#include "json_int.h"
#include "object.h"
#include "provider.h"
#include "request.h"

#define UNIT_MAX_VARS	16

struct unit_req {
	const char		*names[UNIT_MAX_VARS];
	const char		*values[UNIT_MAX_VARS];
	size_t			 n;
	struct request		 req;
	struct config		 cfg;
	struct provider_req	 pr;
};

static inline const char *
unit_param(void *arg, const char *name)
{
	struct unit_req *u = arg;
	size_t i;

	for (i = 0; i < u->n; i++)
		if (strcmp(u->names[i], name) == 0)
			return u->values[i];
	return NULL;
}

static inline size_t
unit_read(void *arg, void *buf, size_t len)
{
	(void)arg;
	(void)buf;
	(void)len;
	return 0;
}

/* Starts a request with body and the secrets (NULL-terminated). */
static inline void
unit_begin(struct unit_req *u, struct json *js, const char *body,
    size_t len, const char *const *secrets)
{
	struct request_io io;

	memset(u, 0, sizeof(*u));
	io.param = unit_param;
	io.read = unit_read;
	io.arg = u;
	u->names[u->n] = "REQUEST_METHOD";
	u->values[u->n++] = "POST";
	request_begin(&u->req, &io);
	u->req.body = (unsigned char *)(uintptr_t)body;
	u->req.body_len = len;
	for (; secrets != NULL && *secrets != NULL &&
	    u->cfg.nsecrets < CONFIG_MAX_SECRETS; secrets++) {
		u->cfg.secrets[u->cfg.nsecrets] = (char *)(uintptr_t)*secrets;
		u->cfg.secret_len[u->cfg.nsecrets++] = strlen(*secrets);
	}
	u->cfg.tolerance_s = CONFIG_DEFAULT_TOLERANCE;
	u->pr.req = &u->req;
	u->pr.cfg = &u->cfg;
	u->pr.now = 0;
	u->pr.check_time = 1;
	u->pr.json = js;
}

/* Sets a CGI variable ("HTTP_X_GITHUB_EVENT", "CONTENT_TYPE"). */
static inline void
unit_set(struct unit_req *u, const char *name, const char *value)
{
	if (u->n < UNIT_MAX_VARS) {
		u->names[u->n] = name;
		u->values[u->n++] = value;
	}
	if (strcmp(name, "CONTENT_TYPE") == 0)
		u->req.content_type = value;
}

/*
 * Spreads a NULL-terminated list of secrets into the arrays the
 * *_verify_header functions take; returns their number.
 */
static inline size_t
unit_secret_list(const char *const *secrets, char **s, size_t *l)
{
	size_t n;

	for (n = 0; secrets[n] != NULL; n++) {
		s[n] = (char *)(uintptr_t)secrets[n];
		l[n] = strlen(secrets[n]);
	}
	return n;
}

/* A check of one signature header over the body (GitHub, Shopify). */
typedef int (*unit_header_fn)(const char *, const void *, size_t,
    char *const *, const size_t *, size_t, const char **);

/* Runs fn on header and body with the secrets; a refusal gives a reason. */
static inline int
unit_check_header(unit_header_fn fn, const char *header, const char *body,
    const char *const *secrets)
{
	char *s[CONFIG_MAX_SECRETS];
	size_t l[CONFIG_MAX_SECRETS], n = unit_secret_list(secrets, s, l);
	const char *why = NULL;
	int rc;

	rc = fn(header, body, strlen(body), s, l, n, &why);
	if (rc != IH_OK)
		assert_non_null(why);
	return rc;
}

/* Lists of secrets (NULL-terminated) and what a check under each answers. */
struct unit_secrets {
	const char	*list[4];
	int		 rc;
};

/* check(header, body, list) answers rc for each of the n cases of t. */
static inline void
unit_check_secrets(int (*check)(const char *, const char *,
    const char *const *), const char *header, const char *body,
    const struct unit_secrets *t, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		assert_int_equal(check(header, body, t[i].list), t[i].rc);
}

/*
 * Whether p lets a body first recorded as (first_id, first_type, with
 * same_action) come again as (id, type); a refusal gives a reason.
 */
static inline int
unit_repeat(const struct provider *p, const char *first_id,
    const char *first_type, int same_action, const char *id,
    const char *type)
{
	struct store_first f;
	struct event ev;
	const char *why = NULL;
	int ok;

	memset(&f, 0, sizeof(f));
	memset(&ev, 0, sizeof(ev));
	snprintf(f.event_id, sizeof(f.event_id), "%s", first_id);
	snprintf(f.event_type, sizeof(f.event_type), "%s", first_type);
	f.same_action = same_action;
	ev.event_id = id;
	ev.event_type = type;
	ok = p->repeat_ok(&f, &ev, &why);
	assert_true(ok || why != NULL);
	return ok;
}

/* got is NULL where want is, else the same string. */
static inline void
unit_str_or_null(const char *got, const char *want)
{
	if (want == NULL)
		assert_null(got);
	else
		assert_string_equal(got, want);
}

/*
 * Runs p's identify on u into id (zeroed first): it must return want,
 * with want_id and want_type on IH_OK, else a reason in *why.  The
 * caller frees id.
 */
static inline void
unit_identify(struct unit_req *u, const struct provider *p, struct ident *id,
    const char **why, int want, const char *want_id, const char *want_type)
{
	memset(id, 0, sizeof(*id));
	assert_int_equal(p->identify(&u->pr, id, why), want);
	if (want == IH_OK) {
		assert_string_equal(id->event_id, want_id);
		assert_string_equal(id->event_type, want_type);
	} else
		assert_non_null(*why);
}

/* unit_set for a header a case may leave out: NULL sets nothing. */
static inline void
unit_set_opt(struct unit_req *u, const char *name, const char *value)
{
	if (value != NULL)
		unit_set(u, name, value);
}

/*
 * Runs p's verify (want_verify) and identify (unit_identify) on u, as
 * serve.c does, and when identified checks the subtype against
 * want_sub (NULL: none).
 */
static inline void
unit_verify_identify(struct unit_req *u, const struct provider *p,
    int want_verify, int want_ident, const char *want_id,
    const char *want_type, const char *want_sub)
{
	struct ident id;
	const char *why = NULL;

	assert_int_equal(p->verify(&u->pr, &why), want_verify);
	unit_identify(u, p, &id, &why, want_ident, want_id, want_type);
	if (want_ident == IH_OK)
		unit_str_or_null(id.subtype, want_sub);
	ident_free(&id);
}

/* Whether p keeps the header name with the event. */
static inline int
unit_kept(const struct provider *p, const char *name)
{
	const char *const *h;

	for (h = p->kept_headers; *h != NULL; h++)
		if (strcmp(*h, name) == 0)
			return 1;
	return 0;
}

/* a and b are the same object, or both none. */
static inline void
unit_same_found(const struct object_found *a, const struct object_found *b)
{
	assert_int_equal(a->mapped, b->mapped);
	if (!a->mapped)
		return;
	assert_string_equal(a->kind, b->kind);
	assert_string_equal(a->object_id, b->object_id);
	assert_string_equal(a->status, b->status);
	assert_int_equal(a->json == NULL, b->json == NULL);
	if (a->json != NULL)
		assert_string_equal(a->json, b->json);
	assert_int_equal(a->json_len, b->json_len);
	assert_int_equal(a->source_ms, b->source_ms);
	assert_int_equal(a->rank, b->rank);
	assert_int_equal(a->deleted, b->deleted);
}

/*
 * The receipt of u's body by p, whose identify must accept it: its one
 * pass (provider_memo_fill()) tells provider_memo_found() the object
 * (want_found IH_OK: what p's switch maps by parsing the same bytes,
 * want_mapped saying whether it is one, the body parsed once in all),
 * or leaves it to the switch's parse (IH_ENOTFOUND).
 */
static inline void
unit_receipt_pass(struct unit_req *u, const struct provider *p,
    int want_found, int want_mapped)
{
	struct provider_memo memo;
	struct object_found got, want;
	struct ident id;
	struct event ev;
	const char *why = NULL;
	unsigned long before = u->pr.json->parses;

	memset(&id, 0, sizeof(id));
	provider_memo_fill(&memo, p, &u->pr);
	u->pr.memo = &memo;
	assert_int_equal(p->identify(&u->pr, &id, &why), IH_OK);
	memset(&ev, 0, sizeof(ev));
	ev.provider = p->name;
	ev.event_id = id.event_id;
	ev.event_type = id.event_type;
	ev.subtype = id.subtype;
	ev.payload = u->req.body;
	ev.payload_len = u->req.body_len;
	assert_int_equal(provider_memo_found(&memo, p, &ev, &got),
	    want_found);
	if (want_found == IH_OK)
		assert_int_equal(u->pr.json->parses - before, 1);
	assert_int_equal(p->map_object(&ev, &want), IH_OK);
	assert_int_equal(want.mapped, want_mapped);
	if (want_found == IH_OK)
		unit_same_found(&got, &want);
	object_found_free(&got);
	/* Taken once: a second call cannot tell. */
	assert_int_equal(provider_memo_found(&memo, p, &ev, &got),
	    IH_ENOTFOUND);
	object_found_free(&got);
	object_found_free(&want);
	provider_memo_free(&memo);
	u->pr.memo = NULL;
	ident_free(&id);
}

#endif
