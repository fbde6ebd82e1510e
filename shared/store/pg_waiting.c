/*
 * pg_waiting.c -- idemhook stats' figures of why pending events wait and
 * of how long attempts take (store.h, struct store_stats), for one
 * provider and account.  Runs in pg_stats()'s read transaction.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <libpq-fe.h>

#include "clock.h"
#include "ih.h"
#include "pg_int.h"

/* Finished attempts started in the window: $1 provider, $2 account. */
#define PG_ATTEMPTS \
	" FROM attempts a JOIN events e ON e.id = a.event" \
	" WHERE e.provider = $1 AND e.account = $2" \
	" AND a.finished_at IS NOT NULL" \
	" AND a.started_at >= $3 AND a.started_at < $4"

/* One number that sql answers with, from parameters p (types). */
static int
one(struct pgs *st, const char *sql, const char *types,
    const struct pg_params *p, int64_t *out, char *err, size_t errlen)
{
	PGresult *r;

	r = pg_exec_sql(st, sql, types, p, PGRES_TUPLES_OK,
	    "cannot compute waiting and attempt figures", err, errlen);
	if (r == NULL)
		return IH_ESTORE;
	if (PQntuples(r) == 1 && !PQgetisnull(r, 0, 0))
		*out = pg_getint(r, 0, 0);
	PQclear(r);
	return IH_OK;
}

int
pg_stats_waiting(struct pgs *st, struct store_stats *x, int64_t since_ms,
    int64_t until_ms, char *err, size_t errlen)
{
	static const int pct[2] = { 50, 99 };
	int64_t *out[2] = { &x->attempt_p50_ms, &x->attempt_p99_ms }, k;
	struct store_dest_state ds;
	struct pg_params p;
	PGresult *r;
	int64_t now;
	int i, rc;

	now = clock_wall_ms();
	rc = store_dest_state(&st->base, x->provider, x->account, now, &ds, err,
	    errlen);
	if (rc != IH_OK)
		return rc;
	memset(&p, 0, sizeof(p));
	pg_text(&p, x->provider);
	pg_text(&p, x->account);
	pg_int(&p, now);
	pg_int(&p, ds.paused ? ds.probe : -1);
	r = pg_exec_sql(st, "SELECT count(*) FILTER (WHERE b),"
	    " count(*) FILTER (WHERE NOT b AND status = 'failed'"
	    "  AND next_attempt_at > $3),"
	    " count(*) FILTER (WHERE NOT b AND (status = 'received'"
	    "  OR (status = 'failed' AND next_attempt_at <= $3)"
	    "  OR (status = 'processing' AND lease_until <= " PG_NOW_MS "))),"
	    " count(*) FILTER (WHERE NOT b AND id = $4)"
	    " FROM (SELECT e.id, e.status, e.next_attempt_at, e.lease_until,"
	    "  (e.order_key IS NOT NULL AND e.status <> 'processing'"
	    "  AND EXISTS (SELECT 1 FROM events p"
	    "  WHERE p.provider = e.provider AND p.account = e.account"
	    "  AND p.order_key = e.order_key AND p.id < e.id"
	    "  AND p.status NOT IN ('done', 'dead', 'quarantined'))) AS b"
	    "  FROM events e WHERE e.provider = $1 AND e.account = $2"
	    "  AND e.status IN ('received', 'processing', 'failed')) AS w",
	    "ttii", &p, PGRES_TUPLES_OK, "cannot count waiting events", err,
	    errlen);
	if (r == NULL)
		return IH_ESTORE;
	if (PQntuples(r) == 1) {
		x->wait_order = pg_getint(r, 0, 0);
		x->wait_retry = pg_getint(r, 0, 1);
		store_dest_waiting(&ds, pg_getint(r, 0, 2),
		    pg_getint(r, 0, 3) > 0, now, x);
	}
	PQclear(r);
	memset(&p, 0, sizeof(p));
	pg_text(&p, x->provider);
	pg_text(&p, x->account);
	pg_int(&p, since_ms);
	pg_int(&p, until_ms);
	rc = one(st, "SELECT count(*)" PG_ATTEMPTS, "ttii", &p, &x->attempt_n,
	    err, errlen);
	for (i = 0; i < 2 && rc == IH_OK; i++) {
		*out[i] = -1;
		if (x->attempt_n <= 0)
			continue;
		k = (x->attempt_n * pct[i] + 99) / 100;
		pg_int(&p, k > 1 ? k - 1 : 0);
		rc = one(st, "SELECT a.finished_at - a.started_at" PG_ATTEMPTS
		    " ORDER BY 1 LIMIT 1 OFFSET $5", "ttiii", &p, out[i], err,
		    errlen);
		p.n--;
	}
	return rc;
}

int
pg_behind(struct store *base, int64_t rowid, char *id, size_t cap,
    char *err, size_t errlen)
{
	struct pgs *st = pg_of(base);
	struct pg_params p;
	PGresult *r;

	if (pg_ensure(st, err, errlen) != IH_OK)
		return IH_ESTORE;
	memset(&p, 0, sizeof(p));
	pg_int(&p, rowid);
	r = pg_exec_sql(st, "SELECT p.event_id FROM events e JOIN events p"
	    " ON p.provider = e.provider AND p.account = e.account"
	    " AND p.order_key = e.order_key AND p.id < e.id"
	    " WHERE e.id = $1 AND p.status NOT IN"
	    " ('done', 'dead', 'quarantined') ORDER BY p.id LIMIT 1", "i", &p,
	    PGRES_TUPLES_OK, "cannot read what an event waits behind", err,
	    errlen);
	if (r == NULL)
		return IH_ESTORE;
	if (PQntuples(r) == 1)
		snprintf(id, cap, "%s", PQgetvalue(r, 0, 0));
	PQclear(r);
	return IH_OK;
}
