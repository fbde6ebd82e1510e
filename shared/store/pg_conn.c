/*
 * pg_conn.c -- PostgreSQL: the connection and its reopening, the schema
 * and its migrations, transactions, the statements prepared once per
 * connection, and the audit.
 *
 * A lost connection (a server restart, a network cut) is noticed by the
 * statement that fails, which answers IH_ESTORE (503 for a delivery); the
 * next call reopens it and prepares the statements again, so a FastCGI
 * process outlives a PostgreSQL restart.  Claims are row locks taken with
 * FOR UPDATE SKIP LOCKED inside short transactions, plus a lease in the
 * row: no session-level lock outlives a killed process.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "ih.h"
#include "pg_int.h"
#include "redact.h"

/* db/postgres/schema.sql, turned into a C string at build time. */
extern const char store_postgres_schema_sql[];
/* db/postgres/migrations/<N>.sql as [N]: version N-1 to N. */
extern const char *const store_postgres_migrations[];
extern const size_t store_postgres_nmigrations;

/* Taken inside the migration transaction; released by its end. */
#define PG_MIGRATE_LOCK	"7125504931064461312"

/*
 * Leases are set and compared on the server's clock (transaction start),
 * never a host's: hosts whose clocks disagree would otherwise take over
 * each other's live leases.
 */
#define PG_NOW_MS	"(extract(epoch FROM now()) * 1000)::bigint"

/*
 * What is due, for a claim ($1 provider or NULL, $2 rowid or 0, $4 now),
 * as in the SQLite backend: received, failed with its time come, or
 * processing with an expired lease; and not behind an unfinished older
 * event of its order key; and as $6 (the store's fetch mode,
 * store_thin.h) says of thin events.
 */
#define PG_DUE_SQL \
	" e.status IN ('received', 'processing', 'failed')" \
	" AND ($1::text IS NULL OR e.provider = $1)" \
	" AND ($2::bigint = 0 OR e.id = $2)" \
	" AND (e.status = 'received'" \
	"  OR (e.status = 'failed' AND e.next_attempt_at <= $4)" \
	"  OR (e.status = 'processing' AND e.lease_until <= " PG_NOW_MS "))" \
	" AND (e.order_key IS NULL OR NOT EXISTS (SELECT 1 FROM events p" \
	"  WHERE p.provider = e.provider AND p.account = e.account" \
	"  AND p.order_key = e.order_key" \
	"  AND p.id < e.id" \
	"  AND p.status NOT IN ('done', 'dead', 'quarantined')))" \
	" AND CASE $6::int WHEN 0 THEN e.needs_fetch = 0" \
	"  WHEN 2 THEN e.needs_fetch <> 0 ELSE true END"

static const struct {
	const char	*name;
	const char	*types;	/* one letter per parameter: see pg_types() */
	const char	*sql;
} pg_sql[PG_NSTMT] = {
	/*
	 * One statement inserts the event or counts the duplicate: under
	 * UNIQUE (provider, account, event_id) a concurrent second insert
	 * waits for the first and then takes the conflict branch.  A new
	 * event's payload goes to its own table in the same statement (one
	 * round trip), written once: status changes never touch it.
	 */
	[PG_RECORD] = { "ih_record", "ttttbtittttitittt",
	    "WITH ev AS (INSERT INTO events (provider, event_id, event_type,"
	    " order_key, headers, received_at, last_seen_at, status,"
	    " next_attempt_at, subtype, fingerprint, lease_owner, lease_until,"
	    " attempts, api_version, needs_fetch, account, source_account,"
	    " last_error)"
	    " VALUES ($1, $2, $3, $4, $6, $7, $7,"
	    " CASE WHEN $11::text IS NOT NULL THEN 'processing'"
	    " ELSE coalesce($8, 'received') END, $7, $9, $10, $11,"
	    " " PG_NOW_MS " + $12,"
	    " CASE WHEN $11::text IS NOT NULL THEN 1 ELSE 0 END, $13, $14, $15,"
	    " $16, $17)"
	    " ON CONFLICT (provider, account, event_id) DO UPDATE SET"
	    " duplicates = events.duplicates + 1,"
	    " last_seen_at = excluded.received_at"
	    " RETURNING id, duplicates, status),"
	    " pl AS (INSERT INTO payloads (event, payload)"
	    " SELECT id, $5 FROM ev WHERE duplicates = 0"
	    " AND $5::bytea IS NOT NULL)"
	    " SELECT id, duplicates, status FROM ev" },
	/* A row another claim holds is skipped, never waited for. */
	[PG_CLAIM] = { "ih_claim", "titiii",
	    "UPDATE events SET status = 'processing', lease_owner = $3,"
	    " lease_until = " PG_NOW_MS " + $5, attempts = attempts + 1"
	    " WHERE id = (SELECT e.id FROM events e WHERE " PG_DUE_SQL
	    "  ORDER BY e.id LIMIT 1 FOR UPDATE SKIP LOCKED)"
	    " RETURNING id, provider, event_id, event_type, subtype,"
	    " (SELECT CASE WHEN octet_length(payload) <= 1048576"
	    "  THEN payload END FROM payloads WHERE event = events.id),"
	    " attempts, received_at, needs_fetch, account,"
	    " (SELECT octet_length(payload) FROM payloads"
	    "  WHERE event = events.id)" },
	[PG_DUE] = { "ih_due", "titiii",
	    "SELECT 1 FROM events e WHERE " PG_DUE_SQL " LIMIT 1" },
	[PG_ATTEMPT_START] = { "ih_attempt_start", "ii",
	    "INSERT INTO attempts (event, attempt, started_at)"
	    " VALUES ($1, (SELECT coalesce(max(attempt), 0) + 1 FROM attempts"
	    " WHERE event = $1), $2) RETURNING attempt" },
	[PG_ATTEMPT_END] = { "ih_attempt_end", "iiitt",
	    "UPDATE attempts SET finished_at = $3, outcome = $4, error = $5"
	    " WHERE event = $1 AND attempt = $2" },
	[PG_COMPLETE] = { "ih_complete", "iti",
	    "UPDATE events SET status = 'done', done_at = $3,"
	    " lease_owner = NULL, lease_until = NULL, last_error = NULL"
	    " WHERE id = $1 AND lease_owner = $2 AND status = 'processing'" },
	[PG_FAILED] = { "ih_failed", "ittii",
	    "UPDATE events SET status = CASE WHEN $5 <> 0 THEN 'dead'"
	    " ELSE 'failed' END, next_attempt_at = $4, last_error = $3,"
	    " lease_owner = NULL, lease_until = NULL"
	    " WHERE id = $1 AND lease_owner = $2 AND status = 'processing'" },
	[PG_EFFECT] = { "ih_effect", "iti",
	    "INSERT INTO effects (event, kind, created_at) VALUES ($1, $2, $3)"
	    " ON CONFLICT DO NOTHING" },
	[PG_REPLAY] = { "ih_replay", "ttttt",
	    "SELECT event_id, event_type,"
	    " coalesce($4::text IS NOT NULL"
	    " AND strpos(E'\\n' || headers, $4) > 0, false)::int,"
	    " (SELECT count(*) FROM events h WHERE h.provider = $1"
	    "  AND h.account = $5 AND h.fingerprint = $2"
	    "  AND h.status = 'held')"
	    " FROM events WHERE provider = $1 AND fingerprint = $2"
	    " AND account = $5 AND NOT EXISTS (SELECT 1 FROM events"
	    "  WHERE provider = $1 AND account = $5 AND event_id = $3)"
	    " ORDER BY id LIMIT 1" },
	[PG_RENEW] = { "ih_renew", "iti",
	    "UPDATE events SET lease_until = " PG_NOW_MS " + $3"
	    " WHERE id = $1 AND lease_owner = $2 AND status = 'processing'" },
	[PG_STALE] = { "ih_stale", "iti",
	    "UPDATE attempts SET finished_at = $3,"
	    " outcome = 'lease_expired', error = $2"
	    " WHERE event = $1 AND finished_at IS NULL" },
	[PG_LOST] = { "ih_lost", "itii",
	    "UPDATE attempts SET finished_at = $3,"
	    " outcome = 'lease_lost', error = $2"
	    " WHERE event = $1 AND attempt = $4 AND finished_at IS NULL" },
	/* Its attempts and effects go with it (ON DELETE CASCADE). */
	[PG_FORGET] = { "ih_forget", "it",
	    "DELETE FROM events WHERE id = $1"
	    " AND lease_owner = $2 AND status = 'processing'" },
	/*
	 * PG_COMPLETE whose answer is not waited for (pg_complete): a lost
	 * lease fails it, as a cast that names the event.  The cast reads
	 * count(*), so that a custom plan cannot fold it into an error.
	 */
	[PG_COMPLETE_OWN] = { "ih_complete_own", "iti",
	    "WITH u AS (UPDATE events SET status = 'done', done_at = $3,"
	    " lease_owner = NULL, lease_until = NULL, last_error = NULL"
	    " WHERE id = $1 AND lease_owner = $2 AND status = 'processing'"
	    " RETURNING 1) SELECT CASE count(*) WHEN 1 THEN 1 ELSE"
	    " ('lease on event ' || $1 || ' was lost (' || count(*)"
	    " || ' rows)')::int END FROM u" },
	/*
	 * The objects table (pg_objects.c), prepared so that an event's
	 * switch is not parsed and planned anew each time.  The insert of a
	 * new row, or the lock and read of an existing row's key, in one
	 * statement; its parameters are the table's columns in order.
	 */
	[PG_OBJECT_TAKE] = { "ih_object_take", "tttttiitiiit",
	    "WITH ins AS (INSERT INTO objects (provider, kind, object_id,"
	    " status, object, source_at, rank, event_id, deleted, created_at,"
	    " changed_at, account) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9,"
	    " $10, $11, $12) ON CONFLICT (provider, account, kind, object_id)"
	    " DO NOTHING RETURNING 1),"
	    " cur AS (SELECT source_at, rank, event_id FROM objects"
	    " WHERE provider = $1 AND kind = $2 AND object_id = $3"
	    " AND account = $12 FOR UPDATE)"
	    " SELECT (SELECT count(*) FROM ins), cur.source_at, cur.rank,"
	    " cur.event_id FROM (SELECT 1) AS one LEFT JOIN cur ON true" },
	[PG_OBJECT_KEY] = { "ih_object_key", "tttt",
	    "SELECT source_at, rank, event_id FROM objects"
	    " WHERE provider = $1 AND kind = $2 AND object_id = $3"
	    " AND account = $4 FOR UPDATE" },
	[PG_OBJECT_SET] = { "ih_object_set", "tttttiitiiit",
	    "UPDATE objects SET status = $4, object = $5, source_at = $6,"
	    " rank = $7, event_id = $8, deleted = $9, changed_at = $11"
	    " WHERE provider = $1 AND kind = $2 AND object_id = $3"
	    " AND account = $12 AND $10::bigint IS NOT NULL" },
	[PG_HISTORY] = { "ih_history", "ttttttiiitit",
	    "INSERT INTO object_events (provider, kind, object_id, event_id,"
	    " event_type, status, source_at, rank, deleted, verdict,"
	    " recorded_at, seq, account) SELECT $1, $2, $3, $4, $5, $6, $7,"
	    " $8, $9, $10, $11, coalesce(max(seq), 0) + 1, $12"
	    " FROM object_events WHERE provider = $1 AND kind = $2"
	    " AND object_id = $3 AND account = $12"
	    " ON CONFLICT (provider, account, kind, object_id, event_id)"
	    " DO NOTHING" },
};

static int
pg_simple(struct pgs *st, const char *sql, const char *what, char *err,
    size_t errlen)
{
	PGresult *res = pg_wait_exec(st, sql);

	if (PQresultStatus(res) != PGRES_COMMAND_OK &&
	    PQresultStatus(res) != PGRES_TUPLES_OK)
		return pg_fail(st, res, what, err, errlen);
	PQclear(res);
	return IH_OK;
}

/* Prepares every statement of pg_sql on the connection. */
static int
prepare_all(struct pgs *st, char *err, size_t errlen)
{
	unsigned int oids[PG_MAXP];
	PGresult *res;
	int i, n;

	for (i = 0; i < PG_NSTMT; i++) {
		pg_types(pg_sql[i].types, oids, &n);
		res = pg_wait_prepare(st, pg_sql[i].name, pg_sql[i].sql, n,
		    oids);
		if (PQresultStatus(res) != PGRES_COMMAND_OK)
			return pg_fail(st, res, "cannot prepare statement",
			    err, errlen);
		PQclear(res);
	}
	return IH_OK;
}

/* Reads the schema version inside the migration transaction. */
static int
schema_version(struct pgs *st, int *version, char *err, size_t errlen)
{
	PGresult *res;

	res = pg_wait_exec(st, "SELECT coalesce(max(version), 0)"
	    " FROM idemhook_schema");
	if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1)
		return pg_fail(st, res, "cannot read schema version", err,
		    errlen);
	*version = (int)strtol(PQgetvalue(res, 0, 0), NULL, 10);
	PQclear(res);
	return IH_OK;
}

/*
 * Creates or migrates the schema in one transaction that first takes a
 * transaction-scoped advisory lock: hosts that start at once apply it one
 * after the other, and the later ones find it done.
 */
static int
migrate(struct pgs *st, char *err, size_t errlen)
{
	char sql[128], what[64];
	int version = 0, v, rc;
	long wait = -1;

	rc = pg_simple(st, "BEGIN; SELECT pg_advisory_xact_lock("
	    PG_MIGRATE_LOCK "); CREATE TABLE IF NOT EXISTS idemhook_schema"
	    " (version INTEGER NOT NULL)", "cannot lock store to migrate",
	    err, errlen);
	if (rc != IH_OK)
		goto out;
	rc = schema_version(st, &version, err, errlen);
	if (rc != IH_OK)
		goto out;
	rc = store_schema_newer(version, err, errlen);
	if (rc != IH_OK)
		goto out;
	/* A migration of a big table may take long; still bounded. */
	if (version < STORE_SCHEMA_VERSION && st->wait_ms > 0) {
		wait = st->wait_ms;
		st->wait_ms = 600000 + 1000;
		rc = pg_simple(st, "SET LOCAL statement_timeout = 600000",
		    "cannot migrate", err, errlen);
	}
	if (version == 0 && rc == IH_OK)
		rc = pg_simple(st, store_postgres_schema_sql,
		    "cannot apply schema", err, errlen);
	for (v = version + 1; version > 0 && v <= STORE_SCHEMA_VERSION &&
	    rc == IH_OK; v++) {
		if ((size_t)v >= store_postgres_nmigrations ||
		    store_postgres_migrations[v] == NULL) {
			snprintf(err, errlen, "no migration from schema "
			    "version %d to %d", v - 1, v);
			rc = IH_ESTORE;
			goto out;
		}
		snprintf(what, sizeof(what), "cannot migrate to schema "
		    "version %d", v);
		rc = pg_simple(st, store_postgres_migrations[v], what, err,
		    errlen);
	}
	if (rc != IH_OK)
		goto out;
	if (version < STORE_SCHEMA_VERSION) {
		snprintf(sql, sizeof(sql), "DELETE FROM idemhook_schema;"
		    " INSERT INTO idemhook_schema VALUES (%d)",
		    STORE_SCHEMA_VERSION);
		rc = pg_simple(st, sql, "cannot set schema version", err,
		    errlen);
		if (rc != IH_OK)
			goto out;
	}
	rc = pg_simple(st, "COMMIT", "cannot commit schema", err, errlen);
out:
	if (rc != IH_OK && st->conn != NULL &&
	    PQtransactionStatus(st->conn) != PQTRANS_IDLE)
		PQclear(pg_wait_exec(st, "ROLLBACK"));
	if (wait >= 0)
		st->wait_ms = wait;
	return rc;
}

/* Opens the connection anew and prepares the statements. */
static int
connect_db(struct pgs *st, int set_up, char *err, size_t errlen)
{
	int rc;

	/* Timeouts and session settings: pg_wait.c. */
	rc = pg_connect(st, err, errlen);
	if (rc != IH_OK)
		return rc;
	if (set_up) {
		rc = migrate(st, err, errlen);
		if (rc != IH_OK)
			return rc;
	}
	rc = prepare_all(st, err, errlen);
	if (rc != IH_OK)
		return rc;
	st->ready = 1;
	return IH_OK;
}

int
pg_ensure(struct pgs *st, char *err, size_t errlen)
{
	if (st->ready && PQstatus(st->conn) == CONNECTION_OK)
		return IH_OK;
	return connect_db(st, 0, err, errlen);
}

PGresult *
pg_exec_stmt(struct pgs *st, enum pg_stmt i, const struct pg_params *p,
    ExecStatusType want, const char *what, char *err, size_t errlen)
{
	PGresult *res;

	res = pg_wait_prepared(st, pg_sql[i].name, p->n, p->v, p->len,
	    p->fmt);
	if (PQresultStatus(res) != want) {
		pg_fail(st, res, what, err, errlen);
		return NULL;
	}
	return res;
}

int
pg_defer_stmt(struct pgs *st, enum pg_stmt i, const struct pg_params *p,
    const char *what, char *err, size_t errlen)
{
	if (pg_defer_prepared(st, pg_sql[i].name, p->n, p->v, p->len,
	    p->fmt))
		return IH_OK;
	return pg_fail(st, NULL, what, err, errlen);
}

int
pg_defer_sql(struct pgs *st, const char *sql, const char *types,
    const struct pg_params *p, const char *what, char *err, size_t errlen)
{
	unsigned int oids[PG_MAXP];
	int n;

	pg_types(types, oids, &n);
	if (pg_defer_params(st, sql, p->n, oids, p->v, p->len, p->fmt))
		return IH_OK;
	return pg_fail(st, NULL, what, err, errlen);
}

PGresult *
pg_exec_sql(struct pgs *st, const char *sql, const char *types,
    const struct pg_params *p, ExecStatusType want, const char *what,
    char *err, size_t errlen)
{
	unsigned int oids[PG_MAXP];
	PGresult *res;
	int n;

	/* Inside a transaction a lost connection is an error, not reopened. */
	if (!st->base.tx.open && pg_ensure(st, err, errlen) != IH_OK)
		return NULL;
	pg_types(types, oids, &n);
	res = pg_wait_params(st, sql, p->n, oids, p->v, p->len, p->fmt);
	if (PQresultStatus(res) != want) {
		pg_fail(st, res, what, err, errlen);
		return NULL;
	}
	return res;
}

int
pg_exec_change(struct pgs *st, const char *sql, const char *types,
    const struct pg_params *p, const char *what, long *n, char *err,
    size_t errlen)
{
	PGresult *res;

	*n = 0;
	res = pg_exec_sql(st, sql, types, p, PGRES_COMMAND_OK, what, err,
	    errlen);
	if (res == NULL)
		return IH_ESTORE;
	*n = pg_changes(res);
	PQclear(res);
	return IH_OK;
}

int
pg_each(struct pgs *st, const char *sql, const char *types,
    const struct pg_params *p, const char *what, pg_row_fn row, void *arg,
    char *err, size_t errlen)
{
	PGresult *res;
	int i, rc = IH_OK;

	res = pg_exec_sql(st, sql, types, p, PGRES_TUPLES_OK, what, err,
	    errlen);
	if (res == NULL)
		return IH_ESTORE;
	for (i = 0; i < PQntuples(res) && rc == IH_OK; i++)
		rc = row(arg, res, i);
	PQclear(res);
	return rc;
}

static const struct store_ops pg_ops;

static void
pg_close(struct store *base)
{
	struct pgs *st = pg_of(base);

	if (st->conn != NULL)
		PQfinish(st->conn);
	free(st->uri);
	free(st);
}

int
store_pg_open(const struct store_opts *opts, struct store **out, char *err,
    size_t errlen)
{
	struct pgs *st;
	int rc;

	*out = NULL;
	/* libpq is loaded only for a PostgreSQL store (pg_dl.h). */
	rc = pg_dl_load(err, errlen);
	if (rc != IH_OK)
		return rc;
	st = calloc(1, sizeof(*st));
	if (st == NULL)
		return IH_ENOMEM;
	st->base.ops = &pg_ops;
	/* PostgreSQL groups commits itself: EACH is plain durable. */
	st->durable_as = opts->durable_as == STORE_RELAXED ? STORE_RELAXED :
	    STORE_DURABLE;
	st->busy_timeout_ms = opts->busy_timeout_ms;
	st->uri = strdup(opts->path);
	if (st->uri == NULL) {
		pg_close(&st->base);
		return IH_ENOMEM;
	}
	rc = connect_db(st, 1, err, errlen);
	if (rc != IH_OK) {
		pg_close(&st->base);
		return rc;
	}
	*out = &st->base;
	return IH_OK;
}

static void
pg_defer_begin(struct store *base)
{
	pg_of(base)->lazy_begin = 1;
}

/*
 * BEGIN and its durability, deferred: they travel with the next
 * statement that waits, whose caller can redo the transaction with a
 * BEGIN that waits (store_begin_many()).
 */
static int
begin_deferred(struct pgs *st, int durable, char *err, size_t errlen)
{
	struct pg_params p;
	int rc;

	memset(&p, 0, sizeof(p));
	rc = pg_ensure(st, err, errlen);
	if (rc == IH_OK)
		rc = pg_defer_sql(st, "BEGIN", "", &p,
		    "cannot begin transaction", err, errlen);
	if (rc == IH_OK)
		rc = pg_defer_sql(st, durable ?
		    "SET LOCAL synchronous_commit = on" :
		    "SET LOCAL synchronous_commit = off", "", &p,
		    "cannot begin transaction", err, errlen);
	return rc;
}

/*
 * A durable transaction commits with synchronous_commit on (the WAL is
 * flushed, and replicated as the server is configured, before COMMIT
 * returns); a relaxed one with it off.  BEGIN on a connection found
 * broken reopens it once, so the first request after a server restart
 * already succeeds.
 */
static int
pg_begin(struct store *base, enum store_durability d, char *err,
    size_t errlen)
{
	struct pgs *st = pg_of(base);
	const char *sql;
	int rc, tries;

	st->fresh_claim = 0;
	st->nown = 0;
	if (st->lazy_begin) {
		st->lazy_begin = 0;
		return begin_deferred(st, d == STORE_DURABLE &&
		    st->durable_as == STORE_DURABLE, err, errlen);
	}
	sql = d == STORE_DURABLE && st->durable_as == STORE_DURABLE ?
	    "BEGIN; SET LOCAL synchronous_commit = on" :
	    "BEGIN; SET LOCAL synchronous_commit = off";
	for (tries = 0; tries < 2; tries++) {
		rc = pg_ensure(st, err, errlen);
		if (rc != IH_OK)
			return rc;
		rc = pg_simple(st, sql, "cannot begin transaction", err,
		    errlen);
		/* A silent server is not asked twice: 503 at once. */
		if (rc == IH_OK || st->ready || st->silent)
			break;
	}
	if (rc != IH_OK && st->conn != NULL &&
	    PQtransactionStatus(st->conn) != PQTRANS_IDLE)
		PQclear(pg_wait_exec(st, "ROLLBACK"));
	return rc;
}

static void
pg_rollback(struct store *base)
{
	struct pgs *st = pg_of(base);

	/* Whatever the deferred statements said, all of it is undone. */
	st->nown = 0;
	PQclear(pg_wait_pending(st));
	if (st->conn != NULL && PQstatus(st->conn) == CONNECTION_OK &&
	    PQtransactionStatus(st->conn) != PQTRANS_IDLE)
		PQclear(pg_wait_exec(st, "ROLLBACK"));
}

static int
pg_commit(struct store *base, char *err, size_t errlen)
{
	struct pgs *st = pg_of(base);
	PGresult *res;

	/* One round trip with the deferred statements still unread. */
	res = pg_wait_params(st, "COMMIT", 0, NULL, NULL, NULL, NULL);
	/* A failed transaction's COMMIT answers ROLLBACK: not committed. */
	if (PQresultStatus(res) != PGRES_COMMAND_OK ||
	    strcmp(PQcmdStatus(res), "COMMIT") != 0) {
		if (PQresultStatus(res) == PGRES_COMMAND_OK) {
			snprintf(err, errlen, "cannot commit: the transaction "
			    "was rolled back");
			PQclear(res);
			pg_rollback(base);
			return IH_ESTORE;
		}
		pg_fail(st, res, "cannot commit", err, errlen);
		pg_rollback(base);
		return IH_ESTORE;
	}
	PQclear(res);
	return IH_OK;
}

/*
 * The innermost savepoint: opened, released, or rolled back and popped.
 * Opening and releasing are deferred (pg_wait.c): they travel with the
 * next statement that waits for its answer.
 */
static int
pg_savepoint(struct store *base, enum store_sp op, char *err,
    size_t errlen)
{
	struct pgs *st = pg_of(base);
	struct pg_params p;

	memset(&p, 0, sizeof(p));
	if (op == STORE_SP_OPEN)
		return pg_defer_sql(st, "SAVEPOINT ih", "", &p,
		    "cannot open savepoint", err, errlen);
	if (op == STORE_SP_UNDO) {
		/* What failed after the savepoint is undone with it. */
		PQclear(pg_wait_pending(st));
		return pg_simple(st, "ROLLBACK TO SAVEPOINT ih; RELEASE ih",
		    "cannot roll back to savepoint", err, errlen);
	}
	return pg_defer_sql(st, "RELEASE ih", "", &p,
	    "cannot release savepoint", err, errlen);
}

static const struct store_ops pg_ops = {
	.name = "postgresql",
	.close = pg_close,
	.no_queue = NULL,
	.begin = pg_begin,
	.commit = pg_commit,
	.rollback = pg_rollback,
	.savepoint = pg_savepoint,
	.record = pg_record,
	.record_many = pg_record_many,
	.defer_begin = pg_defer_begin,
	.release_held = pg_release_held,
	.attempt_start = pg_attempt_start,
	.replay_of = pg_replay_of,
	.claim = pg_claim,
	.effect = pg_effect,
	.complete = pg_complete,
	.fail = pg_fail_job,
	.renew = pg_renew,
	.attempt_lost = pg_attempt_lost,
	.forget = pg_forget,
	.requeue = pg_requeue,
	.due = pg_due,
	.fetched = pg_fetched,
	.list = pg_list,
	.show = pg_show,
	.kept = pg_kept,
	.behind = pg_behind,
	.attempts = pg_attempts,
	.purge = pg_purge,
	.stats = pg_stats,
	.versions = pg_versions,
	.audit = pg_audit,
	.console_counts = pg_console_counts,
	.console_hours = pg_console_hours,
	.console_latency = pg_console_latency,
	.console_size = pg_console_size,
	.console_bounds = pg_console_bounds,
	.console_window = pg_console_window,
	.console_last = pg_console_last,
	.console_last_type = pg_console_last_type,
	.console_explain = pg_console_explain,
	.signin_charge = pg_signin_charge,
	.signin_refund = pg_signin_refund,
	.signin_prune = pg_signin_prune,
	.health_put = pg_health_put,
	.health_list = pg_health_list,
	.sigfails_add = pg_sigfail_note,
	.sigfails_count = pg_sigfail_count,
	.sigfails_sums = pg_sigfail_sums,
	.copy_put = pg_copy_put,
	.copy_attempt = pg_copy_attempt,
	.copy_effect = pg_copy_effect,
	.object_apply = pg_object_apply,
	.objects = pg_objects,
	.object_history = pg_object_history,
	.copy_object = pg_copy_object,
	.copy_object_event = pg_copy_object_event,
};
