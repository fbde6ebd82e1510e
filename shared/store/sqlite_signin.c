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

/*
 * Runs stmt to its end; sets *row when a row came, and reads it into
 * *out (unless NULL) as a budget: failures, window.
 */
static int
step_one(struct sq *st, sqlite3_stmt *stmt, struct store_signin *out,
    int *row, char *err, size_t errlen)
{
	int step;

	*row = 0;
	step = sqlite3_step(stmt);
	if (step == SQLITE_ROW) {
		*row = 1;
		if (out != NULL) {
			out->failures = sqlite3_column_int64(stmt, 0);
			out->window_ms = sqlite3_column_int64(stmt, 1);
		}
		/* RETURNING's change is made when the statement ends. */
		while (step == SQLITE_ROW)
			step = sqlite3_step(stmt);
	}
	if (step != SQLITE_DONE)
		return sq_fail(st, step, "sign-in budget", err, errlen);
	return IH_OK;
}

/*
 * Runs sql, whose ?1 is key, to its end; a budget it answers goes into
 * *out (unless NULL).  With SQL_READ: key's budget, nothing when it has
 * none.
 */
static int
run_key(struct sq *st, const char *sql, const char *key,
    struct store_signin *out, char *err, size_t errlen)
{
	sqlite3_stmt *stmt;
	int rc, row;

	rc = prepare(st, sql, &stmt, err, errlen);
	if (rc != IH_OK)
		return rc;
	sqlite3_bind_text(stmt, 1, key, -1, SQLITE_STATIC);
	rc = step_one(st, stmt, out, &row, err, errlen);
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
	int rc;

	/*
	 * A spent budget is answered from a read: a flood of refused
	 * attempts never takes the write lock the receivers need.
	 */
	rc = run_key(st, SQL_READ, key, out, err, errlen);
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
	rc = step_one(st, stmt, out, &out->charged, err, errlen);
	sqlite3_finalize(stmt);
	/* Another process took the last attempt since the read. */
	if (rc == IH_OK && !out->charged)
		rc = run_key(st, SQL_READ, key, out, err, errlen);
	return rc;
}

int
sq_signin_refund(struct store *base, const char *key, int forget, char *err,
    size_t errlen)
{
	return run_key(sq_of(base), forget ? SQL_FORGET : SQL_REFUND, key,
	    NULL, err, errlen);
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
	rc = step_one(st, stmt, NULL, &row, err, errlen);
	sqlite3_finalize(stmt);
	return rc;
}
