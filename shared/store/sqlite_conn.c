/*
 * sqlite_conn.c -- SQLite: the connection, the writers' queue, the schema
 * and its migrations, transactions and the audit.
 */
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

#include "clock.h"
#include "ih.h"
#include "sqlite_int.h"
#include "sqlite_trust.h"

/* db/sqlite/schema.sql, turned into a C string at build time. */
extern const char store_sqlite_schema_sql[];
/* db/sqlite/migrations/<N>.sql as [N]: version N-1 to N. */
extern const char *const store_sqlite_migrations[];
extern const size_t store_sqlite_nmigrations;


/*
 * What is due, for a claim (?1 provider or NULL, ?2 rowid or 0, ?4 now):
 * received, failed with its time come, or processing with an expired
 * lease; and not behind an unfinished older event of its order key.  The
 * status term repeats the partial index's WHERE so that the index serves
 * the search.
 */
#define STORE_DUE_SQL \
	" e.status IN ('received', 'processing', 'failed')" \
	" AND (?1 IS NULL OR e.provider = ?1)" \
	" AND (?2 = 0 OR e.id = ?2)" \
	" AND (e.status = 'received'" \
	"  OR (e.status = 'failed' AND e.next_attempt_at <= ?4)" \
	"  OR (e.status = 'processing' AND e.lease_until <= ?4))" \
	" AND (e.order_key IS NULL OR NOT EXISTS (SELECT 1 FROM events p" \
	"  WHERE p.provider = e.provider AND p.order_key = e.order_key" \
	"  AND p.id < e.id" \
	"  AND p.status NOT IN ('done', 'dead', 'quarantined')))"

/* The statements prepared once per connection, in struct order. */
static const struct {
	size_t		 off;
	const char	*sql;
} store_sql[] = {
	{ offsetof(struct sq, begin), "BEGIN IMMEDIATE" },
	{ offsetof(struct sq, commit), "COMMIT" },
	{ offsetof(struct sq, rollback), "ROLLBACK" },
	{ offsetof(struct sq, sp_begin), "SAVEPOINT ih" },
	{ offsetof(struct sq, sp_release), "RELEASE ih" },
	{ offsetof(struct sq, sp_undo), "ROLLBACK TO ih" },
	{ offsetof(struct sq, record),
	    "INSERT INTO events (provider, event_id, event_type, order_key,"
	    " headers, received_at, last_seen_at, status,"
	    " next_attempt_at, subtype, fingerprint, lease_owner, lease_until,"
	    " attempts)"
	    " VALUES (?1, ?2, ?3, ?4, ?6, ?7, ?7,"
	    " CASE WHEN ?11 IS NOT NULL THEN 'processing'"
	    " ELSE coalesce(?8, 'received') END, ?7, ?9, ?10, ?11, ?12,"
	    " ?11 IS NOT NULL)"
	    " ON CONFLICT (provider, event_id) DO UPDATE SET"
	    " duplicates = duplicates + 1,"
	    " last_seen_at = excluded.received_at"
	    " RETURNING id, duplicates, status" },
	/* A new event's payload, written once; status changes leave it. */
	{ offsetof(struct sq, record_payload),
	    "INSERT INTO payloads (event, payload) VALUES (?1, ?2)" },
	{ offsetof(struct sq, payload_get),
	    "SELECT payload FROM payloads WHERE event = ?1" },
	/* One statement picks and takes the event: two never both take it. */
	{ offsetof(struct sq, claim),
	    "UPDATE events SET status = 'processing', lease_owner = ?3,"
	    " lease_until = ?5, attempts = attempts + 1"
	    " WHERE id = (SELECT e.id FROM events e WHERE " STORE_DUE_SQL
	    "  ORDER BY e.id LIMIT 1)"
	    " RETURNING id, provider, event_id, event_type, subtype,"
	    " (SELECT length(payload) FROM payloads WHERE event = events.id),"
	    " attempts, received_at" },
	/* The same search as a plain read, which takes no write lock. */
	{ offsetof(struct sq, due),
	    "SELECT 1 FROM events e WHERE " STORE_DUE_SQL " LIMIT 1" },
	{ offsetof(struct sq, attempt_start),
	/*
	 * Attempts are numbered per event over its whole life, so that a
	 * replay, which restarts the retry budget, keeps the history.
	 */
	    "INSERT INTO attempts (event, attempt, started_at)"
	    " VALUES (?1, (SELECT coalesce(max(attempt), 0) + 1 FROM attempts"
	    " WHERE event = ?1), ?2) RETURNING attempt" },
	{ offsetof(struct sq, attempt_end),
	    "UPDATE attempts SET finished_at = ?3, outcome = ?4, error = ?5"
	    " WHERE event = ?1 AND attempt = ?2" },
	{ offsetof(struct sq, complete),
	    "UPDATE events SET status = 'done', done_at = ?3,"
	    " lease_owner = NULL, lease_until = NULL, last_error = NULL"
	    " WHERE id = ?1 AND lease_owner = ?2 AND status = 'processing'" },
	{ offsetof(struct sq, failed),
	    "UPDATE events SET status = CASE WHEN ?5 THEN 'dead'"
	    " ELSE 'failed' END, next_attempt_at = ?4, last_error = ?3,"
	    " lease_owner = NULL, lease_until = NULL"
	    " WHERE id = ?1 AND lease_owner = ?2 AND status = 'processing'" },
	{ offsetof(struct sq, effect),
	    "INSERT INTO effects (event, kind, created_at) VALUES (?1, ?2, ?3)"
	    " ON CONFLICT DO NOTHING" },
	/*
	 * The first event of the provider with the same payload, when
	 * (provider, event_id) is new: see store_replay_of().
	 */
	{ offsetof(struct sq, replay),
	    "SELECT event_id, event_type,"
	    " ?4 IS NOT NULL AND instr(char(10) || headers, ?4) > 0"
	    " FROM events WHERE provider = ?1 AND fingerprint = ?2"
	    " AND NOT EXISTS (SELECT 1 FROM events"
	    "  WHERE provider = ?1 AND event_id = ?3)"
	    " ORDER BY id LIMIT 1" },
	/* The ordering guard's statements (sqlite_objects.c), per event. */
	{ offsetof(struct sq, obj_key),
	    "SELECT source_at, rank, event_id FROM objects"
	    " WHERE provider = ?1 AND kind = ?2 AND object_id = ?3" },
	{ offsetof(struct sq, obj_put),
	    "INSERT INTO objects (provider, kind, object_id,"
	    " status, object, source_at, rank, event_id, deleted, created_at,"
	    " changed_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10,"
	    " ?10) ON CONFLICT (provider, kind, object_id) DO UPDATE SET"
	    " status = excluded.status, object = excluded.object,"
	    " source_at = excluded.source_at, rank = excluded.rank,"
	    " event_id = excluded.event_id, deleted = excluded.deleted,"
	    " changed_at = excluded.changed_at" },
	{ offsetof(struct sq, obj_hist),
	    "INSERT INTO object_events (provider, kind,"
	    " object_id, event_id, event_type, status, source_at, rank,"
	    " deleted, verdict, recorded_at, seq) SELECT ?1, ?2, ?3, ?4, ?5,"
	    " ?6, ?7, ?8, ?9, ?10, ?11, coalesce(max(seq), 0) + 1"
	    " FROM object_events WHERE provider = ?1 AND kind = ?2"
	    " AND object_id = ?3"
	    " ON CONFLICT (provider, kind, object_id, event_id) DO NOTHING" },
};
#define STORE_NSQL	(sizeof(store_sql) / sizeof(store_sql[0]))


void
store_process_init(void)
{
	/* SQLITE_MISUSE once SQLite is initialised: then nothing changes. */
	(void)sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

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

/*
 * SQLite's default busy handler sleeps in steps of up to 100 ms, which
 * turns a short wait for the write lock into a long tail.  Waiting in
 * short steps keeps the queue moving; the deadline is the same.
 */
static int
busy_wait(void *arg, int count)
{
	struct sq *st = arg;
	struct timespec nap;
	int64_t now = clock_mono_ms();
	long elapsed_ms;

	if (count == 0)
		st->busy_start_ms = now;
	elapsed_ms = (long)(now - st->busy_start_ms);
	if (elapsed_ms >= st->busy_timeout_ms)
		return 0;
	nap.tv_sec = 0;
	nap.tv_nsec = count < 50 ? 20000 : count < 500 ? 100000 : 1000000;
	nanosleep(&nap, NULL);
	return 1;
}

static void
on_alarm(int sig)
{
	(void)sig;
}

/*
 * Writers queue on a kernel lock before they ask SQLite for its write
 * lock.  SQLite's own wait is a poll: a waiting process notices the lock
 * is free only when its nap ends, and a busy writer can take it again
 * first, so two writers together commit less than one alone.  The kernel
 * instead wakes the next writer when the lock is released.  The wait is
 * bounded by the busy timeout: a timer interrupts it every few
 * milliseconds to check the deadline.  Any failure of the queue itself
 * falls back to SQLite's wait, which alone keeps the data correct.
 */
static int
queue_enter(struct sq *st, char *err, size_t errlen)
{
	struct sigaction sa, old_sa;
	struct itimerval tick, old_tick;
	int64_t t0;
	long waited;
	int rc = IH_OK;

	if (st->queuefd < 0 || st->queued)
		return IH_OK;
	if (flock(st->queuefd, LOCK_EX | LOCK_NB) == 0) {
		st->queued = 1;
		return IH_OK;
	}
	if (errno != EWOULDBLOCK)
		return IH_OK;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, &old_sa);
	memset(&tick, 0, sizeof(tick));
	tick.it_interval.tv_usec = 5000;
	tick.it_value.tv_usec = 5000;
	setitimer(ITIMER_REAL, &tick, &old_tick);
	t0 = clock_mono_ms();
	for (;;) {
		if (flock(st->queuefd, LOCK_EX) == 0) {
			st->queued = 1;
			break;
		}
		if (errno != EINTR)
			break;
		waited = (long)(clock_mono_ms() - t0);
		if (waited >= st->busy_timeout_ms) {
			snprintf(err, errlen, "cannot begin transaction: "
			    "other writers held the store past the busy "
			    "timeout (%ld ms)", st->busy_timeout_ms);
			rc = IH_ESTORE;
			break;
		}
	}
	memset(&tick, 0, sizeof(tick));
	setitimer(ITIMER_REAL, &old_tick, NULL);
	sigaction(SIGALRM, &old_sa, NULL);
	return rc;
}

static void
queue_leave(struct sq *st)
{
	if (st->queued) {
		flock(st->queuefd, LOCK_UN);
		st->queued = 0;
	}
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

/*
 * Creates the file owner-only before SQLite opens it with its umask, and
 * refuses a store, -wal, -shm or -lock file that is a symbolic link.
 * (SQLite itself opens -wal and -shm with O_NOFOLLOW but would follow a
 * link at the store's own path.)  An existing file is never opened here:
 * closing any descriptor of it would drop every POSIX lock this process
 * holds on it, those of another open connection too (a receiver's
 * processing thread has its own), and then another process may take the
 * WAL for unused and delete it.
 */
static int
make_file(const char *path, char *err, size_t errlen)
{
	static const char *const sides[] = { "-wal", "-shm", "-lock" };
	char side[4200];
	struct stat sb;
	size_t i;
	int fd, n;

	/* O_EXCL never follows a link: whoever plants one cannot aim writes. */
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 && errno == EEXIST) {
		if (lstat(path, &sb) == 0 && S_ISLNK(sb.st_mode))
			errno = ELOOP;
		else
			fd = -2;
	}
	if (fd == -1) {
		snprintf(err, errlen, "cannot create store %s: %s%s", path,
		    strerror(errno), errno == ELOOP ? " (a symbolic link is "
		    "refused)" : "");
		return IH_ESTORE;
	}
	if (fd >= 0)
		close(fd);
	for (i = 0; i < sizeof(sides) / sizeof(sides[0]); i++) {
		n = snprintf(side, sizeof(side), "%s%s", path, sides[i]);
		if (n < 0 || (size_t)n >= sizeof(side) ||
		    lstat(side, &sb) != 0 || !S_ISLNK(sb.st_mode))
			continue;
		snprintf(err, errlen, "cannot open store %s: %s is a symbolic "
		    "link (refused)", path, side);
		return IH_ESTORE;
	}
	return IH_OK;
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

/*
 * Switches to WAL and checks that it took: a filesystem without shared
 * memory support leaves the file in rollback mode, where readers block
 * writers and the durability trade-offs differ.  Switching needs the
 * exclusive lock, and SQLite answers SQLITE_BUSY at once, without its
 * busy handler, while another connection reads the file; so the switch
 * is retried until the busy timeout.
 */
static int
set_wal(struct sq *st, char *err, size_t errlen)
{
	sqlite3_stmt *stmt = NULL;
	const unsigned char *mode;
	int rc, count;

	rc = sqlite3_prepare_v2(st->db, "PRAGMA journal_mode = WAL", -1,
	    &stmt, NULL);
	for (count = 0; rc == SQLITE_OK || (rc & 0xff) == SQLITE_BUSY;
	    count++) {
		rc = sqlite3_step(stmt);
		if ((rc & 0xff) != SQLITE_BUSY || !busy_wait(st, count))
			break;
		sqlite3_reset(stmt);
	}
	if (rc != SQLITE_ROW) {
		rc = sq_fail(st, rc, "cannot set WAL mode", err, errlen);
		goto out;
	}
	mode = sqlite3_column_text(stmt, 0);
	if (mode == NULL || strcmp((const char *)mode, "wal") != 0) {
		snprintf(err, errlen, "store stays in journal mode %s, not "
		    "WAL: put it on a local filesystem",
		    mode ? (const char *)mode :
		    "unknown");
		rc = IH_ESTORE;
		goto out;
	}
	rc = IH_OK;
out:
	sqlite3_finalize(stmt);
	return rc;
}

static int
user_version(struct sq *st, int *version, char *err, size_t errlen)
{
	sqlite3_stmt *stmt = NULL;
	int rc;

	rc = sqlite3_prepare_v2(st->db, "PRAGMA user_version", -1, &stmt,
	    NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(stmt);
	if (rc != SQLITE_ROW) {
		rc = sq_fail(st, rc, "cannot read schema version", err, errlen);
		goto out;
	}
	*version = sqlite3_column_int(stmt, 0);
	rc = IH_OK;
out:
	sqlite3_finalize(stmt);
	return rc;
}

/*
 * Brings a store at version (under the write lock) to this build's:
 * a new file gets the whole schema, an older one each migration after
 * its version in turn.
 */
static int
apply_schema(struct sq *st, int version, char *err, size_t errlen)
{
	char what[64];
	int v, rc;

	if (version == 0)
		return sq_exec(st, store_sqlite_schema_sql,
		    "cannot apply schema", err, errlen);
	for (v = version + 1; v <= STORE_SCHEMA_VERSION; v++) {
		if ((size_t)v >= store_sqlite_nmigrations ||
		    store_sqlite_migrations[v] == NULL) {
			snprintf(err, errlen, "no migration from schema "
			    "version %d to %d", v - 1, v);
			return IH_ESTORE;
		}
		snprintf(what, sizeof(what), "cannot migrate to schema "
		    "version %d", v);
		rc = sq_exec(st, store_sqlite_migrations[v], what, err, errlen);
		if (rc != IH_OK)
			return rc;
	}
	return IH_OK;
}

/* Applies the schema once, under the write lock, if it is older. */
static int
migrate(struct sq *st, char *err, size_t errlen)
{
	char sql[64];
	int version, rc;

	rc = user_version(st, &version, err, errlen);
	if (rc != IH_OK || version == STORE_SCHEMA_VERSION)
		return rc;
	rc = sq_exec(st, "BEGIN IMMEDIATE", "cannot lock store to migrate",
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
		rc = apply_schema(st, version, err, errlen);
		if (rc != IH_OK)
			goto out;
		snprintf(sql, sizeof(sql), "PRAGMA user_version = %d",
		    STORE_SCHEMA_VERSION);
		rc = sq_exec(st, sql, "cannot set schema version", err, errlen);
		if (rc != IH_OK)
			goto out;
	}
	rc = sq_exec(st, "COMMIT", "cannot commit schema", err, errlen);
out:
	if (rc != IH_OK && !sqlite3_get_autocommit(st->db))
		sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}

/*
 * Is the store already in WAL mode with this build's schema?  Two plain
 * reads, which wait in the busy handler like any read.  Sets *ready.
 */
static int
is_ready(struct sq *st, int *ready, char *err, size_t errlen)
{
	sqlite3_stmt *stmt = NULL;
	const unsigned char *mode;
	int version, rc;

	*ready = 0;
	rc = user_version(st, &version, err, errlen);
	if (rc != IH_OK || version != STORE_SCHEMA_VERSION)
		return rc;
	rc = sqlite3_prepare_v2(st->db, "PRAGMA journal_mode", -1, &stmt,
	    NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(stmt);
	if (rc != SQLITE_ROW) {
		rc = sq_fail(st, rc, "cannot read journal mode", err, errlen);
		goto out;
	}
	mode = sqlite3_column_text(stmt, 0);
	*ready = mode != NULL && strcmp((const char *)mode, "wal") == 0;
	rc = IH_OK;
out:
	sqlite3_finalize(stmt);
	return rc;
}

/*
 * Switches the store to WAL and applies the schema.  Every process that
 * opens a new store at once would race to do both, and the losers of
 * the switch to WAL would fail at once (above), so a store that is not
 * ready is set up by one process at a time, in the writers' queue.  A
 * store that is ready costs two reads and no queue.
 */
static int
set_up(struct sq *st, char *err, size_t errlen)
{
	int ready, rc;

	rc = is_ready(st, &ready, err, errlen);
	if (rc != IH_OK || ready)
		return rc;
	rc = queue_enter(st, err, errlen);
	if (rc != IH_OK)
		return rc;
	rc = set_wal(st, err, errlen);
	if (rc == IH_OK)
		rc = migrate(st, err, errlen);
	queue_leave(st);
	return rc;
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

static const struct store_ops sq_ops;

static void	sq_close(struct store *);

int
store_sqlite_open(const struct store_opts *opts, struct store **out,
    char *err, size_t errlen)
{
	struct sq *st = NULL;
	char sql[64], qpath[4200];
	size_t i;
	int n, rc = IH_ENOMEM;

	*out = NULL;
	st = calloc(1, sizeof(*st));
	if (st == NULL)
		goto out;
	st->base.ops = &sq_ops;
	st->queuefd = -1;
	st->busy_timeout_ms = opts->busy_timeout_ms;
	rc = make_parents(opts->path, err, errlen);
	if (rc != IH_OK)
		goto out;
	rc = make_file(opts->path, err, errlen);
	if (rc != IH_OK)
		goto out;
	/* NOFOLLOW: make_file()'s lstat check must hold at the open too. */
	rc = sqlite3_open_v2(opts->path, &st->db, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW, NULL);
	if (rc != SQLITE_OK) {
		rc = sq_fail(st, rc, "cannot open store", err, errlen);
		goto out;
	}
	n = snprintf(qpath, sizeof(qpath), "%s-lock", opts->path);
	if (n > 0 && (size_t)n < sizeof(qpath))
		st->queuefd = open(qpath, O_RDWR | O_CREAT | O_CLOEXEC |
		    O_NOFOLLOW, 0600);
	sqlite3_extended_result_codes(st->db, 1);
	rc = sqtrust_harden(st->db, err, errlen);
	if (rc != IH_OK)
		goto out;
	/*
	 * A CGI program closes the store after every request; checkpointing
	 * then would cost three more fsyncs per delivery.  Checkpoints still
	 * happen as the log grows, during commits.
	 */
	sqlite3_db_config(st->db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL);
	sqlite3_busy_handler(st->db, busy_wait, st);
	st->sync_durable = opts->durable_as == STORE_RELAXED ? 1 : 2;
	/*
	 * Like the writers' queue, the shared sync is an optimisation: if its
	 * file cannot be used (another user's, a link), each durable commit
	 * fsyncs the log itself, as at FULL.
	 */
	if (opts->durable_as == STORE_DURABLE &&
	    sqsync_open(opts->path, &st->shared, err, errlen) != IH_OK)
		st->shared = NULL;
	st->sync_now = st->sync_durable;
	snprintf(sql, sizeof(sql), "PRAGMA synchronous = %s",
	    st->sync_durable == 1 ? "NORMAL" : "FULL");
	rc = sq_exec(st, sql, "cannot set synchronous", err, errlen);
	if (rc != IH_OK)
		goto out;
	rc = sq_exec(st, "PRAGMA foreign_keys = ON",
	    "cannot enable foreign keys", err, errlen);
	if (rc != IH_OK)
		goto out;
	/*
	 * Each event of a batch has its savepoint, whose journal of page
	 * images would otherwise go to a temporary file once past 64 KiB:
	 * about 19 writes per event.  In memory it costs at most one
	 * batch's pages, freed at its commit.
	 */
	rc = sq_exec(st, "PRAGMA temp_store = MEMORY",
	    "cannot keep temporary data in memory", err, errlen);
	if (rc != IH_OK)
		goto out;
	/*
	 * 1 MiB of page cache, not SQLite's 2: a receiver's inserts touch
	 * the right edges of the table and the indexes' upper levels, and
	 * the process stays near 4 MiB of private memory.
	 */
	rc = sq_exec(st, "PRAGMA cache_size = -1024",
	    "cannot set the page cache", err, errlen);
	if (rc != IH_OK)
		goto out;
	rc = set_up(st, err, errlen);
	if (rc != IH_OK)
		goto out;
	for (i = 0; i < STORE_NSQL; i++) {
		rc = sq_prepare(st, store_sql[i].sql, (sqlite3_stmt **)(void *)
		    ((char *)st + store_sql[i].off), err, errlen);
		if (rc != IH_OK)
			goto out;
	}
	*out = &st->base;
	st = NULL;
	rc = IH_OK;
out:
	if (st != NULL)
		sq_close(&st->base);
	return rc;
}

static void
sq_close(struct store *base)
{
	struct sq *st = sq_of(base);
	size_t i;

	for (i = 0; i < STORE_NSQL; i++)
		sqlite3_finalize(*(sqlite3_stmt **)(void *)((char *)st +
		    store_sql[i].off));
	sqlite3_close(st->db);
	sqsync_close(st->shared);
	queue_leave(st);
	if (st->queuefd >= 0)
		close(st->queuefd);
	free(st);
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

static int
sq_begin(struct store *base, enum store_durability d, char *err,
    size_t errlen)
{
	struct sq *st = sq_of(base);
	int want = d == STORE_DURABLE ? st->sync_durable : 1, rc;

	if (st->distrusted)
		st->distrusted = sqtrust_recheck(st->db);
	/* SHARED: written at NORMAL, synced by sq_commit (sqlite_sync.h). */
	st->tx_shared = d == STORE_DURABLE && st->shared != NULL;
	if (st->tx_shared)
		want = 1;

	/*
	 * The level applies to the commits that follow: set it outside the
	 * transaction.  It is not a prepared statement: SQLite applies this
	 * pragma when it compiles it, so a prepared copy would act once, at
	 * prepare time, and never again.
	 */
	if (want != st->sync_now) {
		rc = sq_exec(st, want == 2 ? "PRAGMA synchronous = FULL" :
		    "PRAGMA synchronous = NORMAL", "cannot set synchronous",
		    err, errlen);
		if (rc != IH_OK)
			return rc;
		st->sync_now = want;
	}
	rc = queue_enter(st, err, errlen);
	if (rc != IH_OK)
		return rc;
	rc = sq_step_done(st, st->begin, "cannot begin transaction", err,
	    errlen);
	if (rc != IH_OK)
		queue_leave(st);
	return rc;
}

static void
sq_rollback(struct store *base)
{
	struct sq *st = sq_of(base);

	st->tx_shared = 0;
	if (!sqlite3_get_autocommit(st->db)) {
		sqlite3_step(st->rollback);
		sqlite3_reset(st->rollback);
	}
	queue_leave(st);
}

/*
 * A SHARED transaction takes its ticket while it still holds the writers'
 * queue and waits for the log's sync after leaving it, so that the next
 * writers commit meanwhile and one sync covers them all.
 */
static int
sq_commit(struct store *base, char *err, size_t errlen)
{
	struct sq *st = sq_of(base);
	uint64_t ticket = 0;
	int rc, shared = st->tx_shared;

	st->tx_shared = 0;
	rc = sq_step_done(st, st->commit, "cannot commit", err, errlen);
	if (rc != IH_OK)
		sq_rollback(base);
	else if (shared)
		ticket = sqsync_note(st->shared);
	queue_leave(st);
	if (rc == IH_OK && shared)
		rc = sqsync_wait(st->shared, st->db, ticket, err, errlen);
	return rc;
}

/* The innermost savepoint: opened, released, or rolled back and popped. */
static int
sq_savepoint(struct store *base, enum store_sp op, char *err,
    size_t errlen)
{
	struct sq *st = sq_of(base);
	int rc;

	if (op == STORE_SP_OPEN)
		return sq_step_done(st, st->sp_begin, "cannot open savepoint",
		    err, errlen);
	if (op == STORE_SP_UNDO) {
		rc = sq_step_done(st, st->sp_undo, "cannot roll back to "
		    "savepoint", err, errlen);
		if (rc != IH_OK)
			return rc;
	}
	return sq_step_done(st, st->sp_release, "cannot release savepoint",
	    err, errlen);
}

static void
sq_no_queue(struct store *base)
{
	struct sq *st = sq_of(base);

	/* flock(2) locks belong to this descriptor only: closing it frees
	 * nothing another connection holds. */
	if (st->queuefd >= 0 && !st->queued) {
		close(st->queuefd);
		st->queuefd = -1;
	}
}

/* Reads a one-value pragma's text into out. */
static int
pragma_text(struct sq *st, const char *sql, char *out, size_t len,
    char *err, size_t errlen)
{
	sqlite3_stmt *s = NULL;
	const char *m;
	int rc, step;

	rc = sq_prepare(st, sql, &s, err, errlen);
	if (rc != IH_OK)
		goto out;
	step = sqlite3_step(s);
	if (step != SQLITE_ROW) {
		rc = sq_fail(st, step, "cannot read a pragma", err, errlen);
		goto out;
	}
	m = (const char *)sqlite3_column_text(s, 0);
	snprintf(out, len, "%s", m != NULL ? m : "");
	rc = IH_OK;
out:
	sqlite3_finalize(s);
	return rc;
}

/*
 * The journal mode must be WAL (a file system without shared memory
 * leaves rollback mode); synchronous is the connection's level now,
 * FULL (2) or NORMAL (1), for the operator and the tests.
 */
static int
sq_audit(struct store *base, int (*fn)(void *, const struct store_audit *),
    void *arg, char *err, size_t errlen)
{
	struct sq *st = sq_of(base);
	struct store_audit a;
	int rc;

	memset(&a, 0, sizeof(a));
	a.name = "journal_mode";
	rc = pragma_text(st, "PRAGMA journal_mode", a.value, sizeof(a.value),
	    err, errlen);
	if (rc != IH_OK)
		return rc;
	a.ok = strcmp(a.value, "wal") == 0;
	if (!a.ok)
		snprintf(a.advice, sizeof(a.advice), "the file system may not "
		    "support WAL (network file systems do not); keep the "
		    "store on a local disk");
	rc = fn(arg, &a);
	if (rc != IH_OK)
		return rc;
	memset(&a, 0, sizeof(a));
	a.name = "synchronous";
	rc = pragma_text(st, "PRAGMA synchronous", a.value, sizeof(a.value),
	    err, errlen);
	if (rc != IH_OK)
		return rc;
	a.ok = 1;
	return fn(arg, &a);
}

static const struct store_ops sq_ops = {
	.name = "sqlite",
	.close = sq_close,
	.no_queue = sq_no_queue,
	.begin = sq_begin,
	.commit = sq_commit,
	.rollback = sq_rollback,
	.savepoint = sq_savepoint,
	.record = sq_record,
	.attempt_start = sq_attempt_start,
	.replay_of = sq_replay_of,
	.claim = sq_claim,
	.effect = sq_effect,
	.complete = sq_complete,
	.fail = sq_fail_job,
	.renew = sq_renew,
	.attempt_lost = sq_attempt_lost,
	.forget = sq_forget,
	.requeue = sq_requeue,
	.due = sq_due,
	.list = sq_list,
	.show = sq_show,
	.attempts = sq_attempts,
	.purge = sq_purge,
	.stats = sq_stats,
	.audit = sq_audit,
	.console_counts = sq_console_counts,
	.console_hours = sq_console_hours,
	.console_latency = sq_console_latency,
	.console_size = sq_console_size,
	.console_bounds = sq_console_bounds,
	.console_window = sq_console_window,
	.console_last = sq_console_last,
	.console_explain = sq_console_explain,
	.signin_charge = sq_signin_charge,
	.signin_refund = sq_signin_refund,
	.signin_prune = sq_signin_prune,
	.copy_count = sq_copy_count,
	.copy_read = sq_copy_read,
	.effects = sq_effects,
	.object_apply = sq_object_apply,
	.objects = sq_objects,
	.object_history = sq_object_history,
};
