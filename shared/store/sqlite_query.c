/* sqlite_query.c -- SQLite: the operator's queries. */
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


/*
 * The operator's view: list, show, attempts, requeue, purge, stats.
 * Statements are prepared per call (the operator's command runs each
 * once) on the open connection, and finalized on the way out.
 */

/* The columns of a struct store_row, in fill_row()'s order. */
#define STORE_ROW_COLS \
	"id, provider, event_id, event_type, subtype, order_key, status," \
	" received_at, last_seen_at, duplicates, attempts, next_attempt_at," \
	" coalesce(done_at, 0), coalesce(purged_at, 0)," \
	" coalesce(lease_until, 0), lease_owner, last_error," \
	" " SQ_HAS_PAYLOAD ", coalesce(" SQ_PAYLOAD_LEN ", 0)," \
	" json_object('provider', provider, 'event_id', event_id," \
	" 'type', event_type, 'subtype', subtype, 'status', status," \
	" 'received_at', received_at, 'last_seen_at', last_seen_at," \
	" 'duplicates', duplicates, 'attempts', attempts," \
	" 'next_attempt_at', next_attempt_at, 'done_at', done_at," \
	" 'purged_at', purged_at, 'last_error', last_error," \
	" 'api_version', api_version," \
	" 'payload_bytes', " SQ_PAYLOAD_LEN ", 'account', account," \
	" 'source_account', source_account)," \
	" api_version, account, needs_fetch, source_account"
/* How many columns STORE_ROW_COLS has: what follows it counts from here. */
#define ROW_NCOLS	24

/* A struct store_filter's terms, bound by bind_filter(); limit is ?7. */
#define STORE_FILTER_SQL \
	" (?1 IS NULL OR provider = ?1) AND (?2 IS NULL OR event_id = ?2)" \
	" AND (?3 IS NULL OR event_type = ?3) AND (?4 IS NULL OR status = ?4)" \
	" AND (?5 = 0 OR received_at >= ?5) AND (?6 = 0 OR received_at < ?6)" \
	" AND (?11 IS NULL OR account = ?11)" \
	" AND (?13 IS NULL OR source_account = ?13)"

/* What replay may take: finished, failed or set aside, with a payload. */
#define STORE_REPLAYABLE_SQL \
	" AND status IN ('done', 'failed', 'dead', 'quarantined', 'held')" \
	" AND " SQ_HAS_PAYLOAD

static void
bind_filter(sqlite3_stmt *s, const struct store_filter *f)
{
	sq_bind_text(s, 1, f->provider);
	sq_bind_text(s, 2, f->event_id);
	sq_bind_text(s, 3, f->event_type);
	sq_bind_text(s, 4, f->status);
	sqlite3_bind_int64(s, 5, f->since_ms > 0 ? f->since_ms : 0);
	sqlite3_bind_int64(s, 6, f->until_ms > 0 ? f->until_ms : 0);
	sqlite3_bind_int64(s, 7, f->limit > 0 ? f->limit : -1);
	sq_bind_text(s, 11, f->account);
	sq_bind_text(s, 13, f->source_account);
}

static const char *
col_text(sqlite3_stmt *s, int col)
{
	return (const char *)sqlite3_column_text(s, col);
}

/* Fills row from the STORE_ROW_COLS of the current result row. */
static void
fill_row(sqlite3_stmt *s, struct store_row *row)
{
	memset(row, 0, sizeof(*row));
	row->rowid = sqlite3_column_int64(s, 0);
	row->provider = col_text(s, 1);
	row->event_id = col_text(s, 2);
	row->event_type = col_text(s, 3);
	row->subtype = col_text(s, 4);
	row->order_key = col_text(s, 5);
	row->status = col_text(s, 6);
	row->received_at = sqlite3_column_int64(s, 7);
	row->last_seen_at = sqlite3_column_int64(s, 8);
	row->duplicates = sqlite3_column_int64(s, 9);
	row->attempts = sqlite3_column_int64(s, 10);
	row->next_attempt_at = sqlite3_column_int64(s, 11);
	row->done_at = sqlite3_column_int64(s, 12);
	row->purged_at = sqlite3_column_int64(s, 13);
	row->lease_until = sqlite3_column_int64(s, 14);
	row->lease_owner = col_text(s, 15);
	row->last_error = col_text(s, 16);
	row->has_payload = sqlite3_column_int(s, 17);
	row->payload_len = sqlite3_column_int64(s, 18);
	row->json = col_text(s, 19);
	row->api_version = col_text(s, 20);
	row->account = col_text(s, 21);
	row->needs_fetch = sqlite3_column_int(s, 22) != 0;
	row->source_account = col_text(s, 23);
	store_row_defaults(row);
}

/*
 * Fills row from STORE_ROW_COLS followed by headers and payload (columns
 * ROW_NCOLS and ROW_NCOLS + 1); an event that kept an empty payload
 * reads as "", not NULL.
 */
static void
fill_row_body(sqlite3_stmt *s, struct store_row *row)
{
	fill_row(s, row);
	row->headers = col_text(s, ROW_NCOLS);
	if (row->headers == NULL)
		row->headers = "";
	row->payload = sqlite3_column_blob(s, ROW_NCOLS + 1);
	row->payload_len = sqlite3_column_bytes(s, ROW_NCOLS + 1);
	if (row->payload == NULL && row->has_payload)
		row->payload = (const unsigned char *)"";
}

/* Steps s to the end, calling fn per row; rc of the walk. */
static int
walk_rows(struct sq *st, sqlite3_stmt *s, store_row_fn fn, void *arg,
    long *count, const char *what, char *err, size_t errlen)
{
	struct store_row row;
	int rc, step;

	for (;;) {
		step = sqlite3_step(s);
		if (step == SQLITE_DONE)
			return IH_OK;
		if (step != SQLITE_ROW)
			return sq_fail(st, step, what, err, errlen);
		fill_row(s, &row);
		if (count != NULL)
			(*count)++;
		if (fn != NULL) {
			rc = fn(arg, &row);
			if (rc != IH_OK)
				return rc;
		}
	}
}

int
sq_list(struct store *base, const struct store_filter *f, store_row_fn fn,
    void *arg, char *err, size_t errlen)
{
	struct sq *st = sq_of(base);
	sqlite3_stmt *s = NULL;
	int rc;

	/* Newest first, as git log lists: the recent events are the asked. */
	rc = sq_prepare(st, "SELECT " STORE_ROW_COLS " FROM events WHERE"
	    STORE_FILTER_SQL " AND (?12 = 0 OR needs_fetch <> 0)"
	    " ORDER BY id DESC LIMIT ?7", &s, err, errlen);
	if (rc != IH_OK)
		goto out;
	bind_filter(s, f);
	sqlite3_bind_int(s, 12, f->needs_fetch != 0);
	rc = walk_rows(st, s, fn, arg, NULL, "cannot list events", err,
	    errlen);
out:
	sqlite3_finalize(s);
	return rc;
}

int
sq_show(struct store *base, const char *provider, const char *account,
    const char *event_id, store_row_fn fn, void *arg, char *err,
    size_t errlen)
{
	struct sq *st = sq_of(base);
	sqlite3_stmt *s = NULL;
	struct store_row row;
	int rc, step;

	rc = sq_prepare(st, "SELECT " STORE_ROW_COLS ", headers, " SQ_PAYLOAD
	    " FROM events WHERE provider = ?1 AND event_id = ?2"
	    " AND account = ?3", &s, err, errlen);
	if (rc != IH_OK)
		goto out;
	sqlite3_bind_text(s, 1, provider, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, event_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 3, account_or_default(account), -1,
	    SQLITE_STATIC);
	step = sqlite3_step(s);
	if (step == SQLITE_DONE) {
		snprintf(err, errlen, "no %s event with id %s in account %s",
		    provider, event_id, account_or_default(account));
		rc = IH_ENOTFOUND;
		goto out;
	}
	if (step != SQLITE_ROW) {
		rc = sq_fail(st, step, "cannot read event", err, errlen);
		goto out;
	}
	fill_row_body(s, &row);
	rc = fn(arg, &row);
out:
	sqlite3_finalize(s);
	return rc;
}

int
sq_kept(struct store *base, int64_t rowid, char **out, char *err,
    size_t errlen)
{
	struct sq *st = sq_of(base);
	sqlite3_stmt *s = NULL;
	const char *h;
	int rc, step;

	rc = sq_prepare(st, "SELECT headers FROM events WHERE id = ?1", &s,
	    err, errlen);
	if (rc != IH_OK)
		goto out;
	sqlite3_bind_int64(s, 1, rowid);
	step = sqlite3_step(s);
	if (step == SQLITE_DONE) {
		snprintf(err, errlen, "no event at row %lld", (long long)rowid);
		rc = IH_ENOTFOUND;
		goto out;
	}
	if (step != SQLITE_ROW) {
		rc = sq_fail(st, step, "cannot read event", err, errlen);
		goto out;
	}
	h = (const char *)sqlite3_column_text(s, 0);
	*out = strdup(h != NULL ? h : "");
	rc = *out != NULL ? IH_OK : IH_ENOMEM;
out:
	sqlite3_finalize(s);
	return rc;
}

int
sq_attempts(struct store *base, int64_t rowid,
    int (*fn)(void *arg, const struct store_attempt *a), void *arg,
    char *err, size_t errlen)
{
	struct sq *st = sq_of(base);
	sqlite3_stmt *s = NULL;
	struct store_attempt a;
	int rc;

	rc = sq_prepare(st, "SELECT attempt, started_at, "
	    "coalesce(finished_at, 0), outcome, error FROM attempts "
	    "WHERE event = ?1 ORDER BY attempt",
	    &s, err, errlen);
	if (rc != IH_OK)
		goto out;
	sqlite3_bind_int64(s, 1, rowid);
	while (rc == IH_OK &&
	    sq_row(st, s, "cannot read attempts", &rc, err, errlen)) {
		a.attempt = sqlite3_column_int64(s, 0);
		a.started_at = sqlite3_column_int64(s, 1);
		a.finished_at = sqlite3_column_int64(s, 2);
		a.outcome = col_text(s, 3);
		a.error = col_text(s, 4);
		rc = fn(arg, &a);
	}
out:
	sqlite3_finalize(s);
	return rc;
}

int
sq_requeue(struct store *base, const struct store_filter *f, int dry_run,
    int64_t now_ms, store_row_fn fn, void *arg, long *count, char *err,
    size_t errlen)
{
	struct sq *st = sq_of(base);
	sqlite3_stmt *s = NULL;
	int rc;

	*count = 0;
	if (dry_run)
		rc = sq_prepare(st, "SELECT " STORE_ROW_COLS
		    " FROM events WHERE" STORE_FILTER_SQL STORE_REPLAYABLE_SQL
		    " ORDER BY id LIMIT ?7", &s, err, errlen);
	else
		/*
		 * One batch: the next rows past ?9, up to ?7 of them and,
		 * past the first, ?10 bytes of payload in all (length()
		 * reads no payload; the payloads table is never rewritten).
		 */
		rc = sq_prepare(st, "UPDATE events SET status = 'received',"
		    " next_attempt_at = ?8, attempts = 0, lease_owner = NULL,"
		    " lease_until = NULL, done_at = NULL"
		    " WHERE id IN (SELECT id FROM (SELECT id, sum(len) OVER"
		    " (ORDER BY id) - len AS before, len FROM (SELECT id,"
		    " coalesce(" SQ_PAYLOAD_LEN ", 0) AS len FROM events WHERE"
		    STORE_FILTER_SQL STORE_REPLAYABLE_SQL " AND id > ?9"
		    " ORDER BY id LIMIT ?7)) WHERE ?10 <= 0 OR before = 0 OR"
		    " before + len <= ?10)"
		    " RETURNING " STORE_ROW_COLS, &s, err, errlen);
	if (rc != IH_OK)
		goto out;
	bind_filter(s, f);
	if (!dry_run) {
		sqlite3_bind_int64(s, 8, now_ms);
		sqlite3_bind_int64(s, 9, f->after_rowid);
		sqlite3_bind_int64(s, 10, f->max_bytes);
	}
	rc = walk_rows(st, s, fn, arg, count, "cannot requeue events", err,
	    errlen);
	sqlite3_reset(s);
	if (rc != IH_OK)
		*count = 0;
out:
	sqlite3_finalize(s);
	return rc;
}

/* Runs s (bound) once; *n is the number of rows it changed. */
static int
step_changes(struct sq *st, sqlite3_stmt *s, long *n, const char *what,
    char *err, size_t errlen)
{
	int rc;

	rc = sq_step_done(st, s, what, err, errlen);
	*n = rc == IH_OK ? (long)sqlite3_changes(st->db) : 0;
	return rc;
}

/* Runs a bound count query into *n. */
static int
step_count(struct sq *st, sqlite3_stmt *s, long *n, const char *what,
    char *err, size_t errlen)
{
	int step;

	step = sqlite3_step(s);
	*n = step == SQLITE_ROW ? (long)sqlite3_column_int64(s, 0) : 0;
	sqlite3_reset(s);
	if (step != SQLITE_ROW)
		return sq_fail(st, step, what, err, errlen);
	return IH_OK;
}

/* What purge may touch: ?6 set takes dead letters too; ?8 one type. */
#define STORE_PURGE_STATUS_SQL \
	" (status IN ('done', 'quarantined') OR (?6 AND status = 'dead'))" \
	" AND (?8 IS NULL OR event_type = ?8)"

/* A row purge may delete: ?1 provider, ?2 payload cutoff, ?3 row cutoff. */
#define STORE_PURGE_ROW_SQL \
	" provider = ?1 AND (?7 IS NULL OR account = ?7) AND" \
	STORE_PURGE_STATUS_SQL \
	" AND received_at < ?2 AND ?3 > 0 AND last_seen_at < ?3"

/* A payload purge may drop (of a row it keeps). */
#define STORE_PURGE_PAYLOAD_SQL \
	" provider = ?1 AND (?7 IS NULL OR account = ?7) AND" \
	STORE_PURGE_STATUS_SQL " AND received_at < ?2 AND " SQ_HAS_PAYLOAD

/* Dead letters past the payload cutoff that purge keeps. */
#define STORE_PURGE_DEAD_SQL \
	"SELECT count(*) FROM events WHERE provider = ?1 AND NOT ?6" \
	" AND (?7 IS NULL OR account = ?7)" \
	" AND (?8 IS NULL OR event_type = ?8)" \
	" AND status = 'dead' AND received_at < ?2"

int
sq_purge(struct store *base, struct store_purge *p, char *err,
    size_t errlen)
{
	struct sq *st = sq_of(base);
	sqlite3_stmt *rows = NULL, *payloads = NULL, *dead = NULL;
	struct timespec nap = { 0, 1000000 };
	long batch = p->batch > 0 ? p->batch : 500, n;
	int rc;

	p->payloads = 0;
	p->rows = 0;
	p->dead_kept = 0;
	rc = sq_prepare(st, STORE_PURGE_DEAD_SQL, &dead, err, errlen);
	if (rc != IH_OK)
		goto out;
	sqlite3_bind_text(dead, 1, p->provider, -1, SQLITE_STATIC);
	sqlite3_bind_int64(dead, 2, p->payload_before_ms);
	sqlite3_bind_int(dead, 6, p->include_dead != 0);
	sq_bind_text(dead, 7, p->account);
	sq_bind_text(dead, 8, p->event_type);
	rc = step_count(st, dead, &p->dead_kept, "cannot count dead events",
	    err, errlen);
	if (rc != IH_OK)
		goto out;
	if (p->dry_run) {
		rc = sq_prepare(st, "SELECT count(*) FROM events WHERE"
		    STORE_PURGE_ROW_SQL, &rows, err, errlen);
		if (rc == IH_OK)
			rc = sq_prepare(st, "SELECT count(*) FROM events WHERE"
			    STORE_PURGE_PAYLOAD_SQL " AND NOT ("
			    STORE_PURGE_ROW_SQL ")", &payloads, err, errlen);
	} else {
		rc = sq_prepare(st, "DELETE FROM events WHERE id IN (SELECT id"
		    " FROM events WHERE" STORE_PURGE_ROW_SQL " LIMIT ?4)",
		    &rows, err, errlen);
		if (rc == IH_OK)
			rc = sq_prepare(st, "UPDATE events SET"
			    " purged_at = ?5 WHERE id IN (SELECT id FROM events"
			    " WHERE" STORE_PURGE_PAYLOAD_SQL " LIMIT ?4)",
			    &payloads, err, errlen);
	}
	if (rc != IH_OK)
		goto out;
	sqlite3_bind_text(rows, 1, p->provider, -1, SQLITE_STATIC);
	sqlite3_bind_int64(rows, 2, p->payload_before_ms);
	sqlite3_bind_int64(rows, 3, p->row_before_ms);
	sqlite3_bind_text(payloads, 1, p->provider, -1, SQLITE_STATIC);
	sqlite3_bind_int64(payloads, 2, p->payload_before_ms);
	sqlite3_bind_int64(payloads, 3, p->row_before_ms);
	sqlite3_bind_int(rows, 6, p->include_dead != 0);
	sqlite3_bind_int(payloads, 6, p->include_dead != 0);
	sq_bind_text(rows, 7, p->account);
	sq_bind_text(payloads, 7, p->account);
	sq_bind_text(rows, 8, p->event_type);
	sq_bind_text(payloads, 8, p->event_type);
	if (p->dry_run) {
		rc = step_count(st, rows, &p->rows, "cannot count rows", err,
		    errlen);
		if (rc == IH_OK)
			rc = step_count(st, payloads, &p->payloads,
			    "cannot count payloads", err, errlen);
		goto out;
	}
	sqlite3_bind_int64(rows, 4, batch);
	sqlite3_bind_int64(payloads, 4, batch);
	sqlite3_bind_int64(payloads, 5, clock_wall_ms());
	/* Each statement is its own short transaction. */
	do {
		rc = step_changes(st, rows, &n, "cannot delete rows", err,
		    errlen);
		if (rc != IH_OK)
			goto out;
		p->rows += n;
		nanosleep(&nap, NULL);
	} while (n == batch);
	do {
		rc = step_changes(st, payloads, &n, "cannot drop payloads",
		    err, errlen);
		if (rc != IH_OK)
			goto out;
		p->payloads += n;
		nanosleep(&nap, NULL);
	} while (n == batch);
out:
	sqlite3_finalize(rows);
	sqlite3_finalize(payloads);
	sqlite3_finalize(dead);
	return rc;
}

/* The pth percentile (nearest rank) of the provider's latencies. */
static int
percentile(struct sq *st, sqlite3_stmt *s, const struct store_stats *x,
    int pct, int64_t *out, char *err, size_t errlen)
{
	int64_t k;
	int step;

	*out = -1;
	if (x->latency_n <= 0)
		return IH_OK;
	k = (x->latency_n * pct + 99) / 100;
	if (k < 1)
		k = 1;
	sqlite3_bind_text(s, 1, x->provider, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(s, 5, x->account, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(s, 4, k - 1);
	step = sqlite3_step(s);
	if (step == SQLITE_ROW)
		*out = sqlite3_column_int64(s, 0);
	sqlite3_reset(s);
	if (step != SQLITE_ROW && step != SQLITE_DONE)
		return sq_fail(st, step, "cannot compute latency", err, errlen);
	return IH_OK;
}

int
sq_stats(struct store *base, const char *provider, int64_t since_ms,
    int64_t until_ms, int (*fn)(void *arg, const struct store_stats *s),
    void *arg, char *err, size_t errlen)
{
	struct sq *st = sq_of(base);
	sqlite3_stmt *s = NULL, *lat = NULL;
	struct store_stats x;
	const char *name;
	int rc, txn = 0;

	rc = sq_prepare(st, "SELECT provider, sum(w),"
	    " sum(CASE WHEN w THEN duplicates ELSE 0 END),"
	    " sum(w AND status = 'received'), sum(w AND status = 'processing'),"
	    " sum(w AND status = 'done'), sum(w AND status = 'failed'),"
	    " sum(w AND status = 'dead'), sum(w AND status = 'quarantined'),"
	    " sum(w AND status = 'done' AND done_at IS NOT NULL),"
	    " sum(CASE WHEN w AND status = 'done' AND done_at IS NOT NULL"
	    "  THEN done_at - received_at ELSE 0 END),"
	    " min(CASE WHEN status IN ('received', 'processing', 'failed')"
	    "  THEN received_at END),"
	    " sum(status IN ('received', 'processing', 'failed')), account,"
	    " sum(status = 'held')"
	    " FROM (SELECT provider, account, duplicates, status,"
	    "  received_at, done_at,"
	    "  (received_at >= ?2 AND received_at < ?3) AS w FROM events"
	    "  WHERE (?1 IS NULL OR provider = ?1)"
	    "  AND ((received_at >= ?2 AND received_at < ?3)"
	    "  OR status IN ('received', 'processing', 'failed', 'held')))"
	    " GROUP BY provider, account ORDER BY provider, account", &s, err,
	    errlen);
	if (rc == IH_OK)
		rc = sq_prepare(st, "SELECT done_at - received_at FROM events"
		    " WHERE provider = ?1 AND account = ?5 AND status = 'done'"
		    " AND done_at IS NOT NULL"
		    " AND received_at >= ?2 AND received_at < ?3"
		    " ORDER BY 1 LIMIT 1 OFFSET ?4", &lat, err, errlen);
	if (rc != IH_OK)
		goto out;
	/* One read transaction: every figure comes from one snapshot. */
	if (sqlite3_get_autocommit(st->db)) {
		rc = sq_exec(st, "BEGIN", "cannot begin read", err, errlen);
		if (rc != IH_OK)
			goto out;
		txn = 1;
	}
	sq_bind_text(s, 1, provider);
	sqlite3_bind_int64(s, 2, since_ms);
	sqlite3_bind_int64(s, 3, until_ms);
	sqlite3_bind_int64(lat, 2, since_ms);
	sqlite3_bind_int64(lat, 3, until_ms);
	while (rc == IH_OK &&
	    sq_row(st, s, "cannot compute stats", &rc, err, errlen)) {
		memset(&x, 0, sizeof(x));
		name = col_text(s, 0);
		snprintf(x.provider, sizeof(x.provider), "%s",
		    name != NULL ? name : "");
		x.events = sqlite3_column_int64(s, 1);
		x.duplicates = sqlite3_column_int64(s, 2);
		x.received = sqlite3_column_int64(s, 3);
		x.processing = sqlite3_column_int64(s, 4);
		x.done = sqlite3_column_int64(s, 5);
		x.failed = sqlite3_column_int64(s, 6);
		x.dead = sqlite3_column_int64(s, 7);
		x.quarantined = sqlite3_column_int64(s, 8);
		x.latency_n = sqlite3_column_int64(s, 9);
		x.latency_sum_ms = sqlite3_column_int64(s, 10);
		x.oldest_pending_ms = sqlite3_column_int64(s, 11);
		x.pending = sqlite3_column_int64(s, 12);
		name = col_text(s, 13);
		snprintf(x.account, sizeof(x.account), "%s",
		    name != NULL ? name : "");
		x.held = sqlite3_column_int64(s, 14);
		rc = percentile(st, lat, &x, 50, &x.p50_ms, err, errlen);
		if (rc == IH_OK)
			rc = percentile(st, lat, &x, 95, &x.p95_ms, err,
			    errlen);
		if (rc == IH_OK)
			rc = percentile(st, lat, &x, 99, &x.p99_ms, err,
			    errlen);
		if (rc == IH_OK)
			rc = sq_stats_waiting(st, &x, since_ms, until_ms, err,
			    errlen);
		if (rc != IH_OK)
			goto out;
		rc = fn(arg, &x);
	}
out:
	sqlite3_finalize(s);
	sqlite3_finalize(lat);
	if (txn)
		sqlite3_exec(st->db, "COMMIT", NULL, NULL, NULL);
	return rc;
}


/*
 * Copying out (idemhook copy).  Reads run outside any transaction: in WAL
 * mode they never wait for the receivers, nor make them wait.
 */
int
sq_copy_count(struct store *base, int64_t *events, char *err, size_t errlen)
{
	struct sq *st = sq_of(base);
	sqlite3_stmt *s = NULL;
	long n = 0;
	int rc;

	rc = sq_prepare(st, "SELECT count(*) FROM events", &s, err, errlen);
	if (rc == IH_OK)
		rc = step_count(st, s, &n, "cannot count events", err, errlen);
	*events = n;
	sqlite3_finalize(s);
	return rc;
}

int
sq_copy_read(struct store *base, int64_t after, long limit, store_row_fn fn,
    void *arg, char *err, size_t errlen)
{
	struct sq *st = sq_of(base);
	sqlite3_stmt *s = NULL;
	struct store_row row;
	int rc;

	rc = sq_prepare(st, "SELECT " STORE_ROW_COLS ", headers, " SQ_PAYLOAD
	    ", fingerprint FROM events WHERE id > ?1"
	    " ORDER BY id LIMIT ?2", &s,
	    err, errlen);
	if (rc != IH_OK)
		goto out;
	sqlite3_bind_int64(s, 1, after);
	sqlite3_bind_int64(s, 2, limit);
	while (rc == IH_OK &&
	    sq_row(st, s, "cannot read events", &rc, err, errlen)) {
		fill_row_body(s, &row);
		row.fingerprint = col_text(s, ROW_NCOLS + 2);
		rc = fn(arg, &row);
	}
out:
	sqlite3_finalize(s);
	return rc;
}

int
sq_effects(struct store *base, int64_t rowid,
    int (*fn)(void *, const char *, int64_t), void *arg, char *err,
    size_t errlen)
{
	struct sq *st = sq_of(base);
	sqlite3_stmt *s = NULL;
	const char *kind;
	int rc;

	rc = sq_prepare(st, "SELECT kind, created_at FROM effects"
	    " WHERE event = ?1 ORDER BY kind", &s, err, errlen);
	if (rc != IH_OK)
		goto out;
	sqlite3_bind_int64(s, 1, rowid);
	while (rc == IH_OK &&
	    sq_row(st, s, "cannot read effects", &rc, err, errlen)) {
		kind = col_text(s, 0);
		rc = fn(arg, kind != NULL ? kind : "",
		    sqlite3_column_int64(s, 1));
	}
out:
	sqlite3_finalize(s);
	return rc;
}
