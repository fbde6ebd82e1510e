/*
 * pg_console.c -- PostgreSQL: the console's reads (store_console.h).
 * Each is one statement in autocommit with its parameters bound: a
 * reader takes one MVCC snapshot and no lock a receiver's write waits
 * for.  The answers are SQLite's (sqlite_console.c): the type pattern,
 * a GLOB there, becomes an anchored regular expression here (glob_re()),
 * the search text is found among the bytes as instr() finds it, and text
 * sorts bytewise.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "clock.h"
#include "ih.h"
#include "pg_int.h"
#include "smoke.h"
#include "utf8.h"

static const char SQL_COUNTS[] =
    "SELECT provider, status, count(*), max(received_at) FROM events"
    " GROUP BY provider, status"
    " ORDER BY provider COLLATE \"C\", status COLLATE \"C\"";

static const char SQL_HOURS[] =
    "SELECT (received_at - $1) / 3600000, count(*),"
    " coalesce(sum(duplicates), 0),"
    " count(*) FILTER (WHERE status IN ('failed', 'dead'))"
    " FROM events WHERE received_at >= $1 AND received_at < $2"
    " GROUP BY 1";

static const char SQL_LATENCY[] =
    "SELECT (received_at - $1) / 3600000, done_at - received_at"
    " FROM events WHERE received_at >= $1 AND received_at < $2"
    " AND done_at IS NOT NULL ORDER BY received_at LIMIT $3";

/*
 * The last delivery, for the console and the silence alert: idemhook
 * smoke's test events are none of the provider's (smoke.h).
 */
#define NOT_SMOKE	" AND event_type <> '" SMOKE_TYPE "'"

/* One backward look-up of the provider-status index per status. */
static const char SQL_LAST[] =
    "SELECT greatest(0,"
    " (SELECT max(received_at) FROM events WHERE provider = $1"
    " AND status = 'received'" NOT_SMOKE "),"
    " (SELECT max(received_at) FROM events WHERE provider = $1"
    " AND status = 'processing'" NOT_SMOKE "),"
    " (SELECT max(received_at) FROM events WHERE provider = $1"
    " AND status = 'done'" NOT_SMOKE "),"
    " (SELECT max(received_at) FROM events WHERE provider = $1"
    " AND status = 'failed'" NOT_SMOKE "),"
    " (SELECT max(received_at) FROM events WHERE provider = $1"
    " AND status = 'dead'" NOT_SMOKE "))";

static const char SQL_BOUNDS[] = "SELECT min(id), max(id) FROM events";

static const char SQL_LIST[] =
    "SELECT id, provider, event_id, event_type, subtype, status,"
    " received_at, last_seen_at, duplicates, attempts, next_attempt_at,"
    " coalesce(done_at, 0), last_error, (" PG_HAS_PAYLOAD ")::int,"
    " coalesce(" PG_PAYLOAD_LEN ", 0), account FROM events"
    " WHERE id < $1 AND id >= $2 AND ($10::text IS NULL OR account = $10)"
    " AND ($3::text IS NULL OR provider = $3)"
    " AND ($4::text IS NULL OR status = $4)"
    " AND ($5::text IS NULL OR event_type ~ $5)"
    " AND ($6::bytea IS NULL"
    " OR position($6 IN convert_to(event_id, 'UTF8')) > 0"
    " OR position($6 IN convert_to(event_type, 'UTF8')) > 0"
    " OR position($6 IN convert_to(coalesce(source_account, ''), 'UTF8'))"
    " > 0)"
    " AND ($7::bigint = 0 OR received_at >= $7)"
    " AND ($8::bigint = 0 OR received_at < $8)"
    " ORDER BY id DESC LIMIT $9";
#define LIST_TYPES	"iitttbiiit"

/*
 * The store's size: every table of the events table's schema (the
 * store's own, as a dedicated database or schema holds them), with its
 * indexes and TOAST, as SQLite's file holds them all.
 */
static const char SQL_SIZE[] =
    "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint"
    " FROM pg_class c WHERE c.relkind = 'r' AND c.relnamespace ="
    " (SELECT relnamespace FROM pg_class WHERE oid = 'events'::regclass)";

/*
 * The code point at s, a NUL-terminated string, with its length in *n;
 * -1 for a byte sequence that is not UTF-8 as PostgreSQL takes it.  The
 * NUL ends any sequence it cuts, so nothing past it is read.
 */
static long
utf8_next(const unsigned char *s, size_t *n)
{
	uint32_t c;

	*n = utf8_decode(s, 4, &c);
	return *n > 0 ? (long)c : -1;
}

static int
utf8_ok(const char *s)
{
	size_t n;

	if (s == NULL)
		return 1;
	while (*s != '\0') {
		if (utf8_next((const unsigned char *)s, &n) < 0)
			return 0;
		s += n;
	}
	return 1;
}

/* Appends one character of s (n bytes), quoted when it means more. */
static void
re_char(char *out, size_t *o, const char *s, size_t n, const char *meta)
{
	if (n == 1 && strchr(meta, *s) != NULL)
		out[(*o)++] = '\\';
	memcpy(out + *o, s, n);
	*o += n;
}

#define RE_META		"\\^$.|?*+()[]{}"
#define RE_SET_META	"\\^-[]"

/*
 * Translates the bracket of a GLOB at *g (just past its '[') as SQLite
 * reads it: '^' first inverts, ']' first is a member, "a-z" is a range
 * when there is a character before the '-' and one other than ']' after
 * it; a range whose ends are reversed holds nothing (its start stays a
 * member, so a set is never empty).  Returns the pattern's text after
 * the closing ']', or NULL when there is none (or bytes that are not
 * UTF-8): the pattern then matches nothing.
 */
static const char *
glob_set(const char *g, char *out, size_t *o)
{
	size_t n, n2;
	long c, c2, prior = 0;

	out[(*o)++] = '[';
	if (*g == '^') {
		out[(*o)++] = '^';
		g++;
	}
	if (*g == ']')
		re_char(out, o, g++, 1, RE_SET_META);
	while (*g != '\0' && *g != ']') {
		c = utf8_next((const unsigned char *)g, &n);
		if (c < 0)
			return NULL;
		if (c == '-' && g[1] != ']' && g[1] != '\0' && prior > 0) {
			c2 = utf8_next((const unsigned char *)g + 1, &n2);
			if (c2 < 0)
				return NULL;
			if (prior <= c2) {
				out[(*o)++] = '-';
				re_char(out, o, g + 1, n2, RE_SET_META);
			}
			g += 1 + n2;
			prior = 0;
			continue;
		}
		/* A member, and the start of a range that may follow. */
		re_char(out, o, g, n, RE_SET_META);
		prior = c;
		g += n;
	}
	if (*g != ']')
		return NULL;
	out[(*o)++] = ']';
	return g + 1;
}

/*
 * Translates SQLite's GLOB g into an anchored regular expression of
 * PostgreSQL (an ARE) that matches the same strings: '*' any run, '?'
 * one character, '[...]' a set (glob_set()), anything else itself.
 * Sets *never when g can match nothing (an unterminated set, bytes that
 * are not UTF-8).  The result is malloc'ed.
 */
static int
glob_re(const char *g, char **re, int *never)
{
	size_t o = 0, n;
	char *out;

	*never = 0;
	*re = NULL;
	/* Each byte becomes two at most, plus the anchors and NUL. */
	out = malloc(2 * strlen(g) + 4);
	if (out == NULL)
		return IH_ENOMEM;
	out[o++] = '^';
	while (*g != '\0' && !*never) {
		if (*g == '*') {
			memcpy(out + o, ".*", 2);
			o += 2;
			g++;
		} else if (*g == '?') {
			out[o++] = '.';
			g++;
		} else if (*g == '[') {
			g = glob_set(g + 1, out, &o);
			if (g == NULL) {
				*never = 1;
				break;
			}
		} else if (utf8_next((const unsigned char *)g, &n) < 0)
			*never = 1;
		else {
			re_char(out, &o, g, n, RE_META);
			g += n;
		}
	}
	out[o++] = '$';
	out[o] = '\0';
	*re = out;
	return IH_OK;
}

/* What the three series below hand each row to: one of the fns. */
struct series_walk {
	store_console_count_fn	 counts;
	int	(*hours)(void *, int64_t, int64_t, int64_t, int64_t);
	int	(*latency)(void *, int64_t, int64_t);
	void	*arg;
};

static int
series_row(void *arg, const PGresult *r, int i)
{
	const struct series_walk *w = arg;

	if (w->counts != NULL)
		return w->counts(w->arg, PQgetvalue(r, i, 0),
		    PQgetvalue(r, i, 1), pg_getint(r, i, 2),
		    pg_getint(r, i, 3));
	if (w->hours != NULL)
		return w->hours(w->arg, pg_getint(r, i, 0),
		    pg_getint(r, i, 1), pg_getint(r, i, 2),
		    pg_getint(r, i, 3));
	return w->latency(w->arg, pg_getint(r, i, 0), pg_getint(r, i, 1));
}

int
pg_console_counts(struct store *base, store_console_count_fn fn, void *arg,
    char *err, size_t errlen)
{
	struct series_walk w = { fn, NULL, NULL, arg };
	struct pg_params p;

	memset(&p, 0, sizeof(p));
	return pg_each(pg_of(base), SQL_COUNTS, "", &p, "counts", series_row,
	    &w, err, errlen);
}

int
pg_console_hours(struct store *base, int64_t start, int64_t end,
    int (*fn)(void *, int64_t, int64_t, int64_t, int64_t), void *arg,
    char *err, size_t errlen)
{
	struct series_walk w = { NULL, fn, NULL, arg };
	struct pg_params p;

	memset(&p, 0, sizeof(p));
	pg_int(&p, start);
	pg_int(&p, end);
	return pg_each(pg_of(base), SQL_HOURS, "ii", &p, "series", series_row,
	    &w, err, errlen);
}

int
pg_console_latency(struct store *base, int64_t start, int64_t end,
    long max, int (*fn)(void *, int64_t, int64_t), void *arg, char *err,
    size_t errlen)
{
	struct series_walk w = { NULL, NULL, fn, arg };
	struct pg_params p;

	memset(&p, 0, sizeof(p));
	pg_int(&p, start);
	pg_int(&p, end);
	pg_int(&p, max);
	return pg_each(pg_of(base), SQL_LATENCY, "iii", &p, "latency",
	    series_row, &w, err, errlen);
}

int
pg_console_size(struct store *base, int64_t *bytes, char *err,
    size_t errlen)
{
	struct pg_params p;
	PGresult *r;

	memset(&p, 0, sizeof(p));
	r = pg_exec_sql(pg_of(base), SQL_SIZE, "", &p, PGRES_TUPLES_OK,
	    "size", err, errlen);
	if (r == NULL)
		return IH_ESTORE;
	*bytes = PQntuples(r) == 1 ? pg_getint(r, 0, 0) : 0;
	PQclear(r);
	return IH_OK;
}

int
pg_console_bounds(struct store *base, int *empty, int64_t *lo, int64_t *hi,
    char *err, size_t errlen)
{
	struct pg_params p;
	PGresult *r;

	*empty = 1;
	*lo = *hi = 0;
	memset(&p, 0, sizeof(p));
	r = pg_exec_sql(pg_of(base), SQL_BOUNDS, "", &p, PGRES_TUPLES_OK,
	    "bounds", err, errlen);
	if (r == NULL)
		return IH_ESTORE;
	if (PQntuples(r) == 1 && !PQgetisnull(r, 0, 0)) {
		*empty = 0;
		*lo = pg_getint(r, 0, 0);
		*hi = pg_getint(r, 0, 1);
	}
	PQclear(r);
	return IH_OK;
}

static const char *
or_null(const char *v)
{
	return v != NULL && *v != '\0' ? v : NULL;
}

int
pg_console_window(struct store *base, const struct store_console_query *q,
    int64_t hi, int64_t lo, long limit, store_row_fn fn, void *arg,
    char *err, size_t errlen)
{
	struct store_row row;
	struct pg_params p;
	PGresult *r = NULL;
	char *re = NULL;
	int i, rc = IH_OK, never = 0;

	/* Text that is not UTF-8 equals no stored (UTF-8) value. */
	if (!utf8_ok(q->provider) || !utf8_ok(q->status))
		return IH_OK;
	if (or_null(q->type_glob) != NULL) {
		rc = glob_re(q->type_glob, &re, &never);
		if (rc != IH_OK || never)
			goto out;
	}
	memset(&p, 0, sizeof(p));
	pg_int(&p, hi);
	pg_int(&p, lo);
	pg_text(&p, or_null(q->provider));
	pg_text(&p, or_null(q->status));
	pg_text(&p, re);
	/* Bytes, as SQLite's instr() compares them (any text). */
	if (or_null(q->text) != NULL)
		pg_bytes(&p, q->text, strlen(q->text));
	else
		pg_text(&p, NULL);
	pg_int(&p, q->since_ms > 0 ? q->since_ms : 0);
	pg_int(&p, q->until_ms > 0 ? q->until_ms : 0);
	pg_int(&p, limit);
	pg_text(&p, or_null(q->account));
	r = pg_exec_sql(pg_of(base), SQL_LIST, LIST_TYPES, &p,
	    PGRES_TUPLES_OK, "list", err, errlen);
	if (r == NULL) {
		rc = IH_ESTORE;
		goto out;
	}
	for (i = 0; i < PQntuples(r) && rc == IH_OK; i++) {
		memset(&row, 0, sizeof(row));
		row.rowid = pg_getint(r, i, 0);
		row.provider = pg_gettext(r, i, 1);
		row.event_id = pg_gettext(r, i, 2);
		row.event_type = pg_gettext(r, i, 3);
		row.subtype = pg_gettext(r, i, 4);
		row.status = pg_gettext(r, i, 5);
		row.received_at = pg_getint(r, i, 6);
		row.last_seen_at = pg_getint(r, i, 7);
		row.duplicates = pg_getint(r, i, 8);
		row.attempts = pg_getint(r, i, 9);
		row.next_attempt_at = pg_getint(r, i, 10);
		row.done_at = pg_getint(r, i, 11);
		row.last_error = pg_gettext(r, i, 12);
		row.has_payload = (int)pg_getint(r, i, 13);
		row.payload_len = pg_getint(r, i, 14);
		row.account = pg_gettext(r, i, 15);
		store_row_defaults(&row);
		rc = fn(arg, &row);
	}
out:
	PQclear(r);
	free(re);
	return rc;
}

int
pg_console_last(struct store *base, const char *provider, int64_t *ms,
    char *err, size_t errlen)
{
	struct pg_params p;
	PGresult *r;

	if (!utf8_ok(provider))
		return IH_OK;
	memset(&p, 0, sizeof(p));
	pg_text(&p, provider);
	r = pg_exec_sql(pg_of(base), SQL_LAST, "t", &p, PGRES_TUPLES_OK,
	    "last delivery", err, errlen);
	if (r == NULL)
		return IH_ESTORE;
	*ms = PQntuples(r) == 1 ? pg_getint(r, 0, 0) : 0;
	PQclear(r);
	return IH_OK;
}

/* Appends the plan of sql, one "name: line" per line of EXPLAIN. */
static int
explain_one(struct pgs *st, const char *name, const char *sql,
    const char *types, const struct pg_params *p, char *buf, size_t len,
    size_t *used, char *err, size_t errlen)
{
	char q[2048];
	PGresult *r;
	int i, n, rc = IH_OK;

	n = snprintf(q, sizeof(q), "EXPLAIN %s", sql);
	if (n < 0 || (size_t)n >= sizeof(q))
		return IH_EINVAL;
	r = pg_exec_sql(st, q, types, p, PGRES_TUPLES_OK, "explain", err,
	    errlen);
	if (r == NULL)
		return IH_ESTORE;
	for (i = 0; i < PQntuples(r) && rc == IH_OK; i++)
		rc = store_plan_line(buf, len, used, name, PQgetvalue(r, i, 0));
	PQclear(r);
	return rc;
}

int
pg_console_explain(struct store *base, char *buf, size_t len, char *err,
    size_t errlen)
{
	struct pgs *st = pg_of(base);
	struct pg_params none, hours, lat, list, last;
	int64_t now = clock_wall_ms();
	size_t used = 0;
	PGresult *b;
	int rc;

	memset(&none, 0, sizeof(none));
	memset(&hours, 0, sizeof(hours));
	pg_int(&hours, now - 24 * 3600000LL);
	pg_int(&hours, now);
	lat = hours;
	pg_int(&lat, STORE_CONSOLE_LATENCY_MAX);
	memset(&list, 0, sizeof(list));
	pg_int(&list, 1 + STORE_CONSOLE_WINDOW);
	pg_int(&list, 1);
	pg_text(&list, NULL);
	pg_text(&list, NULL);
	pg_text(&list, NULL);
	pg_text(&list, NULL);
	pg_int(&list, 0);
	pg_int(&list, 0);
	pg_int(&list, 50);
	pg_text(&list, NULL);	/* every account */
	memset(&last, 0, sizeof(last));
	pg_text(&last, "stripe");
	if (pg_ensure(st, err, errlen) != IH_OK)
		return IH_ESTORE;
	/* Sequential scans priced out, for this transaction only. */
	b = pg_wait_exec(st, "BEGIN READ ONLY");
	if (PQresultStatus(b) != PGRES_COMMAND_OK)
		return pg_fail(st, b, "cannot begin explain", err, errlen);
	PQclear(b);
	b = pg_wait_exec(st, "SET LOCAL enable_seqscan = off");
	rc = PQresultStatus(b) == PGRES_COMMAND_OK ? IH_OK :
	    pg_fail(st, b, "cannot set enable_seqscan", err, errlen);
	if (rc == IH_OK) {
		PQclear(b);
		rc = explain_one(st, "counts", SQL_COUNTS, "", &none, buf,
		    len, &used, err, errlen);
	}
	if (rc == IH_OK)
		rc = explain_one(st, "hours", SQL_HOURS, "ii", &hours, buf,
		    len, &used, err, errlen);
	if (rc == IH_OK)
		rc = explain_one(st, "latency", SQL_LATENCY, "iii", &lat,
		    buf, len, &used, err, errlen);
	if (rc == IH_OK)
		rc = explain_one(st, "bounds", SQL_BOUNDS, "", &none, buf,
		    len, &used, err, errlen);
	if (rc == IH_OK)
		rc = explain_one(st, "list", SQL_LIST, LIST_TYPES, &list, buf,
		    len, &used, err, errlen);
	if (rc == IH_OK)
		rc = explain_one(st, "last", SQL_LAST, "t", &last, buf, len,
		    &used, err, errlen);
	if (st->conn != NULL && PQtransactionStatus(st->conn) != PQTRANS_IDLE)
		PQclear(pg_wait_exec(st, "ROLLBACK"));
	return rc;
}
