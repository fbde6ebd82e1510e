/*
 * sqlite_exec.c -- SQLite: the helpers every sqlite_*.c uses to run a
 * statement and report its failure (sq_fail's "what: SQLite's message",
 * the step, the bind, the row).
 */
#include <stdio.h>

#include <sqlite3.h>

#include "ih.h"
#include "sqlite_int.h"
#include "sqlite_trust.h"

/* Writes "what: sqlite's message" into err. */
int
sq_fail(struct sq *st, int rc, const char *what, char *err, size_t errlen)
{
	const char *msg = st != NULL && st->db != NULL ?
	    sqlite3_errmsg(st->db) : sqlite3_errstr(rc);

	snprintf(err, errlen, "%s: %s (sqlite %d)", what, msg, rc);
	if (st != NULL && sqtrust_refused(err))
		st->distrusted = 1;
	return IH_ESTORE;
}

int
sq_exec(struct sq *st, const char *sql, const char *what, char *err,
    size_t errlen)
{
	int rc;

	rc = sqlite3_exec(st->db, sql, NULL, NULL, NULL);
	if (rc != SQLITE_OK)
		return sq_fail(st, rc, what, err, errlen);
	return IH_OK;
}

int
sq_prepare(struct sq *st, const char *sql, sqlite3_stmt **stmt, char *err,
    size_t errlen)
{
	int rc;

	rc = sqlite3_prepare_v3(st->db, sql, -1, SQLITE_PREPARE_PERSISTENT,
	    stmt, NULL);
	if (rc != SQLITE_OK)
		return sq_fail(st, rc, "cannot prepare statement", err, errlen);
	return IH_OK;
}

/* Runs a prepared statement that returns no rows. */
int
sq_step_done(struct sq *st, sqlite3_stmt *stmt, const char *what,
    char *err, size_t errlen)
{
	int rc;

	rc = sqlite3_step(stmt);
	sqlite3_reset(stmt);
	if (rc != SQLITE_DONE)
		return sq_fail(st, rc, what, err, errlen);
	return IH_OK;
}

void
sq_bind_text(sqlite3_stmt *s, int i, const char *v)
{
	if (v != NULL)
		sqlite3_bind_text(s, i, v, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(s, i);
}

int
sq_row(struct sq *st, sqlite3_stmt *stmt, const char *what, int *rc,
    char *err, size_t errlen)
{
	int step;

	step = sqlite3_step(stmt);
	*rc = IH_OK;
	if (step == SQLITE_ROW)
		return 1;
	if (step != SQLITE_DONE)
		*rc = sq_fail(st, step, what, err, errlen);
	return 0;
}
