/*
 * body_fields.c -- a request's top-level body members read once for all
 * of its readers (provider.h, struct provider_memo): identify, the API
 * version, the Connect account and the thin event's test each asked the
 * parser for one or two members, so a Stripe body was parsed and checked
 * four times on receipt.
 */
#include <stdlib.h>
#include <string.h>

#include "ih.h"
#include "json.h"
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
