/*
 * sqlite_console.c -- SQLite: the console's reads (store_console.h).
 * Each is one statement in autocommit, so it holds the WAL snapshot for
 * that statement only and never the write lock.
 */
#include <stdio.h>
#include <string.h>

#include <sqlite3.h>

#include "ih.h"
#include "smoke.h"
#include "sqlite_int.h"

static const char SQL_COUNTS[] =
    "SELECT provider, status, COUNT(*), MAX(received_at) FROM events "
    "INDEXED BY events_provider_status GROUP BY provider, status "
    "ORDER BY provider, status";

/* CROSS JOIN: the pairs outside, each a search of the index. */
#define SQL_WINDOW \
    "FROM ps CROSS JOIN events e ON e.provider = ps.p " \
    "AND e.status = ps.s WHERE e.received_at >= ?1 AND e.received_at < ?2 "

static const char SQL_HOURS[] = SQ_PAIRS
    "SELECT (received_at - ?1) / 3600000, COUNT(*), SUM(duplicates), "
    "SUM(e.status IN ('failed', 'dead')) " SQL_WINDOW
    "GROUP BY (received_at - ?1) / 3600000";

static const char SQL_LATENCY[] = SQ_PAIRS
    "SELECT (received_at - ?1) / 3600000, done_at - received_at "
    SQL_WINDOW "AND done_at IS NOT NULL ORDER BY received_at LIMIT ?3";

/*
 * The last delivery, for the console and the silence alert: idemhook
 * smoke's test events are none of the provider's (smoke.h).
 */
#define NOT_SMOKE	" AND event_type <> '" SMOKE_TYPE "'"

static const char SQL_LAST[] =
    "SELECT max(coalesce(a, 0), coalesce(b, 0), coalesce(c, 0), "
    "coalesce(d, 0), coalesce(e, 0)) FROM "
    "(SELECT max(received_at) AS a FROM events WHERE provider = ?1 "
    "AND status = 'received'" NOT_SMOKE "), "
    "(SELECT max(received_at) AS b FROM events WHERE provider = ?1 "
    "AND status = 'processing'" NOT_SMOKE "), "
    "(SELECT max(received_at) AS c FROM events WHERE provider = ?1 "
    "AND status = 'done'" NOT_SMOKE "), "
    "(SELECT max(received_at) AS d FROM events WHERE provider = ?1 "
    "AND status = 'failed'" NOT_SMOKE "), "
    "(SELECT max(received_at) AS e FROM events WHERE provider = ?1 "
    "AND status = 'dead'" NOT_SMOKE ")";

static const char SQL_LAST_TYPE[] =
    "SELECT coalesce(max(received_at), 0) FROM events WHERE provider = ?1 "
    "AND event_type = ?2 AND status IN ('received', 'processing', 'done', "
    "'failed', 'dead')";

/* Two subqueries: MIN() and MAX() together read every row of an index. */
static const char SQL_BOUNDS[] =
    "SELECT (SELECT MIN(id) FROM events), (SELECT MAX(id) FROM events)";

static const char SQL_LIST[] =
    "SELECT id, provider, event_id, event_type, subtype, status, "
    "received_at, last_seen_at, duplicates, attempts, next_attempt_at, "
    "done_at, last_error, " SQ_HAS_PAYLOAD ", "
    "coalesce(" SQ_PAYLOAD_LEN ", 0), account FROM events "
    "WHERE id < ?1 AND id >= ?2 AND (?10 IS NULL OR account = ?10) "
    "AND (?3 IS NULL OR provider = ?3) AND (?4 IS NULL OR status = ?4) "
    "AND (?5 IS NULL OR event_type GLOB ?5) "
    "AND (?6 IS NULL OR instr(event_id, ?6) > 0 "
    "OR instr(event_type, ?6) > 0 OR instr(source_account, ?6) > 0) "
    "AND (?7 = 0 OR received_at >= ?7) AND (?8 = 0 OR received_at < ?8) "
    "ORDER BY id DESC LIMIT ?9";

static const char SQL_SIZE[] =
    "SELECT page_count * page_size FROM pragma_page_count(), "
    "pragma_page_size()";

int
sq_prepare_once(struct sq *st, const char *sql, sqlite3_stmt **stmt,
    const char *what, char *err, size_t errlen)
{
	int rc;

	rc = sqlite3_prepare_v2(st->db, sql, -1, stmt, NULL);
	if (rc != SQLITE_OK) {
		*stmt = NULL;
		return sq_fail(st, rc, what, err, errlen);
	}
	return IH_OK;
}

/* Prepared per call, like the operator's queries: each runs once. */
static int
prepare(struct sq *st, const char *sql, sqlite3_stmt **stmt, char *err,
    size_t errlen)
{
	return sq_prepare_once(st, sql, stmt, "console query", err, errlen);
}

static const char *
col_text(sqlite3_stmt *stmt, int i)
{
	return (const char *)sqlite3_column_text(stmt, i);
}

int
sq_console_counts(struct store *base, store_console_count_fn fn, void *arg,
    char *err, size_t errlen)
{
	struct sq *st = sq_of(base);
	sqlite3_stmt *stmt;
	int rc;

	rc = prepare(st, SQL_COUNTS, &stmt, err, errlen);
	if (rc != IH_OK)
		return rc;
	while (rc == IH_OK && sq_row(st, stmt, "counts", &rc, err, errlen)) {
		rc = fn(arg, col_text(stmt, 0), col_text(stmt, 1),
		    sqlite3_column_int64(stmt, 2),
		    sqlite3_column_int64(stmt, 3));
	}
	sqlite3_finalize(stmt);
	return rc;
}

int
sq_console_hours(struct store *base, int64_t start, int64_t end,
    int (*fn)(void *, int64_t, int64_t, int64_t, int64_t), void *arg,
    char *err, size_t errlen)
{
	struct sq *st = sq_of(base);
	sqlite3_stmt *stmt;
	int rc;

	rc = prepare(st, SQL_HOURS, &stmt, err, errlen);
	if (rc != IH_OK)
		return rc;
	sqlite3_bind_int64(stmt, 1, start);
	sqlite3_bind_int64(stmt, 2, end);
	while (rc == IH_OK && sq_row(st, stmt, "series", &rc, err, errlen)) {
		rc = fn(arg, sqlite3_column_int64(stmt, 0),
		    sqlite3_column_int64(stmt, 1),
		    sqlite3_column_int64(stmt, 2),
		    sqlite3_column_int64(stmt, 3));
	}
	sqlite3_finalize(stmt);
	return rc;
}

int
sq_console_latency(struct store *base, int64_t start, int64_t end,
    long max, int (*fn)(void *, int64_t, int64_t), void *arg, char *err,
    size_t errlen)
{
	struct sq *st = sq_of(base);
	sqlite3_stmt *stmt;
	int rc;

	rc = prepare(st, SQL_LATENCY, &stmt, err, errlen);
	if (rc != IH_OK)
		return rc;
	sqlite3_bind_int64(stmt, 1, start);
	sqlite3_bind_int64(stmt, 2, end);
	sqlite3_bind_int64(stmt, 3, max);
	while (rc == IH_OK && sq_row(st, stmt, "latency", &rc, err, errlen)) {
		rc = fn(arg, sqlite3_column_int64(stmt, 0),
		    sqlite3_column_int64(stmt, 1));
	}
	sqlite3_finalize(stmt);
	return rc;
}

/* Pages in use times the page size: the file's size. */
int
sq_console_size(struct store *base, int64_t *bytes, char *err,
    size_t errlen)
{
	struct sq *st = sq_of(base);
	sqlite3_stmt *stmt;
	int rc, step;

	rc = prepare(st, SQL_SIZE, &stmt, err, errlen);
	if (rc != IH_OK)
		return rc;
	step = sqlite3_step(stmt);
	if (step == SQLITE_ROW)
		*bytes = sqlite3_column_int64(stmt, 0);
	else
		rc = sq_fail(st, step, "size", err, errlen);
	sqlite3_finalize(stmt);
	return rc;
}

int
sq_console_bounds(struct store *base, int *empty, int64_t *lo, int64_t *hi,
    char *err, size_t errlen)
{
	struct sq *st = sq_of(base);
	sqlite3_stmt *stmt;
	int rc, step;

	*empty = 1;
	*lo = *hi = 0;
	rc = prepare(st, SQL_BOUNDS, &stmt, err, errlen);
	if (rc != IH_OK)
		return rc;
	step = sqlite3_step(stmt);
	if (step != SQLITE_ROW)
		rc = sq_fail(st, step, "bounds", err, errlen);
	else if (sqlite3_column_type(stmt, 0) != SQLITE_NULL) {
		*empty = 0;
		*lo = sqlite3_column_int64(stmt, 0);
		*hi = sqlite3_column_int64(stmt, 1);
	}
	sqlite3_finalize(stmt);
	return rc;
}

/* An unset filter is NULL or empty: both bind NULL. */
static void
bind_text_or_null(sqlite3_stmt *stmt, int i, const char *v)
{
	sq_bind_text(stmt, i, v != NULL && *v != '\0' ? v : NULL);
}

int
sq_console_window(struct store *base, const struct store_console_query *q,
    int64_t hi, int64_t lo, long limit, store_row_fn fn, void *arg,
    char *err, size_t errlen)
{
	struct sq *st = sq_of(base);
	struct store_row row;
	sqlite3_stmt *stmt;
	int rc;

	rc = prepare(st, SQL_LIST, &stmt, err, errlen);
	if (rc != IH_OK)
		return rc;
	sqlite3_bind_int64(stmt, 1, hi);
	sqlite3_bind_int64(stmt, 2, lo);
	bind_text_or_null(stmt, 3, q->provider);
	bind_text_or_null(stmt, 4, q->status);
	bind_text_or_null(stmt, 5, q->type_glob);
	bind_text_or_null(stmt, 6, q->text);
	sqlite3_bind_int64(stmt, 7, q->since_ms > 0 ? q->since_ms : 0);
	sqlite3_bind_int64(stmt, 8, q->until_ms > 0 ? q->until_ms : 0);
	sqlite3_bind_int64(stmt, 9, limit);
	bind_text_or_null(stmt, 10, q->account);
	while (rc == IH_OK && sq_row(st, stmt, "list", &rc, err, errlen)) {
		memset(&row, 0, sizeof(row));
		row.rowid = sqlite3_column_int64(stmt, 0);
		row.provider = col_text(stmt, 1);
		row.event_id = col_text(stmt, 2);
		row.event_type = col_text(stmt, 3);
		row.subtype = col_text(stmt, 4);
		row.status = col_text(stmt, 5);
		row.received_at = sqlite3_column_int64(stmt, 6);
		row.last_seen_at = sqlite3_column_int64(stmt, 7);
		row.duplicates = sqlite3_column_int64(stmt, 8);
		row.attempts = sqlite3_column_int64(stmt, 9);
		row.next_attempt_at = sqlite3_column_int64(stmt, 10);
		row.done_at = sqlite3_column_int64(stmt, 11);
		row.last_error = col_text(stmt, 12);
		row.has_payload = sqlite3_column_int(stmt, 13);
		row.payload_len = sqlite3_column_int64(stmt, 14);
		row.account = col_text(stmt, 15);
		store_row_defaults(&row);
		rc = fn(arg, &row);
	}
	sqlite3_finalize(stmt);
	return rc;
}

/*
 * The last delivery's time in *ms: of any type (event_type NULL, SQL_LAST)
 * or of one (SQL_LAST_TYPE).
 */
static int
last_ms(struct sq *st, const char *provider, const char *event_type,
    int64_t *ms, char *err, size_t errlen)
{
	sqlite3_stmt *stmt;
	int rc, step;

	rc = prepare(st, event_type != NULL ? SQL_LAST_TYPE : SQL_LAST, &stmt,
	    err, errlen);
	if (rc != IH_OK)
		return rc;
	sqlite3_bind_text(stmt, 1, provider, -1, SQLITE_STATIC);
	if (event_type != NULL)
		sqlite3_bind_text(stmt, 2, event_type, -1, SQLITE_STATIC);
	step = sqlite3_step(stmt);
	if (step == SQLITE_ROW)
		*ms = sqlite3_column_int64(stmt, 0);
	else
		rc = sq_fail(st, step, "last delivery", err, errlen);
	sqlite3_finalize(stmt);
	return rc;
}

int
sq_console_last(struct store *base, const char *provider, int64_t *ms,
    char *err, size_t errlen)
{
	return last_ms(sq_of(base), provider, NULL, ms, err, errlen);
}

int
sq_console_last_type(struct store *base, const char *provider,
    const char *event_type, int64_t *ms, char *err, size_t errlen)
{
	return last_ms(sq_of(base), provider, event_type, ms, err, errlen);
}

static int
explain_one(struct sq *st, const char *name, const char *sql, char *buf,
    size_t len, size_t *used, char *err, size_t errlen)
{
	sqlite3_stmt *stmt;
	char q[2048];
	int rc, n;

	n = snprintf(q, sizeof(q), "EXPLAIN QUERY PLAN %s", sql);
	if (n < 0 || (size_t)n >= sizeof(q))
		return IH_EINVAL;
	rc = prepare(st, q, &stmt, err, errlen);
	if (rc != IH_OK)
		return rc;
	while (rc == IH_OK && sqlite3_step(stmt) == SQLITE_ROW)
		rc = store_plan_line(buf, len, used, name, col_text(stmt, 3));
	sqlite3_finalize(stmt);
	return rc;
}

int
sq_console_explain(struct store *base, char *buf, size_t len, char *err,
    size_t errlen)
{
	static const struct {
		const char *name, *sql;
	} q[] = {
		{ "counts", SQL_COUNTS }, { "hours", SQL_HOURS },
		{ "latency", SQL_LATENCY }, { "bounds", SQL_BOUNDS },
		{ "list", SQL_LIST }, { "last", SQL_LAST },
	};
	size_t i, used = 0;
	int rc;

	for (i = 0; i < sizeof(q) / sizeof(q[0]); i++) {
		rc = explain_one(sq_of(base), q[i].name, q[i].sql, buf, len,
		    &used, err, errlen);
		if (rc != IH_OK)
			return rc;
	}
	return IH_OK;
}
