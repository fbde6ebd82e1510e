/*
 * api_github_held.c -- GitHub's held repeats (api_github_held.h): the
 * store's held events, and the release of those GitHub lists.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "account_name.h"
#include "api_github_held.h"
#include "cli_text.h"
#include "clock.h"
#include "ih.h"
#include "store.h"

static int
held_row(void *arg, const struct store_row *row)
{
	struct gh_held_list *hl = arg;
	struct gh_held *x = &hl->v[hl->n];
	const char *action = row->subtype != NULL ? row->subtype : "";

	/* Longer than GitHub's: never listed, left to the operator. */
	if (hl->n == GITHUB_HELD_MAX ||
	    strlen(row->event_id) >= sizeof(x->event_id) ||
	    strlen(row->event_type) >= sizeof(x->type) ||
	    strlen(action) >= sizeof(x->action))
		return IH_OK;
	snprintf(x->event_id, sizeof(x->event_id), "%s", row->event_id);
	snprintf(x->type, sizeof(x->type), "%s", row->event_type);
	snprintf(x->action, sizeof(x->action), "%s", action);
	x->received_at = row->received_at;
	hl->n++;
	return IH_OK;
}

int
gh_held_read(struct catchup *cu, struct gh_held_list *hl)
{
	struct store_filter f;
	char err[STORE_ERR_MAX];
	int rc;

	hl->n = 0;
	hl->v = calloc(GITHUB_HELD_MAX, sizeof(*hl->v));
	if (hl->v == NULL)
		return IH_ENOMEM;
	memset(&f, 0, sizeof(f));
	f.provider = cu->p->name;
	f.account = account_or_default(cu->c->account);
	f.status = "held";
	f.limit = GITHUB_HELD_MAX;
	rc = store_list(cu->st, &f, held_row, hl, err, sizeof(err));
	if (rc != IH_OK) {
		snprintf(cu->err, sizeof(cu->err), "%s", err);
		rc = IH_ESTORE;
	}
	return rc;
}

/*
 * Do items (sorted by GUID) list guid with x's event and action?  The GUID
 * alone, which a replay may copy from another delivery, is not enough.
 */
static int
listed(const struct gh_item *items, size_t n, const char *guid,
    const struct gh_held *x)
{
	size_t lo = 0, hi = n, mid, j;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (strcmp(items[mid].guid, guid) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (j = lo; j < n && strcmp(items[j].guid, guid) == 0; j++)
		if (strcmp(items[j].event, x->type) == 0 &&
		    strcmp(items[j].action, x->action) == 0)
			return 1;
	return 0;
}

static int
by_guid(const void *a, const void *b)
{
	return strcmp(((const struct gh_item *)a)->guid,
	    ((const struct gh_item *)b)->guid);
}

int
gh_held_release(struct catchup *cu, const char *scope, const char *hook_id,
    struct gh_item *items, size_t nitems, const struct gh_held_list *hl)
{
	struct store_filter f;
	const struct gh_held *x;
	char prefix[32], err[STORE_ERR_MAX];
	size_t i, plen;
	long n;
	int rc = IH_OK;

	snprintf(prefix, sizeof(prefix), "%s:", hook_id);
	plen = strlen(prefix);
	qsort(items, nitems, sizeof(*items), by_guid);
	for (i = 0; rc == IH_OK && i < hl->n; i++) {
		x = &hl->v[i];
		if (strncmp(x->event_id, prefix, plen) != 0 ||
		    !listed(items, nitems, x->event_id + plen, x))
			continue;
		n = 1;
		if (!cu->dry_run) {
			memset(&f, 0, sizeof(f));
			f.provider = cu->p->name;
			f.account = account_or_default(cu->c->account);
			f.event_id = x->event_id;
			f.status = "held";
			rc = store_requeue(cu->st, &f, 0, clock_wall_ms(), NULL,
			    NULL, &n, err, sizeof(err));
			if (rc != IH_OK) {
				snprintf(cu->err, sizeof(cu->err), "%s", err);
				rc = IH_ESTORE;
				break;
			}
		}
		cu->released += n;
		if (n > 0 && !cu->json)
			cli_printf(stdout, "github: %s/hooks/%s: %s (%s): "
			    "held, listed by GitHub: %s\n", scope, hook_id,
			    x->event_id + plen, x->type, cu->dry_run ?
			    "would be released" : "released");
	}
	return rc;
}
