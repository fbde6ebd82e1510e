/*
 * pg_dest.c -- PostgreSQL: the forwarding destinations' shared state
 * (store_dest.h).  Each write is one statement whose WHERE decides under
 * the row's lock, so that of two processes exactly one pauses or
 * resumes a destination; the limits' upsert locks the row until the
 * claiming transaction ends.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <libpq-fe.h>

#include "ih.h"
#include "pg_int.h"

/* Sets p to its first two parameters: provider and account. */
static void
keys(struct pg_params *p, const char *provider, const char *account)
{
	memset(p, 0, sizeof(*p));
	pg_text(p, provider);
	pg_text(p, account);
}

int
pg_dest_put(struct store *base, const char *provider,
    const struct store_dest *d, struct store_dest_was *was, char *err,
    size_t errlen)
{
	struct pg_params p;
	PGresult *r;

	memset(was, 0, sizeof(*was));
	keys(&p, provider, d->account);
	pg_int(&p, d->concurrency);
	pg_int(&p, d->rate_ms);
	pg_int(&p, d->pause_after);
	/*
	 * The row is locked even when it is left as it is.  A row comes
	 * back when written, with the limits the statement's snapshot saw
	 * (NULL: created); a race may show them equal, and nothing is said.
	 */
	r = pg_exec_sql(pg_of(base), "WITH o AS (SELECT concurrency, rate_ms,"
	    " pause_after FROM destinations WHERE provider = $1"
	    " AND account = $2) INSERT INTO destinations"
	    " (provider, account, concurrency, rate_ms, pause_after)"
	    " VALUES ($1, $2, $3, $4, $5) ON CONFLICT (provider, account)"
	    " DO UPDATE SET concurrency = excluded.concurrency,"
	    " rate_ms = excluded.rate_ms, pause_after = excluded.pause_after"
	    " WHERE destinations.concurrency <> excluded.concurrency"
	    " OR destinations.rate_ms <> excluded.rate_ms"
	    " OR destinations.pause_after <> excluded.pause_after"
	    " RETURNING (SELECT concurrency FROM o), (SELECT rate_ms FROM o),"
	    " (SELECT pause_after FROM o)", "ttiii", &p, PGRES_TUPLES_OK,
	    "cannot set a destination's limits", err, errlen);
	if (r == NULL)
		return IH_ESTORE;
	if (PQntuples(r) == 1 && !PQgetisnull(r, 0, 0)) {
		was->concurrency = (long)pg_getint(r, 0, 0);
		was->rate_ms = pg_getint(r, 0, 1);
		was->pause_after = (long)pg_getint(r, 0, 2);
		was->changed = was->concurrency != d->concurrency ||
		    was->rate_ms != d->rate_ms ||
		    was->pause_after != d->pause_after;
	}
	PQclear(r);
	return IH_OK;
}

int
pg_dest_prune(struct store *base, const char *provider, const char *keep,
    char *err, size_t errlen)
{
	struct pg_params p;
	long n;

	keys(&p, provider, keep);
	return pg_exec_change(pg_of(base), "DELETE FROM destinations"
	    " WHERE provider = $1 AND strpos($2, ',' || account || ',') = 0",
	    "tt", &p, "cannot delete a destination", &n, err, errlen);
}

int
pg_dest_claimed(struct store *base, const char *provider,
    const char *account, int64_t now_ms, char *err, size_t errlen)
{
	struct pg_params p;
	long n;

	keys(&p, provider, account);
	pg_int(&p, now_ms);
	return pg_exec_change(pg_of(base), "UPDATE destinations"
	    " SET next_at = greatest(next_at, $3) + rate_ms"
	    " WHERE provider = $1 AND account = $2 AND rate_ms > 0", "tti",
	    &p, "cannot pace a destination", &n, err, errlen);
}

int
pg_dest_ok(struct store *base, const char *provider, const char *account,
    int *resumed, long *failures, char *err, size_t errlen)
{
	struct pgs *st = pg_of(base);
	struct pg_params p;
	PGresult *r;
	long n = 0;
	int rc, found, paused = 0;

	*resumed = 0;
	*failures = 0;
	keys(&p, provider, account);
	r = pg_exec_sql(st, "SELECT failures, (paused_at IS NOT NULL)::int"
	    " FROM destinations WHERE provider = $1 AND account = $2", "tt",
	    &p, PGRES_TUPLES_OK, "cannot read a destination", err, errlen);
	if (r == NULL)
		return IH_ESTORE;
	found = PQntuples(r) == 1;
	if (found) {
		*failures = (long)pg_getint(r, 0, 0);
		paused = pg_getint(r, 0, 1) != 0;
	}
	PQclear(r);
	/* Nothing to end: nothing is written. */
	if (!found || (*failures == 0 && !paused))
		return IH_OK;
	/* Of two processes, the one whose update found it paused resumes. */
	rc = pg_exec_change(st, "UPDATE destinations SET paused_at = NULL,"
	    " probe = NULL, failures = 0 WHERE provider = $1 AND account = $2"
	    " AND paused_at IS NOT NULL", "tt", &p,
	    "cannot resume a destination", &n, err, errlen);
	*resumed = rc == IH_OK && n > 0;
	if (rc == IH_OK && n == 0)
		rc = pg_exec_change(st, "UPDATE destinations SET failures = 0"
		    " WHERE provider = $1 AND account = $2 AND failures > 0",
		    "tt", &p, "cannot resume a destination", &n, err, errlen);
	return rc;
}

int
pg_dest_failed(struct store *base, const char *provider, const char *account,
    int64_t rowid, int64_t now_ms, long *failures, int *paused, char *err,
    size_t errlen)
{
	struct pgs *st = pg_of(base);
	struct pg_params p, q;
	PGresult *r;
	long n = 0, pause_after = 0;
	int was = 0;

	*failures = 0;
	*paused = 0;
	keys(&p, provider, account);
	r = pg_exec_sql(st, "UPDATE destinations SET failures = failures + 1"
	    " WHERE provider = $1 AND account = $2"
	    " RETURNING failures, (paused_at IS NOT NULL)::int, pause_after",
	    "tt", &p,
	    PGRES_TUPLES_OK, "cannot count a failed delivery", err, errlen);
	if (r == NULL)
		return IH_ESTORE;
	if (PQntuples(r) == 1) {
		*failures = (long)pg_getint(r, 0, 0);
		was = pg_getint(r, 0, 1) != 0;
		pause_after = (long)pg_getint(r, 0, 2);
	}
	PQclear(r);
	keys(&q, provider, account);
	/* Paused with a probe no longer pending: this event is the new one. */
	if (was) {
		pg_int(&q, rowid);
		return pg_exec_change(st, "UPDATE destinations SET probe = $3"
		    " WHERE provider = $1 AND account = $2"
		    " AND paused_at IS NOT NULL AND NOT EXISTS (SELECT 1"
		    " FROM events q WHERE q.id = probe"
		    " AND q.status IN ('received', 'processing', 'failed'))",
		    "tti", &q, "cannot name a new probe", &n, err, errlen);
	}
	if (pause_after <= 0 || *failures < pause_after)
		return IH_OK;
	pg_int(&q, now_ms);
	pg_int(&q, rowid);
	if (pg_exec_change(st, "UPDATE destinations SET paused_at = $3,"
	    " probe = $4 WHERE provider = $1 AND account = $2"
	    " AND paused_at IS NULL", "ttii", &q, "cannot pause a destination",
	    &n, err, errlen) != IH_OK)
		return IH_ESTORE;
	*paused = n > 0;
	return IH_OK;
}

int
pg_dest_state(struct store *base, const char *provider, const char *account,
    int64_t now_ms, struct store_dest_state *out, char *err, size_t errlen)
{
	struct pg_params p;
	PGresult *r;
	const char *v;

	(void)now_ms;	/* leases are the server's: PG_NOW_MS */
	memset(out, 0, sizeof(*out));
	keys(&p, provider, account);
	r = pg_exec_sql(pg_of(base), "SELECT d.account, d.concurrency,"
	    " d.rate_ms, d.next_at, d.failures, d.pause_after,"
	    " (d.paused_at IS NOT NULL)::int, coalesce(d.probe, 0),"
	    " (SELECT event_id FROM events WHERE id = d.probe"
	    "  AND status IN ('received', 'processing', 'failed')), "
	    PG_DEST_FLIGHT("") " FROM destinations d WHERE d.provider = $1"
	    " AND d.account IN (coalesce($2, 'default'), 'default')"
	    " ORDER BY d.account = 'default' LIMIT 1", "tt", &p,
	    PGRES_TUPLES_OK, "cannot read a destination", err, errlen);
	if (r == NULL)
		return IH_ESTORE;
	if (PQntuples(r) == 1) {
		out->found = 1;
		v = pg_gettext(r, 0, 0);
		snprintf(out->account, sizeof(out->account), "%s",
		    v != NULL ? v : "");
		out->concurrency = (long)pg_getint(r, 0, 1);
		out->rate_ms = pg_getint(r, 0, 2);
		out->next_at = pg_getint(r, 0, 3);
		out->failures = (long)pg_getint(r, 0, 4);
		out->pause_after = (long)pg_getint(r, 0, 5);
		out->paused = pg_getint(r, 0, 6) != 0;
		out->probe = pg_getint(r, 0, 7);
		v = pg_gettext(r, 0, 8);
		snprintf(out->probe_id, sizeof(out->probe_id), "%s",
		    v != NULL ? v : "");
		out->in_flight = pg_getint(r, 0, 9);
	}
	PQclear(r);
	return IH_OK;
}
