/*
 * pg_query.c -- PostgreSQL: the operator's queries (list, show, attempts,
 * requeue, purge, stats).  Each runs once per command, so none is
 * prepared ahead; parameters are bound all the same.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libpq-fe.h>

#include "clock.h"
#include "account.h"
#include "ih.h"
#include "pg_int.h"

/* The columns of a struct store_row, in fill_row()'s order. */
#define PG_ROW_COLS \
	"id, provider, event_id, event_type, subtype, order_key, status," \
	" received_at, last_seen_at, duplicates, attempts, next_attempt_at," \
	" coalesce(done_at, 0), coalesce(purged_at, 0)," \
	" coalesce(lease_until, 0), lease_owner, last_error," \
	" (" PG_HAS_PAYLOAD ")::int, coalesce(" PG_PAYLOAD_LEN ", 0)," \
	" json_build_object('provider', provider, 'event_id', event_id," \
	" 'type', event_type, 'subtype', subtype, 'status', status," \
	" 'received_at', received_at, 'last_seen_at', last_seen_at," \
	" 'duplicates', duplicates, 'attempts', attempts," \
	" 'next_attempt_at', next_attempt_at, 'done_at', done_at," \
	" 'purged_at', purged_at, 'last_error', last_error," \
	" 'api_version', api_version," \
	" 'payload_bytes', " PG_PAYLOAD_LEN ", 'account', account," \
	" 'source_account', source_account)::text," \
	" api_version, account, needs_fetch, source_account"
/* How many columns PG_ROW_COLS has: what follows it counts from here. */
#define ROW_NCOLS	24

/* A struct store_filter's terms ($1..$6; the limit is $7). */
#define PG_FILTER_SQL \
	" ($1::text IS NULL OR provider = $1)" \
	" AND ($2::text IS NULL OR event_id = $2)" \
	" AND ($3::text IS NULL OR event_type = $3)" \
	" AND ($4::text IS NULL OR status = $4)" \
	" AND ($5::bigint = 0 OR received_at >= $5)" \
	" AND ($6::bigint = 0 OR received_at < $6)"
#define PG_FILTER_TYPES	"ttttiii"
/* The filter's account, bound last: $8 in a list, $11 in a requeue. */
#define PG_ACCOUNT_8	" AND ($8::text IS NULL OR account = $8)"
#define PG_ACCOUNT_11	" AND ($11::text IS NULL OR account = $11)"

#define PG_REPLAYABLE_SQL \
	" AND status IN ('done', 'failed', 'dead', 'quarantined', 'held')" \
	" AND " PG_HAS_PAYLOAD

static void
bind_filter(struct pg_params *p, const struct store_filter *f)
{
	memset(p, 0, sizeof(*p));
	pg_text(p, f->provider);
	pg_text(p, f->event_id);
	pg_text(p, f->event_type);
	pg_text(p, f->status);
	pg_int(p, f->since_ms > 0 ? f->since_ms : 0);
	pg_int(p, f->until_ms > 0 ? f->until_ms : 0);
	if (f->limit > 0)
		pg_int(p, f->limit);
	else
		pg_text(p, NULL);	/* LIMIT NULL: no limit */
}

static void
fill_row(const PGresult *r, int i, struct store_row *row)
{
	memset(row, 0, sizeof(*row));
	row->rowid = pg_getint(r, i, 0);
	row->provider = pg_gettext(r, i, 1);
	row->event_id = pg_gettext(r, i, 2);
	row->event_type = pg_gettext(r, i, 3);
	row->subtype = pg_gettext(r, i, 4);
	row->order_key = pg_gettext(r, i, 5);
	row->status = pg_gettext(r, i, 6);
	row->received_at = pg_getint(r, i, 7);
	row->last_seen_at = pg_getint(r, i, 8);
	row->duplicates = pg_getint(r, i, 9);
	row->attempts = pg_getint(r, i, 10);
	row->next_attempt_at = pg_getint(r, i, 11);
	row->done_at = pg_getint(r, i, 12);
	row->purged_at = pg_getint(r, i, 13);
	row->lease_until = pg_getint(r, i, 14);
	row->lease_owner = pg_gettext(r, i, 15);
	row->last_error = pg_gettext(r, i, 16);
	row->has_payload = (int)pg_getint(r, i, 17);
	row->payload_len = pg_getint(r, i, 18);
	row->json = pg_gettext(r, i, 19);
	row->api_version = pg_gettext(r, i, 20);
	row->account = pg_gettext(r, i, 21);
	row->needs_fetch = pg_getint(r, i, 22) != 0;
	row->source_account = pg_gettext(r, i, 23);
	store_row_defaults(row);
}

static int
walk_rows(const PGresult *r, store_row_fn fn, void *arg, long *count)
{
	struct store_row row;
	int i, rc;

	for (i = 0; i < PQntuples(r); i++) {
		fill_row(r, i, &row);
		if (count != NULL)
			(*count)++;
		if (fn != NULL) {
			rc = fn(arg, &row);
			if (rc != IH_OK)
				return rc;
		}
	}
	return IH_OK;
}

int
pg_list(struct store *base, const struct store_filter *f, store_row_fn fn,
    void *arg, char *err, size_t errlen)
{
	struct pg_params p;
	PGresult *r;
	int rc;

	bind_filter(&p, f);
	pg_text(&p, f->account);
	pg_int(&p, f->needs_fetch != 0);
	pg_text(&p, f->source_account);
	r = pg_exec_sql(pg_of(base), "SELECT " PG_ROW_COLS " FROM events"
	    " WHERE" PG_FILTER_SQL PG_ACCOUNT_8
	    " AND ($9::int = 0 OR needs_fetch <> 0)"
	    " AND ($10::text IS NULL OR source_account = $10)"
	    " ORDER BY id DESC LIMIT $7", PG_FILTER_TYPES "tit", &p,
	    PGRES_TUPLES_OK, "cannot list events", err, errlen);
	if (r == NULL)
		return IH_ESTORE;
	rc = walk_rows(r, fn, arg, NULL);
	PQclear(r);
	return rc;
}

int
pg_show(struct store *base, const char *provider, const char *account,
    const char *event_id, store_row_fn fn, void *arg, char *err,
    size_t errlen)
{
	struct store_row row;
	struct pg_params p;
	unsigned char *bytes = NULL;
	size_t len = 0;
	PGresult *r;
	int rc;

	memset(&p, 0, sizeof(p));
	pg_text(&p, provider);
	pg_text(&p, event_id);
	pg_text(&p, account_or_default(account));
	r = pg_exec_sql(pg_of(base), "SELECT " PG_ROW_COLS ", headers, "
	    PG_PAYLOAD
	    " FROM events WHERE provider = $1 AND event_id = $2"
	    " AND account = $3", "ttt", &p,
	    PGRES_TUPLES_OK, "cannot read event", err, errlen);
	if (r == NULL)
		return IH_ESTORE;
	if (PQntuples(r) == 0) {
		snprintf(err, errlen, "no %s event with id %s in account %s",
		    provider, event_id, account_or_default(account));
		rc = IH_ENOTFOUND;
		goto out;
	}
	fill_row(r, 0, &row);
	row.headers = pg_gettext(r, 0, ROW_NCOLS);
	if (row.headers == NULL)
		row.headers = "";
	if (!PQgetisnull(r, 0, ROW_NCOLS + 1)) {
		bytes = PQunescapeBytea((const unsigned char *)
		    PQgetvalue(r, 0, ROW_NCOLS + 1), &len);
		if (bytes == NULL) {
			rc = IH_ENOMEM;
			goto out;
		}
		row.payload = bytes;
		row.payload_len = (int64_t)len;
	}
	rc = fn(arg, &row);
out:
	PQfreemem(bytes);
	PQclear(r);
	return rc;
}

int
pg_kept(struct store *base, int64_t rowid, char **out, char *err,
    size_t errlen)
{
	struct pg_params p;
	const char *h;
	PGresult *r;
	int rc;

	memset(&p, 0, sizeof(p));
	pg_int(&p, rowid);
	r = pg_exec_sql(pg_of(base), "SELECT headers FROM events WHERE id = $1",
	    "i", &p, PGRES_TUPLES_OK, "cannot read event", err, errlen);
	if (r == NULL)
		return IH_ESTORE;
	if (PQntuples(r) == 0) {
		snprintf(err, errlen, "no event at row %lld", (long long)rowid);
		rc = IH_ENOTFOUND;
		goto out;
	}
	h = pg_gettext(r, 0, 0);
	*out = strdup(h != NULL ? h : "");
	rc = *out != NULL ? IH_OK : IH_ENOMEM;
out:
	PQclear(r);
	return rc;
}

int
pg_attempts(struct store *base, int64_t rowid,
    int (*fn)(void *arg, const struct store_attempt *a), void *arg,
    char *err, size_t errlen)
{
	struct store_attempt a;
	struct pg_params p;
	PGresult *r;
	int i, rc = IH_OK;

	memset(&p, 0, sizeof(p));
	pg_int(&p, rowid);
	r = pg_exec_sql(pg_of(base), "SELECT attempt, started_at,"
	    " coalesce(finished_at, 0), outcome, error FROM attempts"
	    " WHERE event = $1 ORDER BY attempt", "i", &p, PGRES_TUPLES_OK,
	    "cannot read attempts", err, errlen);
	if (r == NULL)
		return IH_ESTORE;
	for (i = 0; i < PQntuples(r) && rc == IH_OK; i++) {
		a.attempt = pg_getint(r, i, 0);
		a.started_at = pg_getint(r, i, 1);
		a.finished_at = pg_getint(r, i, 2);
		a.outcome = pg_gettext(r, i, 3);
		a.error = pg_gettext(r, i, 4);
		rc = fn(arg, &a);
	}
	PQclear(r);
	return rc;
}

int
pg_requeue(struct store *base, const struct store_filter *f, int dry_run,
    int64_t now_ms, store_row_fn fn, void *arg, long *count, char *err,
    size_t errlen)
{
	struct pg_params p;
	PGresult *r;
	int rc;

	*count = 0;
	bind_filter(&p, f);
	if (dry_run) {
		pg_text(&p, f->account);
		r = pg_exec_sql(pg_of(base), "SELECT " PG_ROW_COLS
		    " FROM events WHERE" PG_FILTER_SQL PG_ACCOUNT_8
		    PG_REPLAYABLE_SQL " ORDER BY id LIMIT $7",
		    PG_FILTER_TYPES "t", &p, PGRES_TUPLES_OK,
		    "cannot requeue events", err, errlen);
	} else {
		pg_int(&p, now_ms);
		pg_int(&p, f->after_rowid);
		pg_int(&p, f->max_bytes);
		pg_text(&p, f->account);
		/*
		 * One batch: the next rows past $9, up to $7 of them and,
		 * past the first, $10 bytes of payload in all.  The payloads
		 * are in their own table: the update never rewrites them.
		 */
		r = pg_exec_sql(pg_of(base), "UPDATE events SET"
		    " status = 'received', next_attempt_at = $8, attempts = 0,"
		    " lease_owner = NULL, lease_until = NULL, done_at = NULL"
		    " WHERE id IN (SELECT id FROM (SELECT id, sum(len) OVER"
		    " (ORDER BY id) - len AS before, len FROM (SELECT id,"
		    " coalesce(" PG_PAYLOAD_LEN ", 0) AS len FROM events WHERE"
		    PG_FILTER_SQL PG_ACCOUNT_11 PG_REPLAYABLE_SQL " AND id > $9"
		    " ORDER BY id LIMIT $7 FOR UPDATE SKIP LOCKED) AS c) AS w"
		    " WHERE $10::bigint <= 0 OR before = 0 OR"
		    " before + len <= $10)"
		    " RETURNING " PG_ROW_COLS,
		    PG_FILTER_TYPES "iiit", &p, PGRES_TUPLES_OK,
		    "cannot requeue events", err, errlen);
	}
	if (r == NULL)
		return IH_ESTORE;
	rc = walk_rows(r, fn, arg, count);
	if (rc != IH_OK)
		*count = 0;
	PQclear(r);
	return rc;
}

/* Runs a count or a change; *n is the count or the rows changed. */
static int
purge_step(struct pgs *st, const char *sql, const struct pg_params *p,
    int count, long *n, const char *what, char *err, size_t errlen)
{
	PGresult *r;

	*n = 0;
	r = pg_exec_sql(st, sql, "tiiiiitt", p, count ? PGRES_TUPLES_OK :
	    PGRES_COMMAND_OK, what, err, errlen);
	if (r == NULL)
		return IH_ESTORE;
	*n = count ? (long)pg_getint(r, 0, 0) : pg_changes(r);
	PQclear(r);
	return IH_OK;
}

/* What purge may touch: $6 <> 0 takes dead letters too; $8 one type. */
#define PG_PURGE_STATUS_SQL \
	" (status IN ('done', 'quarantined') OR" \
	" ($6 <> 0 AND status = 'dead'))" \
	" AND ($8::text IS NULL OR event_type = $8)"
#define PG_PURGE_ROW_SQL \
	" provider = $1 AND ($7::text IS NULL OR account = $7) AND" \
	PG_PURGE_STATUS_SQL \
	" AND received_at < $2 AND $3 > 0 AND last_seen_at < $3"
#define PG_PURGE_PAYLOAD_SQL \
	" provider = $1 AND ($7::text IS NULL OR account = $7) AND" \
	PG_PURGE_STATUS_SQL \
	" AND received_at < $2 AND " PG_HAS_PAYLOAD

/*
 * Retention, in short transactions of at most batch rows each (every
 * statement is its own), so receivers never wait long.  Dead letters
 * stay unless include_dead.
 */
int
pg_purge(struct store *base, struct store_purge *p, char *err,
    size_t errlen)
{
	struct pgs *st = pg_of(base);
	struct timespec nap = { 0, 1000000 };
	long batch = p->batch > 0 ? p->batch : 500, n;
	struct pg_params q;
	int rc;

	p->payloads = 0;
	p->rows = 0;
	p->dead_kept = 0;
	memset(&q, 0, sizeof(q));
	pg_text(&q, p->provider);
	pg_int(&q, p->payload_before_ms);
	pg_int(&q, p->row_before_ms);
	pg_int(&q, batch);
	pg_int(&q, clock_wall_ms());
	pg_int(&q, p->include_dead != 0);
	pg_text(&q, p->account);
	pg_text(&q, p->event_type);
	rc = purge_step(st, "SELECT count(*) FROM events WHERE provider = $1"
	    " AND $6 = 0 AND status = 'dead' AND received_at < $2"
	    " AND ($7::text IS NULL OR account = $7)"
	    " AND ($8::text IS NULL OR event_type = $8)", &q, 1, &p->dead_kept,
	    "cannot count dead events", err, errlen);
	if (rc != IH_OK)
		return rc;
	if (p->dry_run) {
		rc = purge_step(st, "SELECT count(*) FROM events WHERE"
		    PG_PURGE_ROW_SQL "", &q, 1,
		    &p->rows, "cannot count rows", err, errlen);
		if (rc == IH_OK)
			rc = purge_step(st, "SELECT count(*) FROM events WHERE"
			    PG_PURGE_PAYLOAD_SQL " AND NOT (" PG_PURGE_ROW_SQL
			    ")", &q, 1, &p->payloads,
			    "cannot count payloads", err, errlen);
		return rc;
	}
	do {
		rc = purge_step(st, "DELETE FROM events WHERE id IN (SELECT id"
		    " FROM events WHERE" PG_PURGE_ROW_SQL " LIMIT $4"
		    " FOR UPDATE SKIP LOCKED)", &q, 0, &n,
		    "cannot delete rows", err, errlen);
		if (rc != IH_OK)
			return rc;
		p->rows += n;
		nanosleep(&nap, NULL);
	} while (n == batch);
	do {
		rc = purge_step(st, "WITH d AS (DELETE FROM payloads WHERE"
		    " event IN (SELECT id FROM events WHERE"
		    PG_PURGE_PAYLOAD_SQL " LIMIT $4 FOR UPDATE SKIP LOCKED)"
		    " RETURNING event) UPDATE events SET purged_at = $5"
		    " WHERE id IN (SELECT event FROM d)",
		    &q, 0, &n, "cannot drop payloads", err, errlen);
		if (rc != IH_OK)
			return rc;
		p->payloads += n;
		nanosleep(&nap, NULL);
	} while (n == batch);
	return IH_OK;
}

/* The pth percentile (nearest rank) of the provider's latencies. */
static int
percentile(struct pgs *st, const struct store_stats *x, int64_t since_ms,
    int64_t until_ms, int pct, int64_t *out, char *err, size_t errlen)
{
	struct pg_params p;
	PGresult *r;
	int64_t k;

	*out = -1;
	if (x->latency_n <= 0)
		return IH_OK;
	k = (x->latency_n * pct + 99) / 100;
	if (k < 1)
		k = 1;
	memset(&p, 0, sizeof(p));
	pg_text(&p, x->provider);
	pg_int(&p, since_ms);
	pg_int(&p, until_ms);
	pg_int(&p, k - 1);
	pg_text(&p, x->account);
	r = pg_exec_sql(st, "SELECT done_at - received_at FROM events"
	    " WHERE provider = $1 AND status = 'done' AND done_at IS NOT NULL"
	    " AND received_at >= $2 AND received_at < $3 AND account = $5"
	    " ORDER BY 1 LIMIT 1 OFFSET $4", "tiiit", &p, PGRES_TUPLES_OK,
	    "cannot compute latency", err, errlen);
	if (r == NULL)
		return IH_ESTORE;
	if (PQntuples(r) == 1)
		*out = pg_getint(r, 0, 0);
	PQclear(r);
	return IH_OK;
}

#define PG_PENDING	"status IN ('received', 'processing', 'failed')"

int
pg_stats(struct store *base, const char *provider, int64_t since_ms,
    int64_t until_ms, int (*fn)(void *arg, const struct store_stats *s),
    void *arg, char *err, size_t errlen)
{
	struct pgs *st = pg_of(base);
	struct store_stats x;
	struct pg_params p;
	PGresult *r = NULL, *b;
	int i, rc;

	if (pg_ensure(st, err, errlen) != IH_OK)
		return IH_ESTORE;
	/* One snapshot for every figure. */
	b = pg_wait_exec(st, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
	if (PQresultStatus(b) != PGRES_COMMAND_OK)
		return pg_fail(st, b, "cannot begin read", err, errlen);
	PQclear(b);
	memset(&p, 0, sizeof(p));
	pg_text(&p, provider);
	pg_int(&p, since_ms);
	pg_int(&p, until_ms);
	r = pg_exec_sql(st, "SELECT provider, count(*) FILTER (WHERE w),"
	    " coalesce(sum(duplicates) FILTER (WHERE w), 0),"
	    " count(*) FILTER (WHERE w AND status = 'received'),"
	    " count(*) FILTER (WHERE w AND status = 'processing'),"
	    " count(*) FILTER (WHERE w AND status = 'done'),"
	    " count(*) FILTER (WHERE w AND status = 'failed'),"
	    " count(*) FILTER (WHERE w AND status = 'dead'),"
	    " count(*) FILTER (WHERE w AND status = 'quarantined'),"
	    " count(*) FILTER (WHERE w AND status = 'done'"
	    "  AND done_at IS NOT NULL),"
	    " coalesce(sum(done_at - received_at) FILTER (WHERE w"
	    "  AND status = 'done' AND done_at IS NOT NULL), 0),"
	    " coalesce(min(received_at) FILTER (WHERE " PG_PENDING "), 0),"
	    " count(*) FILTER (WHERE " PG_PENDING "), account,"
	    " count(*) FILTER (WHERE status = 'held')"
	    " FROM (SELECT provider, account, duplicates, status,"
	    "  received_at, done_at,"
	    "  (received_at >= $2 AND received_at < $3) AS w FROM events"
	    "  WHERE ($1::text IS NULL OR provider = $1)"
	    "  AND ((received_at >= $2 AND received_at < $3)"
	    "  OR " PG_PENDING " OR status = 'held')) AS x"
	    " GROUP BY provider, account ORDER BY provider, account", "tii", &p,
	    PGRES_TUPLES_OK, "cannot compute stats", err, errlen);
	if (r == NULL) {
		rc = IH_ESTORE;
		goto out;
	}
	rc = IH_OK;
	for (i = 0; i < PQntuples(r) && rc == IH_OK; i++) {
		memset(&x, 0, sizeof(x));
		snprintf(x.provider, sizeof(x.provider), "%s",
		    PQgetvalue(r, i, 0));
		x.events = pg_getint(r, i, 1);
		x.duplicates = pg_getint(r, i, 2);
		x.received = pg_getint(r, i, 3);
		x.processing = pg_getint(r, i, 4);
		x.done = pg_getint(r, i, 5);
		x.failed = pg_getint(r, i, 6);
		x.dead = pg_getint(r, i, 7);
		x.quarantined = pg_getint(r, i, 8);
		x.latency_n = pg_getint(r, i, 9);
		x.latency_sum_ms = pg_getint(r, i, 10);
		x.oldest_pending_ms = pg_getint(r, i, 11);
		x.pending = pg_getint(r, i, 12);
		snprintf(x.account, sizeof(x.account), "%s",
		    PQgetvalue(r, i, 13));
		x.held = pg_getint(r, i, 14);
		rc = percentile(st, &x, since_ms, until_ms, 50, &x.p50_ms, err,
		    errlen);
		if (rc == IH_OK)
			rc = percentile(st, &x, since_ms, until_ms, 95,
			    &x.p95_ms, err, errlen);
		if (rc == IH_OK)
			rc = percentile(st, &x, since_ms, until_ms, 99,
			    &x.p99_ms, err, errlen);
		if (rc == IH_OK)
			rc = pg_stats_waiting(st, &x, since_ms, until_ms, err,
			    errlen);
		if (rc == IH_OK)
			rc = fn(arg, &x);
	}
out:
	PQclear(r);
	if (st->conn != NULL && PQtransactionStatus(st->conn) != PQTRANS_IDLE)
		PQclear(pg_wait_exec(st, "COMMIT"));
	return rc;
}

/*
 * Copying in (idemhook copy): every column as the source has it; an
 * event already here stays as it is unless the source finished it and
 * this copy did not (see store_copy_put()).
 */
int
pg_copy_put(struct store *base, const struct store_row *row, int64_t *rowid,
    int *added, char *err, size_t errlen)
{
	struct pgs *st = pg_of(base);
	struct pg_params p;
	PGresult *r;

	memset(&p, 0, sizeof(p));
	pg_text(&p, row->provider);
	pg_text(&p, row->event_id);
	pg_text(&p, row->event_type);
	pg_text(&p, row->subtype);
	pg_text(&p, row->order_key);
	if (row->payload != NULL)
		pg_bytes(&p, row->payload, (size_t)row->payload_len);
	else
		pg_text(&p, NULL);
	pg_text(&p, row->headers != NULL ? row->headers : "");
	pg_int(&p, row->received_at);
	pg_int(&p, row->last_seen_at);
	pg_int(&p, row->duplicates);
	pg_text(&p, row->status);
	pg_int(&p, row->attempts);
	pg_int(&p, row->next_attempt_at);
	pg_int(&p, row->lease_until);
	pg_text(&p, row->lease_owner);
	pg_text(&p, row->last_error);
	pg_int(&p, row->done_at);
	pg_int(&p, row->purged_at);
	pg_text(&p, row->fingerprint);
	pg_text(&p, row->api_version);
	/* A thin event still waiting for its fetch stays so (version 9). */
	pg_int(&p, row->needs_fetch != 0);
	pg_text(&p, account_or_default(row->account));
	pg_text(&p, row->source_account);
	r = pg_exec_sql(st, "WITH ins AS (INSERT INTO events (provider,"
	    " event_id, event_type, subtype, order_key, headers,"
	    " received_at, last_seen_at, duplicates, status, attempts,"
	    " next_attempt_at, lease_until, lease_owner, last_error, done_at,"
	    " purged_at, fingerprint, api_version, needs_fetch, account,"
	    " source_account)"
	    " SELECT $1, $2, $3, $4, $5, $7, $8, $9, $10, $11, $12, $13,"
	    " nullif($14, 0), $15, $16, nullif($17, 0), nullif($18, 0),"
	    " $19, $20, $21, $22, $23"
	    " ON CONFLICT (provider, account, event_id) DO NOTHING"
	    " RETURNING id),"
	    " pl AS (INSERT INTO payloads (event, payload)"
	    " SELECT id, $6 FROM ins WHERE $6 IS NOT NULL),"
	    " fin AS (UPDATE events SET status = $11, attempts = $12,"
	    " next_attempt_at = $13, lease_until = NULL, lease_owner = NULL,"
	    " last_error = $16, done_at = nullif($17, 0),"
	    " duplicates = greatest(duplicates, $10),"
	    " last_seen_at = greatest(last_seen_at, $9)"
	    " WHERE provider = $1 AND event_id = $2 AND account = $22"
	    " AND NOT EXISTS (SELECT 1 FROM ins)"
	    " AND $11 IN ('done', 'dead', 'quarantined')"
	    " AND status NOT IN ('done', 'dead', 'quarantined') RETURNING id)"
	    " SELECT id, 1 FROM ins UNION ALL SELECT id, 0 FROM fin"
	    " UNION ALL SELECT id, 0 FROM events WHERE provider = $1"
	    " AND event_id = $2 AND account = $22"
	    " AND NOT EXISTS (SELECT 1 FROM ins)"
	    " AND NOT EXISTS (SELECT 1 FROM fin)",
	    "tttttbtiiitiiittiittitt", &p, PGRES_TUPLES_OK, "cannot copy event",
	    err, errlen);
	if (r == NULL)
		return IH_ESTORE;
	if (PQntuples(r) < 1) {
		PQclear(r);
		snprintf(err, errlen, "cannot copy event: no row");
		return IH_ESTORE;
	}
	*rowid = pg_getint(r, 0, 0);
	*added = (int)pg_getint(r, 0, 1);
	PQclear(r);
	return IH_OK;
}

int
pg_copy_attempt(struct store *base, int64_t rowid,
    const struct store_attempt *a, int *added, char *err, size_t errlen)
{
	struct pg_params p;
	long n;
	int rc;

	memset(&p, 0, sizeof(p));
	pg_int(&p, rowid);
	pg_int(&p, a->attempt);
	pg_int(&p, a->started_at);
	pg_int(&p, a->finished_at);
	pg_text(&p, a->outcome);
	pg_text(&p, a->error);
	rc = pg_exec_change(pg_of(base), "INSERT INTO attempts (event,"
	    " attempt, started_at, finished_at, outcome, error)"
	    " VALUES ($1, $2, $3, nullif($4, 0), $5, $6)"
	    " ON CONFLICT DO NOTHING", "iiiitt", &p,
	    "cannot copy attempt", &n, err, errlen);
	*added = n > 0;
	return rc;
}

int
pg_copy_effect(struct store *base, int64_t rowid, const char *kind,
    int64_t created_at, int *added, char *err, size_t errlen)
{
	struct pg_params p;
	long n;
	int rc;

	memset(&p, 0, sizeof(p));
	pg_int(&p, rowid);
	pg_text(&p, kind);
	pg_int(&p, created_at);
	rc = pg_exec_change(pg_of(base), "INSERT INTO effects (event, kind,"
	    " created_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING", "iti",
	    &p, "cannot copy effect", &n, err, errlen);
	*added = n > 0;
	return rc;
}
