/*
 * pg_conn.c -- PostgreSQL: the connection and its reopening, the schema
 * and its migrations, transactions, and the audit; the statements
 * prepared once per connection are pg_stmt.c's.
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
	rc = pg_prepare_all(st, err, errlen);
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
 * BEGIN that waits (store_begin_many()).  The session's own
 * synchronous_commit (pg_wait.c) is the store's: only a relaxed
 * transaction of a durable store sets it.
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
	if (rc == IH_OK && !durable && st->durable_as == STORE_DURABLE)
		rc = pg_defer_sql(st, "SET LOCAL synchronous_commit = off",
		    "", &p, "cannot begin transaction", err, errlen);
	return rc;
}

/*
 * A durable transaction commits with synchronous_commit on (the WAL is
 * flushed, and replicated as the server is configured, before COMMIT
 * returns), the session's setting in a durable store; a relaxed one
 * with it off.  BEGIN on a connection found broken reopens it once, so
 * the first request after a server restart already succeeds.
 */
static int
pg_begin(struct store *base, enum store_durability d, char *err,
    size_t errlen)
{
	struct pgs *st = pg_of(base);
	const char *sql;
	int rc, tries;

	st->fresh_claim = 0;
	st->fresh_done = 0;
	st->nown = 0;
	if (st->lazy_begin) {
		st->lazy_begin = 0;
		return begin_deferred(st, d == STORE_DURABLE &&
		    st->durable_as == STORE_DURABLE, err, errlen);
	}
	sql = d == STORE_DURABLE || st->durable_as != STORE_DURABLE ?
	    "BEGIN" : "BEGIN; SET LOCAL synchronous_commit = off";
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
 * next statement that waits for its answer.  Checking reads the deferred
 * answers, so that a write the server refused (a trigger, a constraint)
 * is said before the savepoint is released and can be undone alone,
 * rather than failing the whole transaction's COMMIT.
 */
static int
pg_savepoint(struct store *base, enum store_sp op, char *err,
    size_t errlen)
{
	struct pgs *st = pg_of(base);
	struct pg_params p;
	PGresult *res;

	memset(&p, 0, sizeof(p));
	if (op == STORE_SP_CHECK) {
		res = pg_wait_pending(st);
		if (PQresultStatus(res) != PGRES_COMMAND_OK &&
		    PQresultStatus(res) != PGRES_TUPLES_OK)
			return pg_fail(st, res, "the store refused a write",
			    err, errlen);
		PQclear(res);
		return IH_OK;
	}
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
	.dest_put = pg_dest_put,
	.dest_prune = pg_dest_prune,
	.dest_claimed = pg_dest_claimed,
	.dest_ok = pg_dest_ok,
	.dest_failed = pg_dest_failed,
	.dest_state = pg_dest_state,
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
