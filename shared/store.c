/* store.c -- events in one SQLite file, WAL mode, unique per provider. */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "ih.h"
#include "store.h"

/* db/schema.sql, turned into a C string at build time. */
extern const char store_schema_sql[];

struct store {
	sqlite3		*db;
	long		 busy_timeout_ms;
	struct timespec	 busy_start;
	sqlite3_stmt	*record;
	sqlite3_stmt	*begin;
	sqlite3_stmt	*commit;
	sqlite3_stmt	*rollback;
};

int64_t
store_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Writes "what: sqlite's message" into err. */
static int
fail(struct store *st, int rc, const char *what, char *err, size_t errlen)
{
	const char *msg = st != NULL && st->db != NULL ?
	    sqlite3_errmsg(st->db) : sqlite3_errstr(rc);

	snprintf(err, errlen, "%s: %s (sqlite %d)", what, msg, rc);
	return IH_ESTORE;
}

/*
 * SQLite's default busy handler sleeps in steps of up to 100 ms, which
 * turns a short wait for the write lock into a long tail.  Waiting in
 * short steps keeps the queue moving; the deadline is the same.
 */
static int
busy_wait(void *arg, int count)
{
	struct store *st = arg;
	struct timespec now, nap;
	long elapsed_ms;

	clock_gettime(CLOCK_MONOTONIC, &now);
	if (count == 0)
		st->busy_start = now;
	elapsed_ms = (now.tv_sec - st->busy_start.tv_sec) * 1000 +
	    (now.tv_nsec - st->busy_start.tv_nsec) / 1000000;
	if (elapsed_ms >= st->busy_timeout_ms)
		return 0;
	nap.tv_sec = 0;
	nap.tv_nsec = count < 50 ? 20000 : count < 500 ? 100000 : 1000000;
	nanosleep(&nap, NULL);
	return 1;
}

/* Creates each missing directory of path's parent, mode 0700. */
static int
make_parents(const char *path, char *err, size_t errlen)
{
	char dir[4096];
	size_t len = strlen(path), i;

	if (len >= sizeof(dir)) {
		snprintf(err, errlen, "store path is longer than %zu bytes",
		    sizeof(dir) - 1);
		return IH_ESTORE;
	}
	memcpy(dir, path, len + 1);
	for (i = 1; i < len; i++) {
		if (dir[i] != '/')
			continue;
		dir[i] = '\0';
		if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
			snprintf(err, errlen, "cannot create directory %s: %s",
			    dir, strerror(errno));
			return IH_ESTORE;
		}
		dir[i] = '/';
	}
	return IH_OK;
}

/* Creates the file owner-only before SQLite opens it with its umask. */
static int
make_file(const char *path, char *err, size_t errlen)
{
	int fd;

	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0) {
		snprintf(err, errlen, "cannot create store %s: %s", path,
		    strerror(errno));
		return IH_ESTORE;
	}
	close(fd);
	return IH_OK;
}

static int
exec(struct store *st, const char *sql, const char *what, char *err,
    size_t errlen)
{
	int rc;

	rc = sqlite3_exec(st->db, sql, NULL, NULL, NULL);
	if (rc != SQLITE_OK)
		return fail(st, rc, what, err, errlen);
	return IH_OK;
}

static int
user_version(struct store *st, int *version, char *err, size_t errlen)
{
	sqlite3_stmt *stmt = NULL;
	int rc;

	rc = sqlite3_prepare_v2(st->db, "PRAGMA user_version", -1, &stmt,
	    NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(stmt);
	if (rc != SQLITE_ROW) {
		rc = fail(st, rc, "cannot read schema version", err, errlen);
		goto out;
	}
	*version = sqlite3_column_int(stmt, 0);
	rc = IH_OK;
out:
	sqlite3_finalize(stmt);
	return rc;
}

/* Applies the schema once, under the write lock, if it is older. */
static int
migrate(struct store *st, char *err, size_t errlen)
{
	char sql[64];
	int version, rc;

	rc = user_version(st, &version, err, errlen);
	if (rc != IH_OK || version == STORE_SCHEMA_VERSION)
		return rc;
	rc = exec(st, "BEGIN IMMEDIATE", "cannot lock store to migrate",
	    err, errlen);
	if (rc != IH_OK)
		return rc;
	/* Another process may have migrated while this one waited. */
	rc = user_version(st, &version, err, errlen);
	if (rc != IH_OK)
		goto out;
	if (version > STORE_SCHEMA_VERSION) {
		snprintf(err, errlen, "store schema version %d is newer than "
		    "this build's %d: upgrade idemhook", version,
		    STORE_SCHEMA_VERSION);
		rc = IH_ECONFIG;
		goto out;
	}
	if (version < STORE_SCHEMA_VERSION) {
		rc = exec(st, store_schema_sql, "cannot apply schema", err,
		    errlen);
		if (rc != IH_OK)
			goto out;
		snprintf(sql, sizeof(sql), "PRAGMA user_version = %d",
		    STORE_SCHEMA_VERSION);
		rc = exec(st, sql, "cannot set schema version", err, errlen);
		if (rc != IH_OK)
			goto out;
	}
	rc = exec(st, "COMMIT", "cannot commit schema", err, errlen);
out:
	if (rc != IH_OK && !sqlite3_get_autocommit(st->db))
		sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}

static int
prepare(struct store *st, const char *sql, sqlite3_stmt **stmt, char *err,
    size_t errlen)
{
	int rc;

	rc = sqlite3_prepare_v3(st->db, sql, -1, SQLITE_PREPARE_PERSISTENT,
	    stmt, NULL);
	if (rc != SQLITE_OK)
		return fail(st, rc, "cannot prepare statement", err, errlen);
	return IH_OK;
}

int
store_open(const struct store_opts *opts, struct store **out, char *err,
    size_t errlen)
{
	struct store *st = NULL;
	char sql[64];
	int rc = IH_ENOMEM;

	*out = NULL;
	st = calloc(1, sizeof(*st));
	if (st == NULL)
		goto out;
	st->busy_timeout_ms = opts->busy_timeout_ms;
	rc = make_parents(opts->path, err, errlen);
	if (rc != IH_OK)
		goto out;
	rc = make_file(opts->path, err, errlen);
	if (rc != IH_OK)
		goto out;
	rc = sqlite3_open_v2(opts->path, &st->db, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_NOMUTEX, NULL);
	if (rc != SQLITE_OK) {
		rc = fail(st, rc, "cannot open store", err, errlen);
		goto out;
	}
	sqlite3_extended_result_codes(st->db, 1);
	sqlite3_busy_handler(st->db, busy_wait, st);
	rc = exec(st, "PRAGMA journal_mode = WAL", "cannot set WAL mode",
	    err, errlen);
	if (rc != IH_OK)
		goto out;
	snprintf(sql, sizeof(sql), "PRAGMA synchronous = %s",
	    opts->synchronous == 1 ? "NORMAL" : "FULL");
	rc = exec(st, sql, "cannot set synchronous", err, errlen);
	if (rc != IH_OK)
		goto out;
	rc = exec(st, "PRAGMA foreign_keys = ON", "cannot enable foreign keys",
	    err, errlen);
	if (rc != IH_OK)
		goto out;
	rc = migrate(st, err, errlen);
	if (rc != IH_OK)
		goto out;
	if ((rc = prepare(st, "BEGIN IMMEDIATE", &st->begin, err,
	    errlen)) != IH_OK ||
	    (rc = prepare(st, "COMMIT", &st->commit, err, errlen)) != IH_OK ||
	    (rc = prepare(st, "ROLLBACK", &st->rollback, err,
	    errlen)) != IH_OK)
		goto out;
	rc = prepare(st,
	    "INSERT INTO events (provider, event_id, event_type, order_key,"
	    " payload, headers, received_at, last_seen_at, status,"
	    " next_attempt_at, subtype)"
	    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7,"
	    " coalesce(?8, 'received'), ?7, ?9)"
	    " ON CONFLICT (provider, event_id) DO UPDATE SET"
	    " duplicates = duplicates + 1,"
	    " last_seen_at = excluded.received_at"
	    " RETURNING id, duplicates, status", &st->record, err, errlen);
	if (rc != IH_OK)
		goto out;
	*out = st;
	st = NULL;
	rc = IH_OK;
out:
	store_close(st);
	return rc;
}

void
store_close(struct store *st)
{
	if (st == NULL)
		return;
	sqlite3_finalize(st->record);
	sqlite3_finalize(st->begin);
	sqlite3_finalize(st->commit);
	sqlite3_finalize(st->rollback);
	sqlite3_close(st->db);
	free(st);
}

/* Runs a prepared statement that returns no rows. */
static int
step_done(struct store *st, sqlite3_stmt *stmt, const char *what,
    char *err, size_t errlen)
{
	int rc;

	rc = sqlite3_step(stmt);
	sqlite3_reset(stmt);
	if (rc != SQLITE_DONE)
		return fail(st, rc, what, err, errlen);
	return IH_OK;
}

int
store_begin(struct store *st, char *err, size_t errlen)
{
	return step_done(st, st->begin, "cannot begin transaction", err,
	    errlen);
}

void
store_rollback(struct store *st)
{
	if (!sqlite3_get_autocommit(st->db)) {
		sqlite3_step(st->rollback);
		sqlite3_reset(st->rollback);
	}
}

int
store_commit(struct store *st, char *err, size_t errlen)
{
	int rc;

	rc = step_done(st, st->commit, "cannot commit", err, errlen);
	if (rc != IH_OK)
		store_rollback(st);
	return rc;
}

int
store_record(struct store *st, const struct store_event *ev, int64_t now_ms,
    struct store_result *res, char *err, size_t errlen)
{
	sqlite3_stmt *s = st->record;
	const char *status;
	int own_txn = sqlite3_get_autocommit(st->db), rc, step;

	memset(res, 0, sizeof(*res));
	if (ev->provider == NULL || ev->event_id == NULL ||
	    ev->event_type == NULL || ev->payload_len > 0x7fffffff) {
		snprintf(err, errlen, "event lacks provider, id or type");
		return IH_EINVAL;
	}
	if (own_txn) {
		rc = store_begin(st, err, errlen);
		if (rc != IH_OK)
			return rc;
	}
	sqlite3_bind_text(s, 1, ev->provider, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, ev->event_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 3, ev->event_type, -1, SQLITE_STATIC);
	if (ev->order_key != NULL)
		sqlite3_bind_text(s, 4, ev->order_key, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(s, 4);
	sqlite3_bind_blob(s, 5, ev->payload_len ? ev->payload : "",
	    (int)ev->payload_len, SQLITE_STATIC);
	sqlite3_bind_text(s, 6, ev->headers ? ev->headers : "", -1,
	    SQLITE_STATIC);
	sqlite3_bind_int64(s, 7, now_ms);
	if (ev->status != NULL)
		sqlite3_bind_text(s, 8, ev->status, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(s, 8);
	if (ev->subtype != NULL)
		sqlite3_bind_text(s, 9, ev->subtype, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(s, 9);

	step = sqlite3_step(s);
	if (step != SQLITE_ROW) {
		rc = fail(st, step, "cannot record event", err, errlen);
		goto out;
	}
	res->rowid = sqlite3_column_int64(s, 0);
	res->duplicates = sqlite3_column_int64(s, 1);
	res->duplicate = res->duplicates > 0;
	status = (const char *)sqlite3_column_text(s, 2);
	snprintf(res->status, sizeof(res->status), "%s",
	    status ? status : "");
	step = sqlite3_step(s);
	if (step != SQLITE_DONE) {
		rc = fail(st, step, "cannot record event", err, errlen);
		goto out;
	}
	rc = IH_OK;
out:
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	if (own_txn) {
		if (rc == IH_OK)
			rc = store_commit(st, err, errlen);
		else
			store_rollback(st);
	}
	return rc;
}
