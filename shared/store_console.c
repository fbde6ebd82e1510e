/* store_console.c -- the console's read-only, bounded queries. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "ih.h"
#include "store.h"
#include "store_console.h"

#define HOUR_MS	(3600LL * 1000)

static const char SQL_COUNTS[] =
    "SELECT provider, status, COUNT(*), MAX(received_at) FROM events "
    "INDEXED BY events_provider_status GROUP BY provider, status "
    "ORDER BY provider, status";

static const char SQL_HOURS[] =
    "SELECT (received_at - ?1) / 3600000, COUNT(*), SUM(duplicates), "
    "SUM(status IN ('failed', 'dead')) FROM events "
    "WHERE received_at >= ?1 AND received_at < ?2 "
    "GROUP BY (received_at - ?1) / 3600000";

static const char SQL_LATENCY[] =
    "SELECT (received_at - ?1) / 3600000, done_at - received_at "
    "FROM events WHERE received_at >= ?1 AND received_at < ?2 "
    "AND done_at IS NOT NULL ORDER BY received_at LIMIT ?3";

static const char SQL_LAST[] =
    "SELECT max(coalesce(a, 0), coalesce(b, 0), coalesce(c, 0), "
    "coalesce(d, 0), coalesce(e, 0)) FROM "
    "(SELECT max(received_at) AS a FROM events WHERE provider = ?1 "
    "AND status = 'received'), "
    "(SELECT max(received_at) AS b FROM events WHERE provider = ?1 "
    "AND status = 'processing'), "
    "(SELECT max(received_at) AS c FROM events WHERE provider = ?1 "
    "AND status = 'done'), "
    "(SELECT max(received_at) AS d FROM events WHERE provider = ?1 "
    "AND status = 'failed'), "
    "(SELECT max(received_at) AS e FROM events WHERE provider = ?1 "
    "AND status = 'dead')";

static const char SQL_BOUNDS[] = "SELECT MIN(id), MAX(id) FROM events";

static const char SQL_LIST[] =
    "SELECT id, provider, event_id, event_type, subtype, status, "
    "received_at, last_seen_at, duplicates, attempts, next_attempt_at, "
    "done_at, last_error, payload IS NOT NULL, "
    "coalesce(length(payload), 0) FROM events "
    "WHERE id < ?1 AND id >= ?2 "
    "AND (?3 IS NULL OR provider = ?3) AND (?4 IS NULL OR status = ?4) "
    "AND (?5 IS NULL OR event_type GLOB ?5) "
    "AND (?6 IS NULL OR instr(event_id, ?6) > 0 "
    "OR instr(event_type, ?6) > 0) "
    "AND (?7 = 0 OR received_at >= ?7) AND (?8 = 0 OR received_at < ?8) "
    "ORDER BY id DESC LIMIT ?9";

static int
fail(sqlite3 *db, const char *what, char *err, size_t errlen)
{
	snprintf(err, errlen, "%s: %s", what, sqlite3_errmsg(db));
	return IH_ESTORE;
}

static int
prepare(sqlite3 *db, const char *sql, sqlite3_stmt **stmt, char *err,
    size_t errlen)
{
	if (sqlite3_prepare_v2(db, sql, -1, stmt, NULL) != SQLITE_OK) {
		*stmt = NULL;
		return fail(db, "console query", err, errlen);
	}
	return IH_OK;
}

int
store_console_counts(struct store *st, store_console_count_fn fn, void *arg,
    char *err, size_t errlen)
{
	sqlite3 *db = store_sqlite(st);
	sqlite3_stmt *stmt;
	int rc, step;

	rc = prepare(db, SQL_COUNTS, &stmt, err, errlen);
	if (rc != IH_OK)
		return rc;
	for (step = sqlite3_step(stmt); step == SQLITE_ROW;
	    step = sqlite3_step(stmt)) {
		rc = fn(arg, (const char *)sqlite3_column_text(stmt, 0),
		    (const char *)sqlite3_column_text(stmt, 1),
		    sqlite3_column_int64(stmt, 2),
		    sqlite3_column_int64(stmt, 3));
		if (rc != IH_OK)
			goto out;
	}
	if (step != SQLITE_DONE)
		rc = fail(db, "counts", err, errlen);
out:
	sqlite3_finalize(stmt);
	return rc;
}

static int
cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* The nearest-rank percentile pct of n sorted values, or -1. */
static int64_t
percentile(const int64_t *v, size_t n, int pct)
{
	size_t k;

	if (n == 0)
		return -1;
	k = (n * (size_t)pct + 99) / 100;
	if (k == 0)
		k = 1;
	return v[k - 1];
}

int
store_console_series(struct store *st, int64_t now_ms,
    struct store_console_series *s, char *err, size_t errlen)
{
	sqlite3 *db = store_sqlite(st);
	sqlite3_stmt *stmt = NULL;
	int64_t start, *all = NULL, *hv[STORE_CONSOLE_HOURS] = { NULL };
	size_t hn[STORE_CONSOLE_HOURS] = { 0 }, n = 0, i;
	int64_t h;
	int rc, step;

	memset(s, 0, sizeof(*s));
	/* Hours aligned on the clock, the current one last. */
	start = (now_ms / HOUR_MS + 1 - STORE_CONSOLE_HOURS) * HOUR_MS;
	for (i = 0; i < STORE_CONSOLE_HOURS; i++) {
		s->hour[i].start_ms = start + (int64_t)i * HOUR_MS;
		s->hour[i].p50_ms = s->hour[i].p99_ms = -1;
	}
	s->p50_ms = s->p99_ms = -1;
	rc = prepare(db, SQL_HOURS, &stmt, err, errlen);
	if (rc != IH_OK)
		return rc;
	sqlite3_bind_int64(stmt, 1, start);
	sqlite3_bind_int64(stmt, 2, start + STORE_CONSOLE_HOURS * HOUR_MS);
	for (step = sqlite3_step(stmt); step == SQLITE_ROW;
	    step = sqlite3_step(stmt)) {
		h = sqlite3_column_int64(stmt, 0);
		if (h < 0 || h >= STORE_CONSOLE_HOURS)
			continue;
		s->hour[h].accepted = sqlite3_column_int64(stmt, 1);
		s->hour[h].duplicates = sqlite3_column_int64(stmt, 2);
		s->hour[h].failed = sqlite3_column_int64(stmt, 3);
		s->accepted += s->hour[h].accepted;
		s->duplicates += s->hour[h].duplicates;
		s->failed += s->hour[h].failed;
	}
	if (step != SQLITE_DONE) {
		rc = fail(db, "series", err, errlen);
		goto out;
	}
	sqlite3_finalize(stmt);
	stmt = NULL;

	all = malloc(STORE_CONSOLE_LATENCY_MAX * sizeof(*all));
	for (i = 0; i < STORE_CONSOLE_HOURS; i++)
		hv[i] = malloc(STORE_CONSOLE_LATENCY_MAX * sizeof(*hv[i]) /
		    STORE_CONSOLE_HOURS + 1024 * sizeof(*hv[i]));
	rc = all == NULL ? IH_ENOMEM : IH_OK;
	for (i = 0; i < STORE_CONSOLE_HOURS; i++)
		if (hv[i] == NULL)
			rc = IH_ENOMEM;
	if (rc != IH_OK)
		goto out;
	rc = prepare(db, SQL_LATENCY, &stmt, err, errlen);
	if (rc != IH_OK)
		goto out;
	sqlite3_bind_int64(stmt, 1, start);
	sqlite3_bind_int64(stmt, 2, start + STORE_CONSOLE_HOURS * HOUR_MS);
	sqlite3_bind_int64(stmt, 3, STORE_CONSOLE_LATENCY_MAX);
	for (step = sqlite3_step(stmt); step == SQLITE_ROW;
	    step = sqlite3_step(stmt)) {
		int64_t ms = sqlite3_column_int64(stmt, 1);

		h = sqlite3_column_int64(stmt, 0);
		if (h < 0 || h >= STORE_CONSOLE_HOURS || ms < 0 ||
		    n >= STORE_CONSOLE_LATENCY_MAX)
			continue;
		all[n++] = ms;
		/* Each hour keeps a bounded sample: its first values. */
		if (hn[h] < STORE_CONSOLE_LATENCY_MAX / STORE_CONSOLE_HOURS +
		    1024)
			hv[h][hn[h]++] = ms;
		s->hour[h].latency_n++;
	}
	if (step != SQLITE_DONE) {
		rc = fail(db, "latency", err, errlen);
		goto out;
	}
	qsort(all, n, sizeof(*all), cmp_i64);
	s->latency_n = (int64_t)n;
	s->p50_ms = percentile(all, n, 50);
	s->p99_ms = percentile(all, n, 99);
	for (i = 0; i < STORE_CONSOLE_HOURS; i++) {
		qsort(hv[i], hn[i], sizeof(*hv[i]), cmp_i64);
		s->hour[i].p50_ms = percentile(hv[i], hn[i], 50);
		s->hour[i].p99_ms = percentile(hv[i], hn[i], 99);
	}
	rc = IH_OK;
out:
	sqlite3_finalize(stmt);
	free(all);
	for (i = 0; i < STORE_CONSOLE_HOURS; i++)
		free(hv[i]);
	return rc;
}

int
store_console_size(struct store *st, int64_t *bytes, char *err,
    size_t errlen)
{
	sqlite3 *db = store_sqlite(st);
	sqlite3_stmt *stmt;
	int rc;

	*bytes = 0;
	rc = prepare(db, "SELECT page_count * page_size FROM "
	    "pragma_page_count(), pragma_page_size()", &stmt, err,
	    errlen);
	if (rc != IH_OK)
		return rc;
	if (sqlite3_step(stmt) == SQLITE_ROW)
		*bytes = sqlite3_column_int64(stmt, 0);
	else
		rc = fail(db, "size", err, errlen);
	sqlite3_finalize(stmt);
	return rc;
}

static void
bind_text_or_null(sqlite3_stmt *stmt, int i, const char *v)
{
	if (v != NULL && *v != '\0')
		sqlite3_bind_text(stmt, i, v, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(stmt, i);
}

static const char *
col_text(sqlite3_stmt *stmt, int i)
{
	return (const char *)sqlite3_column_text(stmt, i);
}

int
store_console_list(struct store *st, const struct store_console_query *q,
    store_row_fn fn, void *arg, int64_t *next_before, char *err,
    size_t errlen)
{
	sqlite3 *db = store_sqlite(st);
	sqlite3_stmt *stmt = NULL;
	struct store_row row;
	int64_t minid, maxid, hi, lo, last = 0;
	long got = 0, scanned = 0;
	int rc, step;

	*next_before = 0;
	if (q->page < 1 || q->page > STORE_CONSOLE_PAGE_MAX)
		return IH_EINVAL;
	rc = prepare(db, SQL_BOUNDS, &stmt, err, errlen);
	if (rc != IH_OK)
		return rc;
	if (sqlite3_step(stmt) != SQLITE_ROW) {
		rc = fail(db, "bounds", err, errlen);
		goto out;
	}
	if (sqlite3_column_type(stmt, 0) == SQLITE_NULL)
		goto out;	/* an empty store */
	minid = sqlite3_column_int64(stmt, 0);
	maxid = sqlite3_column_int64(stmt, 1);
	sqlite3_finalize(stmt);
	stmt = NULL;
	hi = q->before_id > 0 && q->before_id <= maxid ? q->before_id :
	    maxid + 1;
	rc = prepare(db, SQL_LIST, &stmt, err, errlen);
	if (rc != IH_OK)
		goto out;
	bind_text_or_null(stmt, 3, q->provider);
	bind_text_or_null(stmt, 4, q->status);
	bind_text_or_null(stmt, 5, q->type_glob);
	bind_text_or_null(stmt, 6, q->text);
	sqlite3_bind_int64(stmt, 7, q->since_ms > 0 ? q->since_ms : 0);
	sqlite3_bind_int64(stmt, 8, q->until_ms > 0 ? q->until_ms : 0);
	while (got < q->page && hi > minid) {
		if (scanned >= STORE_CONSOLE_SCAN_MAX) {
			*next_before = hi;
			goto out;
		}
		lo = hi - STORE_CONSOLE_WINDOW;
		sqlite3_reset(stmt);
		sqlite3_bind_int64(stmt, 1, hi);
		sqlite3_bind_int64(stmt, 2, lo);
		sqlite3_bind_int64(stmt, 9, q->page - got);
		for (step = sqlite3_step(stmt); step == SQLITE_ROW;
		    step = sqlite3_step(stmt)) {
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
			last = row.rowid;
			got++;
			rc = fn(arg, &row);
			if (rc != IH_OK)
				goto out;
		}
		if (step != SQLITE_DONE) {
			rc = fail(db, "list", err, errlen);
			goto out;
		}
		scanned += STORE_CONSOLE_WINDOW;
		hi = got >= q->page ? last : lo;
	}
	if (hi > minid)
		*next_before = hi;
	rc = IH_OK;
out:
	sqlite3_finalize(stmt);
	return rc;
}

int
store_console_last_received(struct store *st, const char *provider,
    int64_t *ms, char *err, size_t errlen)
{
	sqlite3 *db = store_sqlite(st);
	sqlite3_stmt *stmt;
	int rc;

	*ms = 0;
	rc = prepare(db, SQL_LAST, &stmt, err, errlen);
	if (rc != IH_OK)
		return rc;
	sqlite3_bind_text(stmt, 1, provider, -1, SQLITE_STATIC);
	if (sqlite3_step(stmt) == SQLITE_ROW)
		*ms = sqlite3_column_int64(stmt, 0);
	else
		rc = fail(db, "last delivery", err, errlen);
	sqlite3_finalize(stmt);
	return rc;
}

static int
explain_one(sqlite3 *db, const char *name, const char *sql, char *buf,
    size_t len, size_t *used, char *err, size_t errlen)
{
	sqlite3_stmt *stmt;
	char q[2048];
	int rc = IH_OK, n;

	n = snprintf(q, sizeof(q), "EXPLAIN QUERY PLAN %s", sql);
	if (n < 0 || (size_t)n >= sizeof(q))
		return IH_EINVAL;
	rc = prepare(db, q, &stmt, err, errlen);
	if (rc != IH_OK)
		return rc;
	while (sqlite3_step(stmt) == SQLITE_ROW) {
		n = snprintf(buf + *used, len - *used, "%s: %s\n", name,
		    col_text(stmt, 3));
		if (n < 0 || (size_t)n >= len - *used) {
			rc = IH_ETOOBIG;
			break;
		}
		*used += (size_t)n;
	}
	sqlite3_finalize(stmt);
	return rc;
}

int
store_console_explain(struct store *st, char *buf, size_t len, char *err,
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

	if (len == 0)
		return IH_EINVAL;
	buf[0] = '\0';
	for (i = 0; i < sizeof(q) / sizeof(q[0]); i++) {
		rc = explain_one(store_sqlite(st), q[i].name, q[i].sql,
		    buf, len, &used, err, errlen);
		if (rc != IH_OK)
			return rc;
	}
	return IH_OK;
}
