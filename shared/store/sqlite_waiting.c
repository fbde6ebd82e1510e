/*
 * sqlite_waiting.c -- idemhook stats' figures of why pending events wait
 * and of how long attempts take (store.h, struct store_stats), for one
 * provider and account.  Runs in sq_stats()'s read transaction.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <sqlite3.h>

#include "clock.h"
#include "ih.h"
#include "sqlite_int.h"

/* Finished attempts started in the window: ?1 provider, ?2 account. */
#define SQ_ATTEMPTS \
	" FROM attempts a JOIN events e ON e.id = a.event" \
	" WHERE e.provider = ?1 AND e.account = ?2" \
	" AND a.finished_at IS NOT NULL" \
	" AND a.started_at >= ?3 AND a.started_at < ?4"

/* The nearest-rank pct percentile of n durations, by lat. */
static int
rank(struct sq *st, sqlite3_stmt *lat, int64_t n, int pct, int64_t *out,
    char *err, size_t errlen)
{
	int64_t k = (n * pct + 99) / 100;
	int step;

	*out = -1;
	if (n <= 0)
		return IH_OK;
	sqlite3_bind_int64(lat, 5, k > 1 ? k - 1 : 0);
	step = sqlite3_step(lat);
	if (step == SQLITE_ROW)
		*out = sqlite3_column_int64(lat, 0);
	sqlite3_reset(lat);
	if (step != SQLITE_ROW && step != SQLITE_DONE)
		return sq_fail(st, step, "cannot compute attempt durations",
		    err, errlen);
	return IH_OK;
}

int
sq_stats_waiting(struct sq *st, struct store_stats *x, int64_t since_ms,
    int64_t until_ms, char *err, size_t errlen)
{
	sqlite3_stmt *w = NULL, *n = NULL, *lat = NULL;
	struct store_dest_state ds;
	int64_t now;
	int rc;

	now = clock_wall_ms();
	rc = store_dest_state(&st->base, x->provider, x->account, now, &ds, err,
	    errlen);
	if (rc == IH_OK)
		rc = sq_prepare(st, "SELECT coalesce(sum(b), 0),"
		    " coalesce(sum(NOT b AND status = 'failed'"
		    "  AND next_attempt_at > ?3), 0),"
		    " coalesce(sum(NOT b AND (status = 'received'"
		    "  OR (status = 'failed' AND next_attempt_at <= ?3)"
		    "  OR (status = 'processing' AND lease_until <= ?3))), 0),"
		    " coalesce(sum(NOT b AND id = ?4), 0)"
		    " FROM (SELECT e.id, e.status, e.next_attempt_at,"
		    "  e.lease_until,"
		    "  (e.order_key IS NOT NULL AND e.status <> 'processing'"
		    "  AND EXISTS (SELECT 1 FROM events p"
		    "  WHERE p.provider = e.provider AND p.account = e.account"
		    "  AND p.order_key = e.order_key AND p.id < e.id"
		    "  AND p.status NOT IN ('done', 'dead', 'quarantined')))"
		    "  AS b FROM events e WHERE e.provider = ?1"
		    "  AND e.account = ?2"
		    "  AND e.status IN ('received', 'processing', 'failed'))",
		    &w, err, errlen);
	if (rc == IH_OK)
		rc = sq_prepare(st, "SELECT count(*)" SQ_ATTEMPTS, &n, err,
		    errlen);
	if (rc == IH_OK)
		rc = sq_prepare(st, "SELECT a.finished_at - a.started_at"
		    SQ_ATTEMPTS " ORDER BY 1 LIMIT 1 OFFSET ?5", &lat, err,
		    errlen);
	if (rc != IH_OK)
		goto out;
	sqlite3_bind_text(w, 1, x->provider, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(w, 2, x->account, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(w, 3, now);
	sqlite3_bind_int64(w, 4, ds.paused ? ds.probe : -1);
	if (sq_row(st, w, "cannot count waiting events", &rc, err, errlen)) {
		x->wait_order = sqlite3_column_int64(w, 0);
		x->wait_retry = sqlite3_column_int64(w, 1);
		store_dest_waiting(&ds, sqlite3_column_int64(w, 2),
		    sqlite3_column_int64(w, 3) > 0, now, x);
	}
	if (rc != IH_OK)
		goto out;
	sqlite3_bind_text(n, 1, x->provider, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(n, 2, x->account, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(n, 3, since_ms);
	sqlite3_bind_int64(n, 4, until_ms);
	if (sq_row(st, n, "cannot count attempts", &rc, err, errlen))
		x->attempt_n = sqlite3_column_int64(n, 0);
	if (rc != IH_OK)
		goto out;
	sqlite3_bind_text(lat, 1, x->provider, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(lat, 2, x->account, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(lat, 3, since_ms);
	sqlite3_bind_int64(lat, 4, until_ms);
	rc = rank(st, lat, x->attempt_n, 50, &x->attempt_p50_ms, err, errlen);
	if (rc == IH_OK)
		rc = rank(st, lat, x->attempt_n, 99, &x->attempt_p99_ms, err,
		    errlen);
out:
	sqlite3_finalize(w);
	sqlite3_finalize(n);
	sqlite3_finalize(lat);
	return rc;
}

int
sq_behind(struct store *base, int64_t rowid, char *id, size_t cap,
    char *err, size_t errlen)
{
	struct sq *st = sq_of(base);
	sqlite3_stmt *s = NULL;
	const unsigned char *v;
	int rc;

	rc = sq_prepare(st, "SELECT p.event_id FROM events e JOIN events p"
	    " ON p.provider = e.provider AND p.account = e.account"
	    " AND p.order_key = e.order_key AND p.id < e.id"
	    " WHERE e.id = ?1 AND p.status NOT IN"
	    " ('done', 'dead', 'quarantined') ORDER BY p.id LIMIT 1", &s, err,
	    errlen);
	if (rc != IH_OK)
		return rc;
	sqlite3_bind_int64(s, 1, rowid);
	if (sq_row(st, s, "cannot read what an event waits behind", &rc, err,
	    errlen)) {
		v = sqlite3_column_text(s, 0);
		if (v != NULL)
			snprintf(id, cap, "%s", (const char *)v);
	}
	sqlite3_finalize(s);
	return rc;
}
