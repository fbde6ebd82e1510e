/* pg_record.c -- PostgreSQL: recording and processing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "account.h"
#include "ih.h"
#include "pg_int.h"

/* PG_RECORD's parameters for ev; done: inserted done (pg_int.h). */
static void
record_params(struct pg_params *p, const struct event *ev, int64_t now_ms,
    const char *owner, int64_t lease_until, int done)
{
	memset(p, 0, sizeof(*p));
	pg_text(p, ev->provider);
	pg_text(p, ev->event_id);
	pg_text(p, ev->event_type);
	pg_text(p, ev->order_key);
	/* A large payload is written in slices: pg_payload_write(). */
	if (ev->payload_len > PG_PAYLOAD_STREAM)
		pg_text(p, NULL);
	else
		pg_bytes(p, ev->payload, ev->payload_len);
	pg_text(p, ev->headers != NULL ? ev->headers : "");
	pg_int(p, now_ms);
	pg_text(p, ev->status);
	pg_text(p, ev->subtype);
	pg_text(p, ev->fingerprint);
	pg_text(p, owner);
	if (owner != NULL)
		pg_int(p, lease_until - now_ms);
	else
		pg_text(p, NULL);
	pg_text(p, ev->api_version);
	pg_int(p, ev->needs_fetch != 0);
	pg_text(p, account_or_default(ev->account));
	pg_text(p, ev->source_account);
	/* Why a held event is held (struct event's held_why), or NULL. */
	pg_text(p, ev->held_why);
	pg_int(p, done && owner != NULL);
}

/* Reads PG_RECORD's answer r into *res; frees r. */
static int
record_result(PGresult *r, struct store_result *res, char *err,
    size_t errlen)
{
	if (PQntuples(r) != 1) {
		PQclear(r);
		snprintf(err, errlen, "cannot record event: no row returned");
		return IH_ESTORE;
	}
	res->rowid = pg_getint(r, 0, 0);
	res->duplicates = pg_getint(r, 0, 1);
	res->duplicate = res->duplicates > 0;
	snprintf(res->status, sizeof(res->status), "%s", PQgetvalue(r, 0, 2));
	PQclear(r);
	return IH_OK;
}

/*
 * Notes that this transaction inserted rowid, claimed (done: inserted
 * done), its first attempt with it (PG_RECORD): see pg_complete.
 */
static int
own_add(struct pgs *st, int64_t rowid, int done, char *err, size_t errlen)
{
	if (st->nown < PG_OWN_MAX) {
		st->own_done[st->nown] = (char)done;
		st->own[st->nown++] = rowid;
	} else if (done) {
		/* Nowhere to note it: pg_complete would look for a lease. */
		snprintf(err, errlen, "cannot record more than %d events in "
		    "one transaction", PG_OWN_MAX);
		return IH_ESTORE;
	}
	return IH_OK;
}

/*
 * 1 when this transaction inserted and claimed rowid (with take, taken
 * off), and then *done says whether it was inserted done.
 */
static int
own_take(struct pgs *st, int64_t rowid, int take, int *done)
{
	int i;

	for (i = 0; i < st->nown; i++)
		if (st->own[i] == rowid) {
			*done = st->own_done[i];
			if (!take)
				return 1;
			st->nown--;
			st->own[i] = st->own[st->nown];
			st->own_done[i] = st->own_done[st->nown];
			return 1;
		}
	*done = 0;
	return 0;
}

/*
 * Records ev, and with owner set claims the new event in the same insert
 * (status processing, attempt 1): the lease runs for lease_until - now_ms
 * on the server's clock (PG_NOW_MS), not this host's.
 */
int
pg_record(struct store *base, const struct event *ev, int64_t now_ms,
    const char *owner, int64_t lease_until, struct store_result *res,
    char *err, size_t errlen)
{
	struct pgs *st = pg_of(base);
	struct pg_params p;
	PGresult *r;
	int rc;

	memset(res, 0, sizeof(*res));
	record_params(&p, ev, now_ms, owner, lease_until, base->as_done);
	r = pg_exec_stmt(st, PG_RECORD, &p, PGRES_TUPLES_OK,
	    "cannot record event", err, errlen);
	if (r == NULL)
		return IH_ESTORE;
	rc = record_result(r, res, err, errlen);
	if (rc == IH_OK && !res->duplicate &&
	    ev->payload_len > PG_PAYLOAD_STREAM)
		rc = pg_payload_write(st, res->rowid, ev->payload,
		    ev->payload_len, err, errlen);
	st->fresh_claim = rc == IH_OK && owner != NULL && !res->duplicate ?
	    res->rowid : 0;
	st->fresh_done = base->as_done ? st->fresh_claim : 0;
	return rc;
}

/*
 * The inserts of n events sent together in the pipeline and their
 * answers read in one round trip; each new event claimed (owners[i] set)
 * gets its first attempt, deferred, and with done[i] set goes in done.
 * Any failure fails the transaction: the caller rolls it back.
 */
int
pg_record_many(struct store *base, const struct event *const *evs,
    size_t n, int64_t now_ms, const char *const *owners, const int *done,
    int64_t lease_until, struct store_result *res, char *err, size_t errlen)
{
	struct pgs *st = pg_of(base);
	struct pg_params p;
	PGresult *keep[PG_MANY_MAX], *r;
	size_t i;
	int rc = IH_OK;

	st->fresh_claim = 0;
	st->fresh_done = 0;
	if (n > PG_MANY_MAX) {
		snprintf(err, errlen, "cannot record %lu events at once",
		    (unsigned long)n);
		return IH_EINVAL;
	}
	for (i = 0; i < n; i++) {
		memset(&res[i], 0, sizeof(res[i]));
		record_params(&p, evs[i], now_ms, owners[i], lease_until,
		    done != NULL && done[i]);
		rc = pg_defer_stmt(st, PG_RECORD, &p, "cannot record event",
		    err, errlen);
		if (rc != IH_OK)
			return rc;
	}
	r = pg_wait_kept(st, (int)n, keep);
	if (r == NULL || PQresultStatus(r) != PGRES_COMMAND_OK) {
		rc = pg_fail(st, r, "cannot record event", err, errlen);
		r = NULL;
	}
	PQclear(r);
	for (i = 0; i < n; i++) {
		if (rc == IH_OK && PQresultStatus(keep[i]) != PGRES_TUPLES_OK)
			rc = pg_fail(st, keep[i], "cannot record event", err,
			    errlen);
		else if (rc == IH_OK)
			rc = record_result(keep[i], &res[i], err, errlen);
		else
			PQclear(keep[i]);
	}
	/* Large payloads in slices, after their events' inserts. */
	for (i = 0; rc == IH_OK && i < n; i++)
		if (!res[i].duplicate &&
		    evs[i]->payload_len > PG_PAYLOAD_STREAM)
			rc = pg_payload_write(st, res[i].rowid,
			    evs[i]->payload, evs[i]->payload_len, err, errlen);
	/* New and claimed in its insert, its first attempt with it. */
	for (i = 0; rc == IH_OK && i < n; i++)
		if (owners[i] != NULL && !res[i].duplicate)
			rc = own_add(st, res[i].rowid,
			    done != NULL && done[i], err, errlen);
	return rc;
}

int
pg_attempt_start(struct store *base, int64_t rowid, int64_t now_ms,
    int64_t *seq, char *err, size_t errlen)
{
	struct pgs *st = pg_of(base);
	struct pg_params p;
	PGresult *r;
	int done = rowid > 0 && rowid == st->fresh_done;

	st->fresh_done = 0;
	if (rowid > 0 && rowid == st->fresh_claim) {
		/*
		 * The event was inserted and claimed by the record just
		 * before, in this transaction, which inserted its first
		 * attempt too.
		 */
		st->fresh_claim = 0;
		*seq = 1;
		return own_add(st, rowid, done, err, errlen);
	}
	st->fresh_claim = 0;
	memset(&p, 0, sizeof(p));
	pg_int(&p, rowid);
	pg_int(&p, now_ms);
	r = pg_exec_stmt(st, PG_ATTEMPT_START, &p, PGRES_TUPLES_OK,
	    "cannot record attempt", err, errlen);
	if (r == NULL)
		return IH_ESTORE;
	*seq = PQntuples(r) == 1 ? pg_getint(r, 0, 0) : 0;
	PQclear(r);
	return IH_OK;
}

int
pg_replay_of(struct store *base, const struct event *ev,
    const char *same_action, int *found, struct store_first *first,
    char *err, size_t errlen)
{
	struct pgs *st = pg_of(base);
	struct pg_params p;
	PGresult *r;

	*found = 0;
	memset(&p, 0, sizeof(p));
	pg_text(&p, ev->provider);
	pg_text(&p, ev->fingerprint);
	pg_text(&p, ev->event_id);
	pg_text(&p, same_action);
	pg_text(&p, account_or_default(ev->account));
	r = pg_exec_stmt(st, PG_REPLAY, &p, PGRES_TUPLES_OK,
	    "cannot look up the fingerprint", err, errlen);
	if (r == NULL)
		return IH_ESTORE;
	if (PQntuples(r) == 1) {
		*found = 1;
		snprintf(first->event_id, sizeof(first->event_id), "%s",
		    PQgetvalue(r, 0, 0));
		snprintf(first->event_type, sizeof(first->event_type), "%s",
		    PQgetvalue(r, 0, 1));
		first->same_action = pg_getint(r, 0, 2) != 0;
		first->held = pg_getint(r, 0, 3);
	}
	PQclear(r);
	return IH_OK;
}

/* Runs a job move with the parameters given; *n is the rows changed. */
static int
job_move(struct pgs *st, enum pg_stmt i, const struct pg_params *p, long *n,
    const char *what, char *err, size_t errlen)
{
	PGresult *r;

	*n = 0;
	r = pg_exec_stmt(st, i, p, PGRES_COMMAND_OK, what, err, errlen);
	if (r == NULL)
		return IH_ESTORE;
	*n = pg_changes(r);
	PQclear(r);
	return IH_OK;
}

static int
lease_lost(int rc, long n, const struct store_job *job, char *err,
    size_t errlen)
{
	if (rc == IH_OK && n != 1) {
		snprintf(err, errlen, "lease on event %lld was lost",
		    (long long)job->ev.rowid);
		return IH_ENOTFOUND;
	}
	return rc;
}

int
pg_claim(struct store *base, const char *provider, int64_t rowid,
    const char *owner, int64_t now_ms, int64_t lease_ms,
    struct store_job *job, int *found, char *err, size_t errlen)
{
	struct pgs *st = pg_of(base);
	struct pg_params p;
	PGresult *r;
	unsigned char *bytes, *buf;
	size_t len;
	long n;
	int rc;

	memset(&p, 0, sizeof(p));
	pg_text(&p, provider);
	pg_int(&p, rowid);
	pg_text(&p, owner);
	pg_int(&p, now_ms);
	pg_int(&p, lease_ms);	/* from the server's now: PG_NOW_MS */
	pg_int(&p, base->fetch);
	r = pg_exec_stmt(st, PG_CLAIM, &p, PGRES_TUPLES_OK,
	    "cannot claim event", err, errlen);
	if (r == NULL)
		return IH_ESTORE;
	if (PQntuples(r) == 0) {
		PQclear(r);
		return IH_OK;
	}
	job->ev.rowid = pg_getint(r, 0, 0);
	job->ev.attempt = (long)pg_getint(r, 0, 6);
	job->ev.received_at = pg_getint(r, 0, 7);
	job->ev.needs_fetch = pg_getint(r, 0, 8) != 0;
	rc = store_job_set(job, pg_gettext(r, 0, 1), pg_gettext(r, 0, 2),
	    pg_gettext(r, 0, 3), pg_gettext(r, 0, 4));
	if (rc == IH_OK)
		rc = store_job_account(job, pg_gettext(r, 0, 9));
	if (rc != IH_OK)
		goto out;
	if (base->bare)
		;	/* The caller holds the bytes: store_claim_fresh(). */
	else if (!PQgetisnull(r, 0, 5)) {
		bytes = PQunescapeBytea((const unsigned char *)
		    PQgetvalue(r, 0, 5), &len);
		buf = bytes != NULL ? malloc(len + 1) : NULL;
		if (buf == NULL) {
			PQfreemem(bytes);
			rc = IH_ENOMEM;
			goto out;
		}
		memcpy(buf, bytes, len);
		buf[len] = '\0';
		job->ev.payload = buf;
		job->ev.payload_len = len;
		PQfreemem(bytes);
	} else if (!PQgetisnull(r, 0, 10)) {
		/* Larger than PG_PAYLOAD_STREAM: read in slices. */
		rc = pg_payload_read(st, job->ev.rowid, pg_getint(r, 0, 10),
		    &buf, &len, err, errlen);
		if (rc != IH_OK)
			goto out;
		job->ev.payload = buf;
		job->ev.payload_len = len;
	}
	PQclear(r);
	r = NULL;
	if (job->ev.attempt > 1) {
		/* The earlier holders' attempts end as "lease_expired". */
		memset(&p, 0, sizeof(p));
		pg_int(&p, job->ev.rowid);
		pg_text(&p, "the lease expired before the attempt ended");
		pg_int(&p, now_ms);
		rc = job_move(st, PG_STALE, &p, &n,
		    "cannot close stale attempts", err, errlen);
		if (rc != IH_OK)
			goto out;
	}
	rc = pg_attempt_start(base, job->ev.rowid, now_ms, &job->seq, err,
	    errlen);
	if (rc == IH_OK)
		*found = 1;
out:
	PQclear(r);
	return rc;
}

int
pg_effect(struct store *base, const struct store_job *job, const char *kind,
    int64_t now_ms, char *err, size_t errlen)
{
	struct pg_params p;

	memset(&p, 0, sizeof(p));
	pg_int(&p, job->ev.rowid);
	pg_text(&p, kind);
	pg_int(&p, now_ms);
	/* ON CONFLICT DO NOTHING: only an error matters, read later. */
	return pg_defer_stmt(pg_of(base), PG_EFFECT, &p,
	    "cannot record effect", err, errlen);
}

/* Closes the job's attempt row with its outcome. */
static int
attempt_end(struct pgs *st, const struct store_job *job, int64_t now_ms,
    const char *outcome, const char *error, char *err, size_t errlen)
{
	struct pg_params p;

	memset(&p, 0, sizeof(p));
	pg_int(&p, job->ev.rowid);
	pg_int(&p, job->seq);
	pg_int(&p, now_ms);
	pg_text(&p, outcome);
	pg_text(&p, error);
	/* Deferred: its answer travels with the next statement's. */
	return pg_defer_stmt(st, PG_ATTEMPT_END, &p, "cannot record attempt",
	    err, errlen);
}

int
pg_complete(struct store *base, const struct store_job *job,
    const char *owner, int64_t now_ms, char *err, size_t errlen)
{
	struct pgs *st = pg_of(base);
	struct pg_params p;
	long n;
	int done, own, rc;

	/*
	 * Kept: a write of the switch refused after this (STORE_SP_CHECK)
	 * undoes it to its savepoint, and pg_fail_job() looks it up.
	 */
	own = own_take(st, job->ev.rowid, 0, &done);
	if (own && done)
		/*
		 * Inserted done by this transaction, its attempt closed, and
		 * no other transaction sees it before the commit: nothing to
		 * write but the attempt's note.
		 */
		return job->done_note == NULL ? IH_OK : attempt_end(st, job,
		    now_ms, "done", job->done_note, err, errlen);
	memset(&p, 0, sizeof(p));
	pg_int(&p, job->ev.rowid);
	pg_text(&p, owner);
	pg_int(&p, now_ms);
	if (own)
		/*
		 * Inserted and claimed by this transaction: no other can
		 * have taken it, and the statement fails if it did.
		 */
		rc = pg_defer_stmt(st, PG_COMPLETE_OWN, &p,
		    "cannot complete event", err, errlen);
	else {
		rc = job_move(st, PG_COMPLETE, &p, &n,
		    "cannot complete event", err, errlen);
		rc = lease_lost(rc, n, job, err, errlen);
	}
	if (rc == IH_OK)
		rc = attempt_end(st, job, now_ms, "done", job->done_note,
		    err, errlen);
	return rc;
}

int
pg_fail_job(struct store *base, const struct store_job *job,
    const char *owner, const char *error, int64_t next_ms, int dead,
    int64_t now_ms, char *err, size_t errlen)
{
	struct pgs *st = pg_of(base);
	struct pg_params p;
	long n;
	int done, rc;

	memset(&p, 0, sizeof(p));
	pg_int(&p, job->ev.rowid);
	if (own_take(st, job->ev.rowid, 1, &done) && done) {
		/* Inserted done, its switch failed: failed after all. */
		pg_text(&p, error);
		pg_int(&p, next_ms);
		pg_int(&p, dead != 0);
		rc = job_move(st, PG_UNDONE, &p, &n,
		    "cannot mark event failed", err, errlen);
	} else {
		pg_text(&p, owner);
		pg_text(&p, error);
		pg_int(&p, next_ms);
		pg_int(&p, dead != 0);
		rc = job_move(st, PG_FAILED, &p, &n,
		    "cannot mark event failed", err, errlen);
	}
	rc = lease_lost(rc, n, job, err, errlen);
	if (rc == IH_OK)
		rc = attempt_end(st, job, now_ms, dead ? "dead" : "failed",
		    error, err, errlen);
	return rc;
}

int
pg_renew(struct store *base, const struct store_job *job, const char *owner,
    int64_t lease_ms, char *err, size_t errlen)
{
	struct pg_params p;
	long n;
	int rc;

	memset(&p, 0, sizeof(p));
	pg_int(&p, job->ev.rowid);
	pg_text(&p, owner);
	/* The new lease runs from the server's now (PG_NOW_MS). */
	pg_int(&p, lease_ms);
	rc = job_move(pg_of(base), PG_RENEW, &p, &n, "cannot renew lease",
	    err, errlen);
	return lease_lost(rc, n, job, err, errlen);
}

int
pg_attempt_lost(struct store *base, const struct store_job *job,
    int64_t now_ms, char *err, size_t errlen)
{
	struct pg_params p;
	long n;

	memset(&p, 0, sizeof(p));
	pg_int(&p, job->ev.rowid);
	pg_text(&p, "another process took the event over");
	pg_int(&p, now_ms);
	pg_int(&p, job->seq);
	return job_move(pg_of(base), PG_LOST, &p, &n, "cannot close attempt",
	    err, errlen);
}

int
pg_forget(struct store *base, const struct store_job *job, const char *owner,
    char *err, size_t errlen)
{
	struct pg_params p;
	long n;
	int rc;

	memset(&p, 0, sizeof(p));
	pg_int(&p, job->ev.rowid);
	pg_text(&p, owner);
	rc = job_move(pg_of(base), PG_FORGET, &p, &n, "cannot forget event",
	    err, errlen);
	return lease_lost(rc, n, job, err, errlen);
}

int
pg_due(struct store *base, const char *provider, int64_t now_ms, int *due,
    char *err, size_t errlen)
{
	struct pgs *st = pg_of(base);
	struct pg_params p;
	PGresult *r;

	*due = 0;
	if (pg_ensure(st, err, errlen) != IH_OK)
		return IH_ESTORE;
	memset(&p, 0, sizeof(p));
	pg_text(&p, provider);
	pg_int(&p, 0);
	pg_text(&p, NULL);
	pg_int(&p, now_ms);
	pg_int(&p, 0);		/* $5: unused */
	pg_int(&p, base->fetch);
	r = pg_exec_stmt(st, PG_DUE, &p, PGRES_TUPLES_OK,
	    "cannot look for due events", err, errlen);
	if (r == NULL)
		return IH_ESTORE;
	*due = PQntuples(r) > 0;
	PQclear(r);
	return IH_OK;
}
