/*
 * sqlite_txn.c -- SQLite: transactions (BEGIN IMMEDIATE behind the
 * writers' queue, the commit's durability) and savepoints.
 */

#include <sqlite3.h>

#include "ih.h"
#include "sqlite_int.h"
#include "sqlite_trust.h"

int
sq_begin(struct store *base, enum store_durability d, char *err,
    size_t errlen)
{
	struct sq *st = sq_of(base);
	sqlite3_stmt *s;
	int want = d == STORE_DURABLE ? st->sync_durable : 1, rc;

	if (st->distrusted)
		st->distrusted = sqtrust_recheck(st->db);
	st->done_row = 0;
	st->ndone_many = 0;
	/* SHARED: written at NORMAL, synced by sq_commit (sqlite_sync.h). */
	st->tx_shared = d == STORE_DURABLE && st->shared != NULL;
	if (st->tx_shared)
		want = 1;

	/*
	 * The level applies to the commits that follow: set it outside the
	 * transaction.  It is not a prepared statement: SQLite applies this
	 * pragma when it compiles it, so a prepared copy would act once, at
	 * prepare time, and never again.
	 */
	if (want != st->sync_now) {
		rc = sq_exec(st, want == 2 ? "PRAGMA synchronous = FULL" :
		    "PRAGMA synchronous = NORMAL", "cannot set synchronous",
		    err, errlen);
		if (rc != IH_OK)
			return rc;
		st->sync_now = want;
	}
	rc = sq_queue_enter(st, err, errlen);
	if (rc != IH_OK)
		return rc;
	s = sq_stmt(st, &st->begin, err, errlen);
	rc = s != NULL ? sq_step_done(st, s, "cannot begin transaction", err,
	    errlen) : IH_ESTORE;
	if (rc != IH_OK)
		sq_queue_leave(st);
	return rc;
}

void
sq_rollback(struct store *base)
{
	struct sq *st = sq_of(base);
	char err[STORE_ERR_MAX];

	st->tx_shared = 0;
	/* Prepared when first needed; failing that, run unprepared. */
	if (!sqlite3_get_autocommit(st->db) &&
	    sq_stmt(st, &st->rollback, err, sizeof(err)) != NULL) {
		sqlite3_step(st->rollback);
		sqlite3_reset(st->rollback);
	} else if (!sqlite3_get_autocommit(st->db))
		(void)sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
	sq_queue_leave(st);
}

/*
 * A SHARED transaction takes its ticket while it still holds the writers'
 * queue and waits for the log's sync after leaving it, so that the next
 * writers commit meanwhile and one sync covers them all.
 */
int
sq_commit(struct store *base, char *err, size_t errlen)
{
	struct sq *st = sq_of(base);
	sqlite3_stmt *s;
	uint64_t ticket = 0;
	int rc, shared = st->tx_shared;

	st->tx_shared = 0;
	s = sq_stmt(st, &st->commit, err, errlen);
	rc = s != NULL ? sq_step_done(st, s, "cannot commit", err, errlen) :
	    IH_ESTORE;
	if (rc != IH_OK)
		sq_rollback(base);
	else if (shared)
		ticket = sqsync_note(st->shared);
	sq_queue_leave(st);
	if (rc == IH_OK && shared)
		rc = sqsync_wait(st->shared, st->db, ticket, err, errlen);
	sq_checkpoint_due(st);
	return rc;
}

/*
 * The innermost savepoint: opened, released, or rolled back and popped;
 * checked at no cost, since every write was answered already.
 */
int
sq_savepoint(struct store *base, enum store_sp op, char *err,
    size_t errlen)
{
	struct sq *st = sq_of(base);
	sqlite3_stmt *s;
	int rc;

	if (op == STORE_SP_CHECK)
		return IH_OK;
	if (op == STORE_SP_OPEN) {
		s = sq_stmt(st, &st->sp_begin, err, errlen);
		return s != NULL ? sq_step_done(st, s, "cannot open savepoint",
		    err, errlen) : IH_ESTORE;
	}
	if (op == STORE_SP_UNDO) {
		s = sq_stmt(st, &st->sp_undo, err, errlen);
		rc = s != NULL ? sq_step_done(st, s, "cannot roll back to "
		    "savepoint", err, errlen) : IH_ESTORE;
		if (rc != IH_OK)
			return rc;
	}
	s = sq_stmt(st, &st->sp_release, err, errlen);
	return s != NULL ? sq_step_done(st, s, "cannot release savepoint",
	    err, errlen) : IH_ESTORE;
}
