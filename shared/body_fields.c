/*
 * body_fields.c -- a request's top-level body members read once for all
 * of its readers (provider.h, struct provider_memo): identify, the API
 * version, the Connect account and the thin event's test each asked the
 * parser for one or two members, so a Stripe body was parsed and checked
 * four times on receipt.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "ih.h"
#include "json.h"
#include "object.h"
#include "provider.h"

/* Adds key to m's keys unless it is NULL or there already. */
static void
want(struct provider_memo *m, const char *key)
{
	size_t i;

	if (key == NULL || m->n == JSON_MAX_FIELDS)
		return;
	for (i = 0; i < m->n; i++)
		if (strcmp(m->keys[i], key) == 0)
			return;
	m->keys[m->n++] = key;
}

/*
 * Writes "$.key" into path (len bytes).  Returns 0 for a key that is not
 * letters, digits and '_' alone (json_path_text() would read it
 * otherwise: not here) or too long.  By hand, not strspn() and
 * snprintf(): this runs for each key of every request.
 */
static int
key_path(const char *key, char *path, size_t len)
{
	size_t i;
	char c;

	if (len < 3)
		return 0;
	path[0] = '$';
	path[1] = '.';
	for (i = 0; key[i] != '\0'; i++) {
		c = key[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '_') || i + 3 > len - 1)
			return 0;
		path[i + 2] = c;
	}
	path[i + 2] = '\0';
	return 1;
}

/*
 * The memo's keys and p's object in one json_extract() pass.  Returns 0
 * when the wants do not fit (the caller reads the keys alone).
 */
static int
with_object(struct provider_memo *m, const struct provider *p,
    const struct provider_req *pr)
{
	struct event ev;
	size_t i, nw;

	memset(&ev, 0, sizeof(ev));
	ev.provider = p->name;
	ev.payload = pr->req->body;
	ev.payload_len = pr->req->body_len;
	if (!p->map_rule(&ev, &m->rule))
		return 0;
	for (i = 0; i < m->n; i++) {
		if (!key_path(m->keys[i], m->paths[i], sizeof(m->paths[i])))
			return 0;
		m->w[i].path = m->paths[i];
		m->w[i].raw = 0;
	}
	nw = m->n;
	if (object_want(&m->rule, m->w, &nw, m->at) != 0)
		return 0;
	m->rc = json_extract(pr->json, pr->req->body, pr->req->body_len,
	    m->w, nw, OBJECT_JSON_MAX);
	/* A rule's path json_extract() refuses: the keys alone, as before. */
	if (m->rc == IH_EINVAL) {
		m->rc = -1;
		return 0;
	}
	for (i = 0; i < m->n; i++) {
		m->vals[i] = m->w[i].val;
		m->w[i].val = NULL;
	}
	m->has_object = m->rc == IH_OK;
	if (!m->has_object)
		for (i = m->n; i < nw; i++) {
			free(m->w[i].val);
			m->w[i].val = NULL;
		}
	/* Another try may find the memory: each reader then parses. */
	if (m->rc == IH_ENOMEM)
		m->rc = -1;
	return 1;
}

int
provider_memo_found(struct provider_memo *m, const struct provider *p,
    const struct event *ev, struct object_found *f)
{
	struct object_rule r;
	int rc;

	memset(f, 0, sizeof(*f));
	if (!m->has_object || p->map_rule == NULL)
		return IH_ENOTFOUND;
	memset(&r, 0, sizeof(r));
	if (!p->map_rule(ev, &r))
		return IH_OK;
	if (!object_rule_reads_same(&r, &m->rule))
		return IH_ENOTFOUND;
	rc = object_take(&r, m->w, m->at, ev->payload, ev->payload_len, f);
	m->has_object = 0;
	return rc;
}

void
provider_memo_fill(struct provider_memo *m, const struct provider *p,
    const struct provider_req *pr)
{
	size_t i;

	memset(m, 0, sizeof(*m));
	m->rc = -1;
	for (i = 0; p->body_keys != NULL && p->body_keys[i] != NULL; i++)
		want(m, p->body_keys[i]);
	want(m, p->version_key);
	want(m, p->source_account_key);
	if (m->n == 0)
		return;
	/*
	 * The object too where this process may run the switch on these
	 * bytes (ingest.c, found_on_receipt()); in worker mode idemhook work
	 * does, from the stored payload, so the receipt reads the keys alone.
	 */
	if (p->map_rule != NULL && (pr->cfg == NULL ||
	    pr->cfg->mode != CONFIG_MODE_WORKER) && with_object(m, p, pr))
		return;
	m->rc = json_fields(pr->json, pr->req->body, pr->req->body_len,
	    m->keys, m->n, m->vals);
	/* Another try may find the memory: each reader then parses. */
	if (m->rc == IH_ENOMEM)
		m->rc = -1;
}

void
provider_memo_free(struct provider_memo *m)
{
	size_t i;

	for (i = 0; i < m->n; i++) {
		free(m->vals[i]);
		m->vals[i] = NULL;
	}
	for (i = 0; i < JSON_MAX_FIELDS; i++) {
		free(m->w[i].val);
		m->w[i].val = NULL;
	}
	m->has_object = 0;
	m->n = 0;
	m->rc = -1;
}

/* Where key is in m's keys, or -1. */
static long
memo_index(const struct provider_memo *m, const char *key)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		if (strcmp(m->keys[i], key) == 0)
			return (long)i;
	return -1;
}

int
provider_fields(const struct provider_req *pr, const char *const *keys,
    size_t n, char **vals)
{
	const struct provider_memo *m = pr->memo;
	size_t i;
	long at;

	for (i = 0; m != NULL && m->rc != -1 && i < n; i++)
		if (memo_index(m, keys[i]) < 0)
			break;
	if (m == NULL || m->rc == -1 || i < n || n > JSON_MAX_FIELDS)
		return json_fields(pr->json, pr->req->body, pr->req->body_len,
		    keys, n, vals);
	/* The body's verdict does not depend on the keys asked for. */
	for (i = 0; i < n; i++)
		vals[i] = NULL;
	if (m->rc != IH_OK)
		return m->rc;
	for (i = 0; i < n; i++) {
		at = memo_index(m, keys[i]);
		if (m->vals[at] == NULL)
			continue;
		vals[i] = strdup(m->vals[at]);
		if (vals[i] == NULL)
			goto nomem;
	}
	return IH_OK;
nomem:
	while (i-- > 0) {
		free(vals[i]);
		vals[i] = NULL;
	}
	return IH_ENOMEM;
}
