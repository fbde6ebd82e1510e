/* sqlite_record.c -- SQLite: recording and processing. */
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/time.h>

#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "account.h"
#include "clock.h"
#include "ih.h"
#include "sqlite_int.h"

/* A delivery of an event already recorded: counted, and its row read. */
static int
record_dup(struct sq *st, const struct event *ev, int64_t now_ms,
    struct store_result *res, char *err, size_t errlen)
{
	sqlite3_stmt *s = sq_stmt(st, &st->record_dup, err, errlen);
	const char *status;
	int rc = IH_OK, step;

	if (s == NULL)
		return IH_ESTORE;
	sqlite3_bind_text(s, 1, ev->provider, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, account_or_default(ev->account), -1,
	    SQLITE_STATIC);
	sqlite3_bind_text(s, 3, ev->event_id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 4, now_ms);
	step = sqlite3_step(s);
	if (step != SQLITE_ROW) {
		rc = sq_fail(st, step, "cannot record event", err, errlen);
		goto out;
	}
	res->rowid = sqlite3_column_int64(s, 0);
	res->duplicates = sqlite3_column_int64(s, 1);
	res->duplicate = 1;
	status = (const char *)sqlite3_column_text(s, 2);
	snprintf(res->status, sizeof(res->status), "%s",
	    status ? status : "");
	step = sqlite3_step(s);
	if (step != SQLITE_DONE)
		rc = sq_fail(st, step, "cannot record event", err, errlen);
out:
	sqlite3_reset(s);
	return rc;
}

/*
 * Records ev (store_record()), and with owner set the claim of a new
 * event in the same statement: inserting it as processing avoids an
 * UPDATE of the row.  A new event's payload goes to its own table.  The
 * insert does nothing when the key is there (no RETURNING: see
 * sqlite_stmt.c); the row id of a new one is the connection's last.
 */
int
sq_record(struct store *base, const struct event *ev, int64_t now_ms,
    const char *owner, int64_t lease_until, struct store_result *res,
    char *err, size_t errlen)
{
	struct sq *st = sq_of(base);
	sqlite3_stmt *s = sq_stmt(st, &st->record, err, errlen);
	const char *status;
	int rc, step;

	memset(res, 0, sizeof(*res));
	/*
	 * Only the last record's row can be the one inserted done: a row
	 * undone to its savepoint may give its id to the next one.
	 */
	st->done_row = 0;
	st->ndone_many = 0;
	if (s == NULL)
		return IH_ESTORE;
	sqlite3_bind_text(s, 1, ev->provider, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, ev->event_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 3, ev->event_type, -1, SQLITE_STATIC);
	if (ev->order_key != NULL)
		sqlite3_bind_text(s, 4, ev->order_key, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(s, 4);
	sqlite3_bind_text(s, 6, ev->headers ? ev->headers : "", -1,
	    SQLITE_STATIC);
	sqlite3_bind_int64(s, 7, now_ms);
	if (ev->status != NULL)
		sqlite3_bind_text(s, 8, ev->status, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(s, 8);
	if (ev->subtype != NULL)
		sqlite3_bind_text(s, 9, ev->subtype, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(s, 9);
	if (ev->fingerprint != NULL)
		sqlite3_bind_text(s, 10, ev->fingerprint, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(s, 10);
	if (owner != NULL) {
		sqlite3_bind_text(s, 11, owner, -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 12, lease_until);
	} else {
		sqlite3_bind_null(s, 11);
		sqlite3_bind_null(s, 12);
	}
	if (ev->api_version != NULL)
		sqlite3_bind_text(s, 13, ev->api_version, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(s, 13);
	sqlite3_bind_int(s, 14, ev->needs_fetch != 0);
	sqlite3_bind_text(s, 15, account_or_default(ev->account), -1,
	    SQLITE_STATIC);
	sq_bind_text(s, 16, ev->source_account);
	/* Why a held event is held (struct event's held_why), or NULL. */
	sq_bind_text(s, 17, ev->held_why);
	/* Inserted done, its switch next in this transaction. */
	sqlite3_bind_int(s, 18, base->as_done && owner != NULL);

	st->fresh_claim = 0;
	step = sqlite3_step(s);
	if (step != SQLITE_DONE) {
		rc = sq_fail(st, step, "cannot record event", err, errlen);
		goto out;
	}
	if (sqlite3_changes(st->db) == 0) {
		/* The key is there: a duplicate, counted on its row. */
		rc = record_dup(st, ev, now_ms, res, err, errlen);
		goto out;
	}
	/* The row the insert made, as the statement wrote it. */
	res->rowid = sqlite3_last_insert_rowid(st->db);
	status = owner != NULL ? "processing" : ev->status != NULL ?
	    ev->status : "received";
	if (base->as_done && owner != NULL) {
		status = "done";
		st->done_row = res->rowid;
	}
	snprintf(res->status, sizeof(res->status), "%s", status);
	if (owner != NULL)
		st->fresh_claim = res->rowid;
	rc = sq_payload_put(st, ev, res->rowid, err, errlen);
out:
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	return rc;
}

/*
 * The events of a batch recorded one after the other in the open
 * transaction, without a savepoint each (two statements per event, about
 * 7,000 instructions: make bench-pages): any failure fails the
 * transaction, which the caller rolls back to record the batch again one
 * event at a time (batch.c).  Each new event claimed (owners[i] set) gets
 * its first attempt; with done[i] set it is inserted done, as
 * store_record_done() would, and kept in done_many for sq_complete().
 */
int
sq_record_many(struct store *base, const struct event *const *evs,
    size_t n, int64_t now_ms, const char *const *owners, const int *done,
    int64_t lease_until, struct store_result *res, char *err, size_t errlen)
{
	struct sq *st = sq_of(base);
	int64_t rows[SQ_MANY_MAX], seq;
	size_t i, nrows = 0;
	int as_done = base->as_done, rc = IH_OK;

	if (n > SQ_MANY_MAX) {
		snprintf(err, errlen, "cannot record %lu events at once",
		    (unsigned long)n);
		return IH_EINVAL;
	}
	for (i = 0; rc == IH_OK && i < n; i++) {
		base->as_done = done != NULL && done[i];
		rc = sq_record(base, evs[i], now_ms, owners[i], lease_until,
		    &res[i], err, errlen);
		if (rc == IH_OK && st->done_row > 0)
			rows[nrows++] = st->done_row;
		if (rc == IH_OK && owners[i] != NULL && !res[i].duplicate)
			rc = sq_attempt_start(base, res[i].rowid, now_ms, &seq,
			    err, errlen);
	}
	base->as_done = as_done;
	st->done_row = 0;
	st->ndone_many = rc == IH_OK ? nrows : 0;
	memcpy(st->done_many, rows, nrows * sizeof(rows[0]));
	return rc;
}

/* Was rowid inserted done by this transaction's last record(s)? */
static int
inserted_done(const struct sq *st, int64_t rowid)
{
	size_t i;

	if (rowid <= 0)
		return 0;
	if (rowid == st->done_row)
		return 1;
	for (i = 0; i < st->ndone_many; i++)
		if (st->done_many[i] == rowid)
			return 1;
	return 0;
}

/* Opens the attempt row of a claim; *seq is its number. */
int
sq_attempt_start(struct store *base, int64_t rowid, int64_t now_ms,
    int64_t *seq, char *err, size_t errlen)
{
	struct sq *st = sq_of(base);
	sqlite3_stmt *s;
	int step;

	if (rowid > 0 && rowid == st->fresh_claim) {
		/*
		 * Inserted and claimed by the record just before, in this
		 * transaction: it has no attempt yet, so this is the first.
		 */
		st->fresh_claim = 0;
		s = sq_stmt(st, &st->attempt_first, err, errlen);
		if (s == NULL)
			return IH_ESTORE;
		sqlite3_bind_int64(s, 1, rowid);
		sqlite3_bind_int64(s, 2, now_ms);
		sqlite3_bind_int(s, 3, rowid == st->done_row);
		*seq = 1;
		return sq_step_done(st, s, "cannot record attempt", err,
		    errlen);
	}
	st->fresh_claim = 0;
	s = sq_stmt(st, &st->attempt_start, err, errlen);
	if (s == NULL)
		return IH_ESTORE;
	sqlite3_bind_int64(s, 1, rowid);
	sqlite3_bind_int64(s, 2, now_ms);
	step = sqlite3_step(s);
	if (step == SQLITE_ROW) {
		*seq = sqlite3_column_int64(s, 0);
		step = sqlite3_step(s);
	}
	sqlite3_reset(s);
	if (step != SQLITE_DONE)
		return sq_fail(st, step, "cannot record attempt", err, errlen);
	return IH_OK;
}

int
sq_replay_of(struct store *base, const struct event *ev,
    const char *same_action, int *found, struct store_first *first,
    char *err, size_t errlen)
{
	struct sq *st = sq_of(base);
	sqlite3_stmt *s = sq_stmt(st, &st->replay, err, errlen);
	const char *v;
	int rc = IH_OK, step;

	*found = 0;
	if (s == NULL)
		return IH_ESTORE;
	sqlite3_bind_text(s, 1, ev->provider, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, ev->fingerprint, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 3, ev->event_id, -1, SQLITE_STATIC);
	if (same_action != NULL)
		sqlite3_bind_text(s, 4, same_action, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(s, 4);
	sqlite3_bind_text(s, 5, account_or_default(ev->account), -1,
	    SQLITE_STATIC);
	step = sqlite3_step(s);
	if (step == SQLITE_ROW) {
		*found = 1;
		v = (const char *)sqlite3_column_text(s, 0);
		snprintf(first->event_id, sizeof(first->event_id), "%s",
		    v != NULL ? v : "");
		v = (const char *)sqlite3_column_text(s, 1);
		snprintf(first->event_type, sizeof(first->event_type), "%s",
		    v != NULL ? v : "");
		first->same_action = sqlite3_column_int(s, 2) != 0;
		first->held = sqlite3_column_int64(s, 3);
	} else if (step != SQLITE_DONE)
		rc = sq_fail(st, step, "cannot look up the fingerprint", err,
		    errlen);
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	return rc;
}

static int	close_stale_attempts(struct sq *, int64_t, int64_t, char *,
		    size_t);

int
sq_claim(struct store *base, const char *provider, int64_t rowid,
    const char *owner, int64_t now_ms, int64_t lease_ms,
    struct store_job *job, int *found, char *err, size_t errlen)
{
	struct sq *st = sq_of(base);
	sqlite3_stmt *s = sq_stmt(st, &st->claim, err, errlen);
	int64_t len;
	int rc, step;

	if (s == NULL)
		return IH_ESTORE;
	if (provider != NULL)
		sqlite3_bind_text(s, 1, provider, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(s, 1);
	sqlite3_bind_int64(s, 2, rowid);
	sqlite3_bind_text(s, 3, owner, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 4, now_ms);
	sqlite3_bind_int64(s, 5, now_ms + lease_ms);
	sqlite3_bind_int(s, 6, base->fetch);
	step = sqlite3_step(s);
	if (step == SQLITE_DONE) {
		rc = IH_OK;
		goto out;
	}
	if (step != SQLITE_ROW) {
		rc = sq_fail(st, step, "cannot claim event", err, errlen);
		goto out;
	}
	job->ev.rowid = sqlite3_column_int64(s, 0);
	job->ev.attempt = (long)sqlite3_column_int64(s, 6);
	job->ev.received_at = sqlite3_column_int64(s, 7);
	job->ev.needs_fetch = sqlite3_column_int(s, 8) != 0;
	rc = store_job_set(job, (const char *)sqlite3_column_text(s, 1),
	    (const char *)sqlite3_column_text(s, 2),
	    (const char *)sqlite3_column_text(s, 3),
	    (const char *)sqlite3_column_text(s, 4));
	if (rc == IH_OK)
		rc = store_job_account(job,
		    (const char *)sqlite3_column_text(s, 9));
	if (rc != IH_OK)
		goto out;
	/* The payload's length, or -1 when it was purged. */
	len = sqlite3_column_type(s, 5) == SQLITE_NULL ? -1 :
	    sqlite3_column_int64(s, 5);
	step = sqlite3_step(s);
	if (step != SQLITE_DONE) {
		rc = sq_fail(st, step, "cannot claim event", err, errlen);
		goto out;
	}
	sqlite3_reset(s);
	rc = base->bare ? IH_OK : sq_payload_get(st, job, len, err, errlen);
	if (rc != IH_OK)
		goto out;
	if (job->ev.attempt > 1) {
		rc = close_stale_attempts(st, job->ev.rowid, now_ms, err,
		    errlen);
		if (rc != IH_OK)
			goto out;
	}
	rc = sq_attempt_start(base, job->ev.rowid, now_ms, &job->seq, err,
	    errlen);
	if (rc != IH_OK)
		goto out;
	*found = 1;
out:
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	return rc;
}

int
sq_effect(struct store *base, const struct store_job *job, const char *kind,
    int64_t now_ms, char *err, size_t errlen)
{
	struct sq *st = sq_of(base);
	sqlite3_stmt *s = sq_stmt(st, &st->effect, err, errlen);

	if (s == NULL)
		return IH_ESTORE;
	sqlite3_bind_int64(s, 1, job->ev.rowid);
	sqlite3_bind_text(s, 2, kind, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 3, now_ms);
	return sq_step_done(st, s, "cannot record effect", err, errlen);
}

/* Closes the job's attempt row with its outcome. */
static int
attempt_end(struct sq *st, const struct store_job *job, int64_t now_ms,
    const char *outcome, const char *error, char *err, size_t errlen)
{
	sqlite3_stmt *s = sq_stmt(st, &st->attempt_end, err, errlen);

	if (s == NULL)
		return IH_ESTORE;
	sqlite3_bind_int64(s, 1, job->ev.rowid);
	sqlite3_bind_int64(s, 2, job->seq);
	sqlite3_bind_int64(s, 3, now_ms);
	sqlite3_bind_text(s, 4, outcome, -1, SQLITE_STATIC);
	if (error != NULL)
		sqlite3_bind_text(s, 5, error, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(s, 5);
	return sq_step_done(st, s, "cannot record attempt", err, errlen);
}

/*
 * A statement on a leased event that changed no row means the lease was
 * lost (it ran out and another process took the event over): IH_ENOTFOUND
 * with that in err; IH_OK when it changed the one row.
 */
static int
lease_held(int changes, const struct store_job *job, char *err,
    size_t errlen)
{
	if (changes == 1)
		return IH_OK;
	snprintf(err, errlen, "lease on event %lld was lost",
	    (long long)job->ev.rowid);
	return IH_ENOTFOUND;
}

/*
 * Is job's event, which store_record_done() inserted done in this
 * transaction, still so?  IH_OK, else as lease_held().
 */
static int
done_held(struct sq *st, const struct store_job *job, char *err,
    size_t errlen)
{
	sqlite3_stmt *s = sq_stmt(st, &st->done_check, err, errlen);
	int step;

	if (s == NULL)
		return IH_ESTORE;
	sqlite3_bind_int64(s, 1, job->ev.rowid);
	step = sqlite3_step(s);
	sqlite3_reset(s);
	if (step != SQLITE_ROW && step != SQLITE_DONE)
		return sq_fail(st, step, "cannot complete event", err, errlen);
	return lease_held(step == SQLITE_ROW, job, err, errlen);
}

/*
 * The failed switch of an event inserted done: its row to failed (or
 * dead), as the failed statement would have moved it from processing.
 * Rare, so prepared for the call.
 */
static int
undone(struct sq *st, const struct store_job *job, const char *error,
    int64_t next_ms, int dead, char *err, size_t errlen)
{
	sqlite3_stmt *s = NULL;
	int rc;

	if (sqlite3_prepare_v2(st->db, "UPDATE events SET status = CASE"
	    " WHEN ?3 THEN 'dead' ELSE 'failed' END, next_attempt_at = ?2,"
	    " last_error = ?4, done_at = NULL"
	    " WHERE id = ?1 AND status = 'done' AND lease_owner IS NULL", -1,
	    &s, NULL) != SQLITE_OK) {
		rc = sq_fail(st, sqlite3_errcode(st->db),
		    "cannot mark event failed", err, errlen);
		goto out;
	}
	sqlite3_bind_int64(s, 1, job->ev.rowid);
	sqlite3_bind_int64(s, 2, next_ms);
	sqlite3_bind_int(s, 3, dead != 0);
	sqlite3_bind_text(s, 4, error, -1, SQLITE_STATIC);
	rc = sq_step_done(st, s, "cannot mark event failed", err, errlen);
	if (rc == IH_OK)
		rc = lease_held(sqlite3_changes(st->db), job, err, errlen);
out:
	sqlite3_finalize(s);
	return rc;
}

int
sq_complete(struct store *base, const struct store_job *job,
    const char *owner, int64_t now_ms, char *err, size_t errlen)
{
	struct sq *st = sq_of(base);
	sqlite3_stmt *s;
	int rc;

	/*
	 * Inserted done with its attempt closed: nothing to write, and the
	 * update (which would match no row) not even compiled, which a
	 * plain CGI process would do for this one use (bench-cgi).
	 */
	if (inserted_done(st, job->ev.rowid)) {
		rc = done_held(st, job, err, errlen);
		if (rc == IH_OK && job->done_note != NULL)
			rc = attempt_end(st, job, now_ms, "done",
			    job->done_note, err, errlen);
		return rc;
	}
	s = sq_stmt(st, &st->complete, err, errlen);
	if (s == NULL)
		return IH_ESTORE;
	sqlite3_bind_int64(s, 1, job->ev.rowid);
	sqlite3_bind_text(s, 2, owner, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 3, now_ms);
	rc = sq_step_done(st, s, "cannot complete event", err, errlen);
	if (rc == IH_OK)
		rc = lease_held(sqlite3_changes(st->db), job, err, errlen);
	if (rc == IH_OK)
		rc = attempt_end(st, job, now_ms, "done", job->done_note,
		    err, errlen);
	return rc;
}

int
sq_fail_job(struct store *base, const struct store_job *job,
    const char *owner, const char *error, int64_t next_ms, int dead,
    int64_t now_ms, char *err, size_t errlen)
{
	struct sq *st = sq_of(base);
	sqlite3_stmt *s = sq_stmt(st, &st->failed, err, errlen);
	int rc;

	if (s == NULL)
		return IH_ESTORE;
	sqlite3_bind_int64(s, 1, job->ev.rowid);
	sqlite3_bind_text(s, 2, owner, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 3, error, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 4, next_ms);
	sqlite3_bind_int(s, 5, dead != 0);
	rc = sq_step_done(st, s, "cannot mark event failed", err, errlen);
	if (rc == IH_OK && sqlite3_changes(st->db) == 0 &&
	    inserted_done(st, job->ev.rowid))
		/* Inserted done, its switch failed: failed after all. */
		rc = undone(st, job, error, next_ms, dead, err, errlen);
	else if (rc == IH_OK)
		rc = lease_held(sqlite3_changes(st->db), job, err, errlen);
	if (rc == IH_OK)
		rc = attempt_end(st, job, now_ms, dead ? "dead" : "failed",
		    error, err, errlen);
	return rc;
}

/*
 * Lease upkeep and lost leases.  These statements run once per action or
 * per lost lease, not per request, so each is prepared per call.
 */

/*
 * Runs sql with ?1 rowid, ?2 text, ?3 and ?4 numbers (a parameter the
 * statement does not use is simply not bound); *changes gets the count.
 */
static int
run_job_sql(struct sq *st, const char *sql, int64_t rowid,
    const char *text, int64_t num, int64_t num2, int *changes,
    const char *what, char *err, size_t errlen)
{
	sqlite3_stmt *s = NULL;
	int rc;

	*changes = 0;
	rc = sqlite3_prepare_v2(st->db, sql, -1, &s, NULL);
	if (rc != SQLITE_OK) {
		rc = sq_fail(st, rc, what, err, errlen);
		goto out;
	}
	sqlite3_bind_int64(s, 1, rowid);
	if (text != NULL)
		sqlite3_bind_text(s, 2, text, -1, SQLITE_STATIC);
	if (sqlite3_bind_parameter_count(s) >= 3)
		sqlite3_bind_int64(s, 3, num);
	if (sqlite3_bind_parameter_count(s) >= 4)
		sqlite3_bind_int64(s, 4, num2);
	rc = sqlite3_step(s);
	if (rc != SQLITE_DONE) {
		rc = sq_fail(st, rc, what, err, errlen);
		goto out;
	}
	*changes = sqlite3_changes(st->db);
	rc = IH_OK;
out:
	sqlite3_finalize(s);
	return rc;
}

/*
 * A claim that takes over an expired lease closes the attempt rows its
 * earlier holders left open, so that none stays "running" for ever.
 */
static int
close_stale_attempts(struct sq *st, int64_t rowid, int64_t now_ms,
    char *err, size_t errlen)
{
	int n;

	return run_job_sql(st, "UPDATE attempts SET finished_at = ?3,"
	    " outcome = 'lease_expired', error = ?2"
	    " WHERE event = ?1 AND finished_at IS NULL", rowid,
	    "the lease expired before the attempt ended", now_ms, 0, &n,
	    "cannot close stale attempts", err, errlen);
}

int
sq_renew(struct store *base, const struct store_job *job,
    const char *owner, int64_t lease_ms, char *err, size_t errlen)
{
	struct sq *st = sq_of(base);
	int n = 0, rc;

	/* The new lease runs from now, once the write lock is held. */
	rc = run_job_sql(st, "UPDATE events SET lease_until = ?3"
	    " WHERE id = ?1 AND lease_owner = ?2 AND status = 'processing'",
	    job->ev.rowid, owner, clock_wall_ms() + lease_ms, 0, &n,
	    "cannot renew lease", err, errlen);
	if (rc == IH_OK)
		rc = lease_held(n, job, err, errlen);
	return rc;
}

int
sq_attempt_lost(struct store *base, const struct store_job *job,
    int64_t now_ms, char *err, size_t errlen)
{
	struct sq *st = sq_of(base);
	int n, rc;

	rc = run_job_sql(st, "UPDATE attempts SET finished_at = ?3,"
	    " outcome = 'lease_lost', error = ?2"
	    " WHERE event = ?1 AND attempt = ?4 AND finished_at IS NULL",
	    job->ev.rowid, "another process took the event over", now_ms,
	    job->seq, &n,
	    "cannot close attempt", err, errlen);
	return rc;
}

int
sq_forget(struct store *base, const struct store_job *job,
    const char *owner, char *err, size_t errlen)
{
	struct sq *st = sq_of(base);
	int n = 0, rc;

	/* Its attempts and effects go with it (ON DELETE CASCADE). */
	rc = run_job_sql(st, "DELETE FROM events WHERE id = ?1"
	    " AND lease_owner = ?2 AND status = 'processing'",
	    job->ev.rowid, owner, 0, 0, &n, "cannot forget event", err, errlen);
	if (rc == IH_OK)
		rc = lease_held(n, job, err, errlen);
	return rc;
}

int
sq_due(struct store *base, const char *provider, int64_t now_ms, int *due,
    char *err, size_t errlen)
{
	struct sq *st = sq_of(base);
	sqlite3_stmt *s = sq_stmt(st, &st->due_any, err, errlen);
	int step;

	if (s == NULL)
		return IH_ESTORE;
	step = sqlite3_step(s);
	sqlite3_reset(s);
	if (step != SQLITE_ROW && step != SQLITE_DONE)
		return sq_fail(st, step, "cannot look for due events", err,
		    errlen);
	*due = 0;
	if (step == SQLITE_DONE)
		return IH_OK;
	s = sq_stmt(st, &st->due, err, errlen);
	if (s == NULL)
		return IH_ESTORE;
	if (provider != NULL)
		sqlite3_bind_text(s, 1, provider, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(s, 1);
	sqlite3_bind_int64(s, 2, 0);
	sqlite3_bind_int64(s, 4, now_ms);
	sqlite3_bind_int(s, 6, base->fetch);
	step = sqlite3_step(s);
	*due = step == SQLITE_ROW;
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	if (step != SQLITE_ROW && step != SQLITE_DONE)
		return sq_fail(st, step, "cannot look for due events", err,
		    errlen);
	return IH_OK;
}

