/* store_dest.c -- the forwarding destinations' shared state (store_dest.h). */
#include <stdio.h>
#include <string.h>

#include "ih.h"
#include "store_backend.h"
#include "store_dest.h"

/* A write that joins the caller's transaction needs one open. */
static int
in_tx(struct store *st, struct store_txn *tx, char *err, size_t errlen)
{
	if (tx == NULL || !tx->open || tx->st != st) {
		snprintf(err, errlen, "a destination's state is written "
		    "inside a claim's transaction");
		return IH_EINVAL;
	}
	return IH_OK;
}

/* Ends a transaction of its own: committed after rc IH_OK, else undone. */
static int
end_tx(struct store_txn *tx, int rc, char *err, size_t errlen)
{
	if (rc == IH_OK)
		return store_commit(tx, err, errlen);
	if (tx != NULL)
		store_rollback(tx);
	return rc;
}

int
store_dest_sync(struct store *st, struct store_txn *tx, const char *provider,
    const struct store_dest *dests, size_t n, int prune,
    struct store_dest_was *was, char *err, size_t errlen)
{
	struct store_dest_was one;
	char keep[64 * 66 + 2];
	size_t i, o = 1;
	int rc;

	rc = in_tx(st, tx, err, errlen);
	keep[0] = ',';
	keep[1] = '\0';
	for (i = 0; rc == IH_OK && i < n; i++) {
		rc = st->ops->dest_put(st, provider, &dests[i],
		    was != NULL ? &was[i] : &one, err, errlen);
		if (rc == IH_OK && prune && o + strlen(dests[i].account) + 2 <
		    sizeof(keep))
			o += (size_t)snprintf(keep + o, sizeof(keep) - o, "%s,",
			    dests[i].account);
	}
	if (rc == IH_OK && prune)
		rc = st->ops->dest_prune(st, provider, keep, err, errlen);
	return rc;
}

int
store_dest_claimed(struct store *st, struct store_txn *tx,
    const char *provider, const char *account, int64_t now_ms, char *err,
    size_t errlen)
{
	int rc;

	rc = in_tx(st, tx, err, errlen);
	if (rc == IH_OK)
		rc = st->ops->dest_claimed(st, provider, account, now_ms, err,
		    errlen);
	return rc;
}

int
store_dest_ok(struct store *st, const char *provider, const char *account,
    int *resumed, long *failures, char *err, size_t errlen)
{
	struct store_dest_state ds;
	struct store_txn *tx = NULL;
	int rc;

	*resumed = 0;
	*failures = 0;
	/*
	 * A plain read first: a delivery to a healthy destination takes no
	 * write lock (SQLite's is the store's one).
	 */
	rc = st->ops->dest_state(st, provider, account, 0, &ds, err, errlen);
	if (rc != IH_OK || !ds.found || (ds.failures == 0 && !ds.paused))
		return rc;
	rc = store_begin(st, STORE_RELAXED, &tx, err, errlen);
	if (rc == IH_OK)
		rc = st->ops->dest_ok(st, provider, account, resumed, failures,
		    err, errlen);
	return end_tx(tx, rc, err, errlen);
}

int
store_dest_failed(struct store *st, const char *provider, const char *account,
    int64_t rowid, int64_t now_ms, long *failures, int *paused, char *err,
    size_t errlen)
{
	struct store_txn *tx = NULL;
	int rc;

	rc = store_begin(st, STORE_RELAXED, &tx, err, errlen);
	if (rc == IH_OK)
		rc = st->ops->dest_failed(st, provider, account, rowid,
		    now_ms, failures, paused, err, errlen);
	return end_tx(tx, rc, err, errlen);
}

int
store_dest_state(struct store *st, const char *provider, const char *account,
    int64_t now_ms, struct store_dest_state *out, char *err, size_t errlen)
{
	return st->ops->dest_state(st, provider, account, now_ms, out, err,
	    errlen);
}

const char *
store_dest_why(const struct store_dest_state *ds, int64_t rowid,
    int64_t now_ms)
{
	if (!ds->found)
		return NULL;
	if (ds->paused)
		return (ds->probe_id[0] != '\0' && rowid != ds->probe) ||
		    ds->in_flight >= 1 ? "paused" : NULL;
	if (ds->in_flight >= ds->concurrency)
		return "concurrency";
	if (ds->rate_ms > 0 && ds->next_at > now_ms)
		return "rate";
	return NULL;
}

void
store_dest_waiting(const struct store_dest_state *ds, int64_t due,
    int probe_due, int64_t now_ms, struct store_stats *x)
{
	const char *why;

	x->forward_paused = ds->found ? ds->paused : -1;
	x->wait_paused = 0;
	x->wait_concurrency = 0;
	x->wait_rate = 0;
	/* The probe goes when nothing is in flight: it does not wait. */
	if (ds->found && ds->paused && probe_due && ds->in_flight == 0)
		due--;
	why = store_dest_why(ds, -1, now_ms);
	if (due <= 0 || why == NULL)
		return;
	if (strcmp(why, "paused") == 0)
		x->wait_paused = due;
	else if (strcmp(why, "concurrency") == 0)
		x->wait_concurrency = due;
	else
		x->wait_rate = due;
}
