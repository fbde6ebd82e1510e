/*
 * sqlite_signin.c -- SQLite: the console's sign-in budgets
 * (store_signin.h).  Each statement runs alone in autocommit: SQLite's
 * write lock makes the conditional upsert atomic against every other
 * process of the store.
 */
#include <string.h>

#include <sqlite3.h>

#include "ih.h"
#include "sqlite_int.h"

/*
 * One attempt more, unless the window (not yet past) is spent; a past
 * window begins again.  Every SET sees the row as it was.
 */
static const char SQL_CHARGE[] =
    "INSERT INTO console_signin (key, failures, window_ms) "
    "VALUES (?1, 1, ?2) ON CONFLICT (key) DO UPDATE SET "
    "failures = CASE WHEN console_signin.window_ms <= ?2 - ?3 THEN 1 "
    "ELSE console_signin.failures + 1 END, "
    "window_ms = CASE WHEN console_signin.window_ms <= ?2 - ?3 THEN ?2 "
    "ELSE console_signin.window_ms END "
    "WHERE console_signin.window_ms <= ?2 - ?3 "
    "OR console_signin.failures < ?4 "
    "RETURNING failures, window_ms";

static const char SQL_READ[] =
    "SELECT failures, window_ms FROM console_signin WHERE key = ?1";

static const char SQL_REFUND[] =
    "UPDATE console_signin SET failures = max(failures - 1, 0) "
    "WHERE key = ?1";

static const char SQL_FORGET[] = "DELETE FROM console_signin WHERE key = ?1";

static const char SQL_PRUNE[] =
    "DELETE FROM console_signin WHERE window_ms < ?1";

static int
prepare(struct sq *st, const char *sql, sqlite3_stmt **stmt, char *err,
    size_t errlen)
{
	return sq_prepare_once(st, sql, stmt, "sign-in budget", err, errlen);
}

/* Runs stmt to its row (want_row) or its end; sets *row when one came. */
static int
step_one(struct sq *st, sqlite3_stmt *stmt, int *row, char *err,
    size_t errlen)
{
	int step;

	*row = 0;
	step = sqlite3_step(stmt);
	if (step == SQLITE_ROW) {
		*row = 1;
		/* RETURNING's change is made when the statement ends. */
		while (step == SQLITE_ROW)
			step = sqlite3_step(stmt);
	}
	if (step != SQLITE_DONE)
		return sq_fail(st, step, "sign-in budget", err, errlen);
	return IH_OK;
}

/* Reads key's budget into *out (nothing when it has none). */
static int
read_budget(struct sq *st, const char *key, struct store_signin *out,
    char *err, size_t errlen)
{
	sqlite3_stmt *stmt;
	int rc, step;

	rc = prepare(st, SQL_READ, &stmt, err, errlen);
	if (rc != IH_OK)
		return rc;
	sqlite3_bind_text(stmt, 1, key, -1, SQLITE_STATIC);
	step = sqlite3_step(stmt);
	if (step == SQLITE_ROW) {
		out->failures = sqlite3_column_int64(stmt, 0);
		out->window_ms = sqlite3_column_int64(stmt, 1);
	} else if (step != SQLITE_DONE)
		rc = sq_fail(st, step, "sign-in budget", err, errlen);
	sqlite3_finalize(stmt);
	return rc;
}

int
sq_signin_charge(struct store *base, const char *key, int64_t now_ms,
    int64_t window_ms, long max, struct store_signin *out, char *err,
    size_t errlen)
{
	struct sq *st = sq_of(base);
	sqlite3_stmt *stmt = NULL;
	int rc, step;

	/*
	 * A spent budget is answered from a read: a flood of refused
	 * attempts never takes the write lock the receivers need.
	 */
	rc = read_budget(st, key, out, err, errlen);
	if (rc != IH_OK || (out->failures >= max &&
	    out->window_ms > now_ms - window_ms))
		return rc;
	rc = prepare(st, SQL_CHARGE, &stmt, err, errlen);
	if (rc != IH_OK)
		return rc;
	sqlite3_bind_text(stmt, 1, key, -1, SQLITE_STATIC);
	sqlite3_bind_int64(stmt, 2, now_ms);
	sqlite3_bind_int64(stmt, 3, window_ms);
	sqlite3_bind_int64(stmt, 4, max);
	step = sqlite3_step(stmt);
	if (step == SQLITE_ROW) {
		out->charged = 1;
		out->failures = sqlite3_column_int64(stmt, 0);
		out->window_ms = sqlite3_column_int64(stmt, 1);
		step = sqlite3_step(stmt);
	}
	if (step != SQLITE_DONE)
		rc = sq_fail(st, step, "sign-in budget", err, errlen);
	sqlite3_finalize(stmt);
	/* Another process took the last attempt since the read. */
	if (rc == IH_OK && !out->charged)
		rc = read_budget(st, key, out, err, errlen);
	return rc;
}

int
sq_signin_refund(struct store *base, const char *key, int forget, char *err,
    size_t errlen)
{
	struct sq *st = sq_of(base);
	sqlite3_stmt *stmt;
	int rc, row;

	rc = prepare(st, forget ? SQL_FORGET : SQL_REFUND, &stmt, err,
	    errlen);
	if (rc != IH_OK)
		return rc;
	sqlite3_bind_text(stmt, 1, key, -1, SQLITE_STATIC);
	rc = step_one(st, stmt, &row, err, errlen);
	sqlite3_finalize(stmt);
	return rc;
}

int
sq_signin_prune(struct store *base, int64_t before_ms, char *err,
    size_t errlen)
{
	struct sq *st = sq_of(base);
	sqlite3_stmt *stmt;
	int rc, row;

	rc = prepare(st, SQL_PRUNE, &stmt, err, errlen);
	if (rc != IH_OK)
		return rc;
	sqlite3_bind_int64(stmt, 1, before_ms);
	rc = step_one(st, stmt, &row, err, errlen);
	sqlite3_finalize(stmt);
	return rc;
}
