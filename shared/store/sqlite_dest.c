/*
 * sqlite_dest.c -- SQLite: the forwarding destinations' shared state
 * (store_dest.h).  The writes run inside the caller's transaction
 * (BEGIN IMMEDIATE: one writer at a time, so a read then a write is one
 * step for every process).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <sqlite3.h>

#include "ih.h"
#include "sqlite_int.h"

/* Prepares sql, binds provider and account as ?1 and ?2. */
static int
prep(struct sq *st, const char *sql, const char *provider,
    const char *account, sqlite3_stmt **s, char *err, size_t errlen)
{
	int rc;

	rc = sq_prepare(st, sql, s, err, errlen);
	if (rc != IH_OK)
		return rc;
	sqlite3_bind_text(*s, 1, provider, -1, SQLITE_STATIC);
	sq_bind_text(*s, 2, account);
	return IH_OK;
}

/* Runs a prepared write and finalizes it; *n its changes (n may be NULL). */
static int
run(struct sq *st, sqlite3_stmt *s, const char *what, long *n, char *err,
    size_t errlen)
{
	int rc;

	rc = sq_step_done(st, s, what, err, errlen);
	if (rc == IH_OK && n != NULL)
		*n = (long)sqlite3_changes(st->db);
	sqlite3_finalize(s);
	return rc;
}

/* Runs a write with provider, account and v as ?1, ?2 and ?3. */
static int
run_with(struct sq *st, const char *sql, const char *provider,
    const char *account, int64_t v, const char *what, char *err,
    size_t errlen)
{
	sqlite3_stmt *s = NULL;
	int rc;

	rc = prep(st, sql, provider, account, &s, err, errlen);
	if (rc != IH_OK)
		return rc;
	sqlite3_bind_int64(s, 3, v);
	return run(st, s, what, NULL, err, errlen);
}

/*
 * Reads a destination's failures, whether it is paused and after how
 * many failures it pauses (0 each if none); pause_after may be NULL.
 */
static int
read_row(struct sq *st, const char *provider, const char *account,
    const char *what, long *failures, int *paused, long *pause_after,
    char *err, size_t errlen)
{
	sqlite3_stmt *s = NULL;
	int rc;

	*failures = 0;
	*paused = 0;
	if (pause_after != NULL)
		*pause_after = 0;
	rc = prep(st, "SELECT failures, paused_at IS NOT NULL, pause_after"
	    " FROM destinations WHERE provider = ?1 AND account = ?2",
	    provider, account, &s, err, errlen);
	if (rc != IH_OK)
		return rc;
	if (sq_row(st, s, what, &rc, err, errlen)) {
		*failures = (long)sqlite3_column_int64(s, 0);
		*paused = sqlite3_column_int(s, 1);
		if (pause_after != NULL)
			*pause_after = (long)sqlite3_column_int64(s, 2);
	}
	sqlite3_finalize(s);
	return rc;
}

int
sq_dest_put(struct store *base, const char *provider,
    const struct store_dest *d, struct store_dest_was *was, char *err,
    size_t errlen)
{
	struct sq *st = sq_of(base);
	sqlite3_stmt *s = NULL;
	int rc, found;

	memset(was, 0, sizeof(*was));
	/* Inside BEGIN IMMEDIATE: no writer between the read and the write. */
	rc = prep(st, "SELECT concurrency, rate_ms, pause_after FROM"
	    " destinations WHERE provider = ?1 AND account = ?2", provider,
	    d->account, &s, err, errlen);
	if (rc != IH_OK)
		return rc;
	found = sq_row(st, s, "cannot read a destination's limits", &rc, err,
	    errlen);
	if (found) {
		was->concurrency = (long)sqlite3_column_int64(s, 0);
		was->rate_ms = sqlite3_column_int64(s, 1);
		was->pause_after = (long)sqlite3_column_int64(s, 2);
	}
	sqlite3_finalize(s);
	/* A row as it should be is left untouched: nothing is written. */
	if (rc != IH_OK || (found && was->concurrency == d->concurrency &&
	    was->rate_ms == d->rate_ms && was->pause_after == d->pause_after))
		return rc;
	was->changed = found;
	rc = prep(st, "INSERT INTO destinations (provider, account,"
	    " concurrency, rate_ms, pause_after) VALUES (?1, ?2, ?3, ?4, ?5)"
	    " ON CONFLICT (provider, account) DO UPDATE SET"
	    " concurrency = excluded.concurrency, rate_ms = excluded.rate_ms,"
	    " pause_after = excluded.pause_after"
	    " WHERE concurrency <> excluded.concurrency"
	    " OR rate_ms <> excluded.rate_ms"
	    " OR pause_after <> excluded.pause_after", provider, d->account,
	    &s, err, errlen);
	if (rc != IH_OK)
		return rc;
	sqlite3_bind_int64(s, 3, d->concurrency);
	sqlite3_bind_int64(s, 4, d->rate_ms);
	sqlite3_bind_int64(s, 5, d->pause_after);
	return run(st, s, "cannot set a destination's limits", NULL, err,
	    errlen);
}

int
sq_dest_prune(struct store *base, const char *provider, const char *keep,
    char *err, size_t errlen)
{
	struct sq *st = sq_of(base);
	sqlite3_stmt *s = NULL;
	int rc, found;

	/* A read first: a provider without stale rows writes nothing. */
	rc = prep(st, "SELECT 1 FROM destinations WHERE provider = ?1"
	    " AND instr(?2, ',' || account || ',') = 0 LIMIT 1", provider,
	    keep, &s, err, errlen);
	if (rc != IH_OK)
		return rc;
	found = sq_row(st, s, "cannot read the destinations", &rc, err,
	    errlen);
	sqlite3_finalize(s);
	if (rc != IH_OK || !found)
		return rc;
	rc = prep(st, "DELETE FROM destinations WHERE provider = ?1"
	    " AND instr(?2, ',' || account || ',') = 0", provider, keep, &s,
	    err, errlen);
	if (rc != IH_OK)
		return rc;
	return run(st, s, "cannot delete a destination", NULL, err, errlen);
}

int
sq_dest_claimed(struct store *base, const char *provider,
    const char *account, int64_t now_ms, char *err, size_t errlen)
{
	return run_with(sq_of(base), "UPDATE destinations SET next_at ="
	    " max(next_at, ?3) + rate_ms WHERE provider = ?1 AND account = ?2"
	    " AND rate_ms > 0", provider, account, now_ms,
	    "cannot pace a destination", err, errlen);
}

int
sq_dest_ok(struct store *base, const char *provider, const char *account,
    int *resumed, long *failures, char *err, size_t errlen)
{
	struct sq *st = sq_of(base);
	sqlite3_stmt *s = NULL;
	int rc, paused = 0;
	long n = 0;

	*resumed = 0;
	rc = read_row(st, provider, account, "cannot read a destination",
	    failures, &paused, NULL, err, errlen);
	if (rc != IH_OK || (*failures == 0 && !paused))
		return rc;
	rc = prep(st, "UPDATE destinations SET failures = 0, paused_at = NULL,"
	    " probe = NULL WHERE provider = ?1 AND account = ?2", provider,
	    account, &s, err, errlen);
	if (rc == IH_OK)
		rc = run(st, s, "cannot resume a destination", &n, err,
		    errlen);
	*resumed = rc == IH_OK && paused && n > 0;
	return rc;
}

/*
 * Paused, with a probe that is no longer pending (dead, or done by a
 * replay): the event at rowid, which has just failed, is the new one.
 */
static int
new_probe(struct sq *st, const char *provider, const char *account,
    int64_t rowid, char *err, size_t errlen)
{
	return run_with(st, "UPDATE destinations SET probe = ?3"
	    " WHERE provider = ?1 AND account = ?2 AND paused_at IS NOT NULL"
	    " AND NOT EXISTS (SELECT 1 FROM events q WHERE q.id = probe"
	    " AND q.status IN ('received', 'processing', 'failed'))",
	    provider, account, rowid, "cannot name a new probe", err, errlen);
}

int
sq_dest_failed(struct store *base, const char *provider, const char *account,
    int64_t rowid, int64_t now_ms, long *failures, int *paused, char *err,
    size_t errlen)
{
	struct sq *st = sq_of(base);
	sqlite3_stmt *s = NULL;
	int rc, was = 0;
	long n = 0, pause_after = 0;

	*failures = 0;
	*paused = 0;
	rc = prep(st, "UPDATE destinations SET failures = failures + 1"
	    " WHERE provider = ?1 AND account = ?2", provider, account, &s,
	    err, errlen);
	if (rc == IH_OK)
		rc = run(st, s, "cannot count a failed delivery", NULL, err,
		    errlen);
	/* Read back in the same transaction: no other writer between. */
	if (rc == IH_OK)
		rc = read_row(st, provider, account,
		    "cannot count a failed delivery", failures, &was,
		    &pause_after, err, errlen);
	if (rc == IH_OK && was)
		return new_probe(st, provider, account, rowid, err, errlen);
	if (rc != IH_OK || pause_after <= 0 || *failures < pause_after)
		return rc;
	rc = prep(st, "UPDATE destinations SET paused_at = ?3, probe = ?4"
	    " WHERE provider = ?1 AND account = ?2 AND paused_at IS NULL",
	    provider, account, &s, err, errlen);
	if (rc != IH_OK)
		return rc;
	sqlite3_bind_int64(s, 3, now_ms);
	sqlite3_bind_int64(s, 4, rowid);
	rc = run(st, s, "cannot pause a destination", &n, err, errlen);
	*paused = rc == IH_OK && n > 0;
	return rc;
}

int
sq_dest_state(struct store *base, const char *provider, const char *account,
    int64_t now_ms, struct store_dest_state *out, char *err, size_t errlen)
{
	struct sq *st = sq_of(base);
	sqlite3_stmt *s = NULL;
	const unsigned char *v;
	int rc;

	memset(out, 0, sizeof(*out));
	/* The account's own row first, else the provider's. */
	rc = prep(st, "SELECT d.account, d.concurrency, d.rate_ms, d.next_at,"
	    " d.failures, d.pause_after, d.paused_at IS NOT NULL,"
	    " coalesce(d.probe, 0),"
	    " (SELECT event_id FROM events WHERE id = d.probe"
	    "  AND status IN ('received', 'processing', 'failed')), "
	    SQ_DEST_FLIGHT("?3") " FROM destinations d WHERE d.provider = ?1"
	    " AND d.account IN (coalesce(?2, 'default'), 'default')"
	    " ORDER BY d.account = 'default' LIMIT 1", provider, account, &s,
	    err, errlen);
	if (rc != IH_OK)
		return rc;
	sqlite3_bind_int64(s, 3, now_ms);
	if (sq_row(st, s, "cannot read a destination", &rc, err, errlen)) {
		out->found = 1;
		v = sqlite3_column_text(s, 0);
		snprintf(out->account, sizeof(out->account), "%s",
		    v != NULL ? (const char *)v : "");
		out->concurrency = (long)sqlite3_column_int64(s, 1);
		out->rate_ms = sqlite3_column_int64(s, 2);
		out->next_at = sqlite3_column_int64(s, 3);
		out->failures = (long)sqlite3_column_int64(s, 4);
		out->pause_after = (long)sqlite3_column_int64(s, 5);
		out->paused = sqlite3_column_int(s, 6);
		out->probe = sqlite3_column_int64(s, 7);
		v = sqlite3_column_text(s, 8);
		snprintf(out->probe_id, sizeof(out->probe_id), "%s",
		    v != NULL ? (const char *)v : "");
		out->in_flight = sqlite3_column_int64(s, 9);
	}
	sqlite3_finalize(s);
	return rc;
}
