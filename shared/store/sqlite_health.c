/*
 * sqlite_health.c -- SQLite: the last health result per provider
 * (store_health.h).  Refused signatures are not here: they are counted
 * in the file beside the store (sigfail.h).
 */
#include <string.h>

#include <sqlite3.h>

#include "ih.h"
#include "sqlite_int.h"

static const char SQL_PUT[] =
    "INSERT INTO endpoint_health (provider, checked_at, outcome, problems,"
    " findings) VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (provider) DO"
    " UPDATE SET checked_at = excluded.checked_at, outcome ="
    " excluded.outcome, problems = excluded.problems, findings ="
    " excluded.findings";

static const char SQL_LIST[] =
    "SELECT provider, checked_at, outcome, problems, findings"
    " FROM endpoint_health ORDER BY provider";

static const char *
col_text(sqlite3_stmt *stmt, int i)
{
	const unsigned char *t = sqlite3_column_text(stmt, i);

	return t != NULL ? (const char *)t : "";
}

int
sq_health_put(struct store *base, const struct store_health *h, char *err,
    size_t errlen)
{
	struct sq *st = sq_of(base);
	sqlite3_stmt *stmt;
	size_t n = strlen(h->findings);
	int rc, step;

	rc = sq_prepare_once(st, SQL_PUT, &stmt, "endpoint health", err,
	    errlen);
	if (rc != IH_OK)
		return rc;
	sqlite3_bind_text(stmt, 1, h->provider, -1, SQLITE_STATIC);
	sqlite3_bind_int64(stmt, 2, h->checked_at);
	sqlite3_bind_text(stmt, 3, h->outcome, -1, SQLITE_STATIC);
	sqlite3_bind_int64(stmt, 4, h->problems);
	sqlite3_bind_text(stmt, 5, h->findings, (int)(n <
	    STORE_HEALTH_TEXT_MAX ? n : STORE_HEALTH_TEXT_MAX), SQLITE_STATIC);
	step = sqlite3_step(stmt);
	if (step != SQLITE_DONE)
		rc = sq_fail(st, step, "endpoint health", err, errlen);
	sqlite3_finalize(stmt);
	return rc;
}

int
sq_health_list(struct store *base,
    int (*fn)(void *, const struct store_health *), void *arg, char *err,
    size_t errlen)
{
	struct sq *st = sq_of(base);
	struct store_health h;
	sqlite3_stmt *stmt;
	int rc, step;

	rc = sq_prepare_once(st, SQL_LIST, &stmt, "endpoint health", err,
	    errlen);
	if (rc != IH_OK)
		return rc;
	for (step = sqlite3_step(stmt); step == SQLITE_ROW;
	    step = sqlite3_step(stmt)) {
		h.provider = col_text(stmt, 0);
		h.checked_at = sqlite3_column_int64(stmt, 1);
		h.outcome = col_text(stmt, 2);
		h.problems = (long)sqlite3_column_int64(stmt, 3);
		h.findings = col_text(stmt, 4);
		rc = fn(arg, &h);
		if (rc != IH_OK)
			break;
	}
	if (rc == IH_OK && step != SQLITE_DONE)
		rc = sq_fail(st, step, "endpoint health", err, errlen);
	sqlite3_finalize(stmt);
	return rc;
}
