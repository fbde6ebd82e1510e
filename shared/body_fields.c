/*
 * body_fields.c -- a request's body members read once for all of its
 * readers (provider.h, struct provider_memo): identify, the API version,
 * the Connect account and the thin event's test each asked the parser
 * for one or two members, so a Stripe body was parsed and checked four
 * times on receipt.  The same pass reads the object the switch maps, by
 * the rules the provider names before the parse (map_paths): the
 * switch's own parse (provider_map()) is left to events processed
 * elsewhere.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* Is key a name json_path_text() reads as "$.key"? */
static int
plain_key(const char *key)
{
	return strspn(key, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == strlen(key);
}

/*
 * Appends r's wants to m's w[*nw..], sharing those an earlier rule asked
 * for, and sets m's next rule to r.  Returns 0, or -1 (nothing kept)
 * when they do not fit.
 */
static int
add_rule(struct provider_memo *m, size_t *nw, const struct object_rule *r)
{
	struct json_want one[JSON_MAX_FIELDS];
	int at[OBJECT_WANTS], *to = m->at[m->nrules];
	size_t n = 0, j, base = *nw, end = *nw;
	int i;

	memset(one, 0, sizeof(one));
	if (object_want(r, one, &n, at) != 0)
		return -1;
	for (i = 0; i < OBJECT_WANTS; i++) {
		to[i] = -1;
		if (at[i] < 0)
			continue;
		/* Within one rule, each path its own want, as the switch's. */
		for (j = m->n; j < base; j++)
			if (m->w[j].raw == one[at[i]].raw &&
			    strcmp(m->w[j].path, one[at[i]].path) == 0)
				break;
		if (j == base) {
			if (end == JSON_MAX_FIELDS)
				return -1;
			m->w[end] = one[at[i]];
			j = end++;
		}
		to[i] = (int)j;
	}
	m->rules[m->nrules++] = *r;
	*nw = end;
	return 0;
}

/*
 * Sets m's wants: its keys, then the paths of the rules p->map_paths
 * gives for pr, as many as fit.  Returns their number, or 0 when a key
 * is not one json_extract() reads (each reader then parses).
 */
static size_t
set_wants(struct provider_memo *m, const struct provider *p,
    const struct provider_req *pr)
{
	struct object_rule r[PROVIDER_RULES];
	size_t i, nr = 0, nw;

	for (i = 0; i < m->n; i++) {
		m->w[i].raw = 0;
		if (m->keys[i][0] == '$') {
			m->w[i].path = m->keys[i];
			continue;
		}
		if (!plain_key(m->keys[i]) || snprintf(m->paths[i],
		    sizeof(m->paths[i]), "$.%s", m->keys[i]) >=
		    (int)sizeof(m->paths[i]))
			return 0;
		m->w[i].path = m->paths[i];
	}
	nw = m->n;
	if (p->map_paths != NULL && p->map_rule != NULL) {
		memset(r, 0, sizeof(r));
		nr = p->map_paths(pr, r, PROVIDER_RULES);
	}
	for (i = 0; i < nr && i < PROVIDER_RULES; i++)
		if (add_rule(m, &nw, &r[i]) != 0)
			break;
	return nw;
}

int
provider_memo_found(struct provider_memo *m, const struct provider *p,
    const struct event *ev, struct object_found *f)
{
	struct object_rule r, c;
	char kind[OBJECT_KIND_MAX];
	size_t i;

	memset(f, 0, sizeof(*f));
	if (!m->has_object || p->map_rule == NULL)
		return IH_ENOTFOUND;
	m->has_object = 0;
	memset(&r, 0, sizeof(r));
	kind[0] = '\0';
	if (!p->map_rule(ev, &r, kind))
		return IH_OK;
	for (i = 0; i < m->nrules; i++) {
		c = m->rules[i];
		/* A kind the type names was not read: the type's is taken. */
		if (c.kind == NULL && c.kind_path == NULL)
			c.kind = r.kind;
		if (object_rule_reads_same(&r, &c))
			break;
	}
	if (i == m->nrules)
		return IH_ENOTFOUND;
	return object_take(&r, m->w, m->at[i], ev->payload, ev->payload_len,
	    f);
}

int
provider_map(const struct provider *p, const struct event *ev,
    struct object_found *f)
{
	struct object_rule r;
	char kind[OBJECT_KIND_MAX];

	memset(f, 0, sizeof(*f));
	memset(&r, 0, sizeof(r));
	kind[0] = '\0';
	if (!p->map_rule(ev, &r, kind))
		return IH_OK;
	return object_read(&r, ev->payload, ev->payload_len, f);
}

void
provider_memo_fill(struct provider_memo *m, const struct provider *p,
    const struct provider_req *pr)
{
	size_t i, nw;

	memset(m, 0, sizeof(*m));
	m->rc = -1;
	for (i = 0; p->body_keys != NULL && p->body_keys[i] != NULL; i++)
		want(m, p->body_keys[i]);
	want(m, p->version_key);
	want(m, p->source_account_key);
	nw = set_wants(m, p, pr);
	if (nw == 0)
		return;
	m->rc = json_extract(pr->json, pr->req->body, pr->req->body_len,
	    m->w, nw, OBJECT_JSON_MAX);
	/* A rule's path json_extract() refuses: the keys alone, as before. */
	if (m->rc == IH_EINVAL && m->nrules > 0) {
		m->nrules = 0;
		nw = m->n;
		m->rc = nw == 0 ? -1 : json_extract(pr->json, pr->req->body,
		    pr->req->body_len, m->w, nw, OBJECT_JSON_MAX);
	}
	for (i = 0; i < m->n; i++) {
		m->vals[i] = m->w[i].val;
		m->w[i].val = NULL;
	}
	m->has_object = m->rc == IH_OK && m->nrules > 0;
	if (!m->has_object)
		for (i = m->n; i < nw; i++) {
			free(m->w[i].val);
			m->w[i].val = NULL;
		}
	/* Another try may find the memory: each reader then parses. */
	if (m->rc == IH_ENOMEM || m->rc == IH_EINVAL)
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

int
provider_path_text(const struct provider_req *pr, const char *path,
    char **val)
{
	const struct provider_memo *m = pr->memo;
	long at;

	*val = NULL;
	at = m != NULL && m->rc != -1 ? memo_index(m, path) : -1;
	if (at < 0)
		return json_path_text(pr->json, pr->req->body,
		    pr->req->body_len, path, val);
	if (m->rc != IH_OK || m->vals[at] == NULL)
		return m->rc;
	*val = strdup(m->vals[at]);
	return *val != NULL ? IH_OK : IH_ENOMEM;
}
