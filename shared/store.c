/* store.c -- events in one SQLite file, WAL mode, unique per provider. */
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

#include "ih.h"
#include "store.h"

/* db/schema.sql, turned into a C string at build time. */
extern const char store_schema_sql[];
/* db/migrations/<N>.sql as store_migrations[N]: version N-1 to N. */
extern const char *const store_migrations[];
extern const size_t store_nmigrations;

struct store {
	sqlite3		*db;
	int		 queuefd;	/* <path>-lock: writers queue on it */
	int		 queued;	/* this store holds the queue lock */
	long		 busy_timeout_ms;
	struct timespec	 busy_start;
	sqlite3_stmt	*record;
	sqlite3_stmt	*begin;
	sqlite3_stmt	*commit;
	sqlite3_stmt	*rollback;
	sqlite3_stmt	*claim;
	sqlite3_stmt	*due;
	sqlite3_stmt	*attempt_start;
	sqlite3_stmt	*attempt_end;
	sqlite3_stmt	*complete;
	sqlite3_stmt	*failed;
	sqlite3_stmt	*effect;
	sqlite3_stmt	*replay;
	int		 sync_durable;	/* the configured level: 2 or 1 */
	int		 sync_now;	/* the connection's level now */
};

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
	{ offsetof(struct store, begin), "BEGIN IMMEDIATE" },
	{ offsetof(struct store, commit), "COMMIT" },
	{ offsetof(struct store, rollback), "ROLLBACK" },
	{ offsetof(struct store, record),
	    "INSERT INTO events (provider, event_id, event_type, order_key,"
	    " payload, headers, received_at, last_seen_at, status,"
	    " next_attempt_at, subtype, fingerprint, lease_owner, lease_until,"
	    " attempts)"
	    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7,"
	    " CASE WHEN ?11 IS NOT NULL THEN 'processing'"
	    " ELSE coalesce(?8, 'received') END, ?7, ?9, ?10, ?11, ?12,"
	    " ?11 IS NOT NULL)"
	    " ON CONFLICT (provider, event_id) DO UPDATE SET"
	    " duplicates = duplicates + 1,"
	    " last_seen_at = excluded.received_at"
	    " RETURNING id, duplicates, status" },
	/* One statement picks and takes the event: two never both take it. */
	{ offsetof(struct store, claim),
	    "UPDATE events SET status = 'processing', lease_owner = ?3,"
	    " lease_until = ?5, attempts = attempts + 1"
	    " WHERE id = (SELECT e.id FROM events e WHERE " STORE_DUE_SQL
	    "  ORDER BY e.id LIMIT 1)"
	    " RETURNING id, provider, event_id, event_type, subtype, payload,"
	    " attempts, received_at" },
	/* The same search as a plain read, which takes no write lock. */
	{ offsetof(struct store, due),
	    "SELECT 1 FROM events e WHERE " STORE_DUE_SQL " LIMIT 1" },
	{ offsetof(struct store, attempt_start),
	/*
	 * Attempts are numbered per event over its whole life, so that a
	 * replay, which restarts the retry budget, keeps the history.
	 */
	    "INSERT INTO attempts (event, attempt, started_at)"
	    " VALUES (?1, (SELECT coalesce(max(attempt), 0) + 1 FROM attempts"
	    " WHERE event = ?1), ?2) RETURNING attempt" },
	{ offsetof(struct store, attempt_end),
	    "UPDATE attempts SET finished_at = ?3, outcome = ?4, error = ?5"
	    " WHERE event = ?1 AND attempt = ?2" },
	{ offsetof(struct store, complete),
	    "UPDATE events SET status = 'done', done_at = ?3,"
	    " lease_owner = NULL, lease_until = NULL, last_error = NULL"
	    " WHERE id = ?1 AND lease_owner = ?2 AND status = 'processing'" },
	{ offsetof(struct store, failed),
	    "UPDATE events SET status = CASE WHEN ?5 THEN 'dead'"
	    " ELSE 'failed' END, next_attempt_at = ?4, last_error = ?3,"
	    " lease_owner = NULL, lease_until = NULL"
	    " WHERE id = ?1 AND lease_owner = ?2 AND status = 'processing'" },
	{ offsetof(struct store, effect),
	    "INSERT INTO effects (event, kind, created_at) VALUES (?1, ?2, ?3)"
	    " ON CONFLICT DO NOTHING" },
	/*
	 * An earlier event of the provider with the same payload and another
	 * type, when (provider, event_id) is new: see store_replay_of().
	 */
	{ offsetof(struct store, replay),
	    "SELECT event_id, event_type FROM events"
	    " WHERE provider = ?1 AND fingerprint = ?2 AND event_type <> ?4"
	    " AND (?5 IS NULL OR instr(char(10) || headers, ?5) = 0)"
	    " AND NOT EXISTS (SELECT 1 FROM events"
	    "  WHERE provider = ?1 AND event_id = ?3)"
	    " ORDER BY id LIMIT 1" },
};
#define STORE_NSQL	(sizeof(store_sql) / sizeof(store_sql[0]))

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
queue_enter(struct store *st, char *err, size_t errlen)
{
	struct sigaction sa, old_sa;
	struct itimerval tick, old_tick;
	struct timespec t0, now;
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
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		if (flock(st->queuefd, LOCK_EX) == 0) {
			st->queued = 1;
			break;
		}
		if (errno != EINTR)
			break;
		clock_gettime(CLOCK_MONOTONIC, &now);
		waited = (now.tv_sec - t0.tv_sec) * 1000 +
		    (now.tv_nsec - t0.tv_nsec) / 1000000;
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
queue_leave(struct store *st)
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

/*
 * Switches to WAL and checks that it took: a filesystem without shared
 * memory support leaves the file in rollback mode, where readers block
 * writers and the durability trade-offs differ.  Switching needs the
 * exclusive lock, and SQLite answers SQLITE_BUSY at once, without its
 * busy handler, while another connection reads the file; so the switch
 * is retried until the busy timeout.
 */
static int
set_wal(struct store *st, char *err, size_t errlen)
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
		rc = fail(st, rc, "cannot set WAL mode", err, errlen);
		goto out;
	}
	mode = sqlite3_column_text(stmt, 0);
	if (mode == NULL || strcmp((const char *)mode, "wal") != 0) {
		snprintf(err, errlen, "store stays in journal mode %s, not WAL: "
		    "put it on a local filesystem", mode ? (const char *)mode :
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

/*
 * Brings a store at version (under the write lock) to this build's:
 * a new file gets the whole schema, an older one each migration after
 * its version in turn.
 */
static int
apply_schema(struct store *st, int version, char *err, size_t errlen)
{
	char what[64];
	int v, rc;

	if (version == 0)
		return exec(st, store_schema_sql, "cannot apply schema", err,
		    errlen);
	for (v = version + 1; v <= STORE_SCHEMA_VERSION; v++) {
		if ((size_t)v >= store_nmigrations ||
		    store_migrations[v] == NULL) {
			snprintf(err, errlen, "no migration from schema "
			    "version %d to %d", v - 1, v);
			return IH_ESTORE;
		}
		snprintf(what, sizeof(what), "cannot migrate to schema "
		    "version %d", v);
		rc = exec(st, store_migrations[v], what, err, errlen);
		if (rc != IH_OK)
			return rc;
	}
	return IH_OK;
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
		rc = apply_schema(st, version, err, errlen);
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

/*
 * Is the store already in WAL mode with this build's schema?  Two plain
 * reads, which wait in the busy handler like any read.  Sets *ready.
 */
static int
is_ready(struct store *st, int *ready, char *err, size_t errlen)
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
		rc = fail(st, rc, "cannot read journal mode", err, errlen);
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
set_up(struct store *st, char *err, size_t errlen)
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
	char sql[64], qpath[4200];
	size_t i;
	int n, rc = IH_ENOMEM;

	*out = NULL;
	st = calloc(1, sizeof(*st));
	if (st == NULL)
		goto out;
	st->queuefd = -1;
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
	n = snprintf(qpath, sizeof(qpath), "%s-lock", opts->path);
	if (n > 0 && (size_t)n < sizeof(qpath))
		st->queuefd = open(qpath, O_RDWR | O_CREAT | O_CLOEXEC |
		    O_NOFOLLOW, 0600);
	sqlite3_extended_result_codes(st->db, 1);
	/*
	 * A CGI program closes the store after every request; checkpointing
	 * then would cost three more fsyncs per delivery.  Checkpoints still
	 * happen as the log grows, during commits.
	 */
	sqlite3_db_config(st->db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL);
	sqlite3_busy_handler(st->db, busy_wait, st);
	st->sync_durable = opts->synchronous == 1 ? 1 : 2;
	st->sync_now = st->sync_durable;
	snprintf(sql, sizeof(sql), "PRAGMA synchronous = %s",
	    st->sync_durable == 1 ? "NORMAL" : "FULL");
	rc = exec(st, sql, "cannot set synchronous", err, errlen);
	if (rc != IH_OK)
		goto out;
	rc = exec(st, "PRAGMA foreign_keys = ON", "cannot enable foreign keys",
	    err, errlen);
	if (rc != IH_OK)
		goto out;
	rc = set_up(st, err, errlen);
	if (rc != IH_OK)
		goto out;
	for (i = 0; i < STORE_NSQL; i++) {
		rc = prepare(st, store_sql[i].sql, (sqlite3_stmt **)(void *)
		    ((char *)st + store_sql[i].off), err, errlen);
		if (rc != IH_OK)
			goto out;
	}
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
	size_t i;

	if (st == NULL)
		return;
	for (i = 0; i < STORE_NSQL; i++)
		sqlite3_finalize(*(sqlite3_stmt **)(void *)((char *)st +
		    store_sql[i].off));
	sqlite3_close(st->db);
	queue_leave(st);
	if (st->queuefd >= 0)
		close(st->queuefd);
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
store_sync_level(struct store *st, int *level)
{
	sqlite3_stmt *s = NULL;
	int rc = IH_ESTORE;

	if (sqlite3_prepare_v2(st->db, "PRAGMA synchronous", -1, &s,
	    NULL) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW) {
		*level = sqlite3_column_int(s, 0);
		rc = IH_OK;
	}
	sqlite3_finalize(s);
	return rc;
}

int
store_begin(struct store *st, int durable, char *err, size_t errlen)
{
	int want = durable ? st->sync_durable : 1, rc;

	/*
	 * The level applies to the commits that follow: set it outside the
	 * transaction.  It is not a prepared statement: SQLite applies this
	 * pragma when it compiles it, so a prepared copy would act once, at
	 * prepare time, and never again.
	 */
	if (want != st->sync_now) {
		rc = exec(st, want == 2 ? "PRAGMA synchronous = FULL" :
		    "PRAGMA synchronous = NORMAL", "cannot set synchronous",
		    err, errlen);
		if (rc != IH_OK)
			return rc;
		st->sync_now = want;
	}
	rc = queue_enter(st, err, errlen);
	if (rc != IH_OK)
		return rc;
	rc = step_done(st, st->begin, "cannot begin transaction", err,
	    errlen);
	if (rc != IH_OK)
		queue_leave(st);
	return rc;
}

void
store_rollback(struct store *st)
{
	if (!sqlite3_get_autocommit(st->db)) {
		sqlite3_step(st->rollback);
		sqlite3_reset(st->rollback);
	}
	queue_leave(st);
}

int
store_commit(struct store *st, char *err, size_t errlen)
{
	int rc;

	rc = step_done(st, st->commit, "cannot commit", err, errlen);
	if (rc != IH_OK)
		store_rollback(st);
	queue_leave(st);
	return rc;
}

/*
 * store_record(), and with owner set the claim of a new event in the
 * same statement: inserting it as processing avoids an UPDATE, which
 * would read the whole payload back and write it again.
 */
static int
record_row(struct store *st, const struct store_event *ev, int64_t now_ms,
    const char *owner, int64_t lease_until, struct store_result *res,
    char *err, size_t errlen)
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
		rc = store_begin(st, 1, err, errlen);
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
	if (ev->fingerprint != NULL)
		sqlite3_bind_text(s, 10, ev->fingerprint, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(s, 10);
	if (owner != NULL) {
		sqlite3_bind_text(s, 11, owner, -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 12, lease_until);
	} else {
		sqlite3_bind_null(s, 11);
		sqlite3_bind_null(s, 12);
	}

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

int
store_record(struct store *st, const struct store_event *ev, int64_t now_ms,
    struct store_result *res, char *err, size_t errlen)
{
	return record_row(st, ev, now_ms, NULL, 0, res, err, errlen);
}

int
store_record_claim(struct store *st, const struct store_event *ev,
    int64_t now_ms, const char *owner, int64_t lease_ms,
    struct store_result *res, struct store_job *job, char *err,
    size_t errlen)
{
	sqlite3_stmt *s = st->attempt_start;
	int rc, step;

	memset(job, 0, sizeof(*job));
	if (sqlite3_get_autocommit(st->db) || owner == NULL) {
		snprintf(err, errlen, "a claim on record needs a transaction");
		return IH_EINVAL;
	}
	rc = record_row(st, ev, now_ms, owner, now_ms + lease_ms, res, err,
	    errlen);
	if (rc != IH_OK || res->duplicate)
		return rc;
	rc = IH_ENOMEM;
	job->rowid = res->rowid;
	job->attempt = 1;
	job->received_at = now_ms;
	job->provider = strdup(ev->provider);
	job->event_id = strdup(ev->event_id);
	job->event_type = strdup(ev->event_type);
	if (ev->subtype != NULL)
		job->subtype = strdup(ev->subtype);
	if (job->provider == NULL || job->event_id == NULL ||
	    job->event_type == NULL || (ev->subtype != NULL &&
	    job->subtype == NULL))
		goto out;
	sqlite3_bind_int64(s, 1, job->rowid);
	sqlite3_bind_int64(s, 2, now_ms);
	step = sqlite3_step(s);
	if (step == SQLITE_ROW) {
		job->seq = sqlite3_column_int64(s, 0);
		step = sqlite3_step(s);
	}
	sqlite3_reset(s);
	if (step != SQLITE_DONE) {
		rc = fail(st, step, "cannot record attempt", err, errlen);
		goto out;
	}
	rc = IH_OK;
out:
	if (rc != IH_OK)
		store_job_free(job);
	return rc;
}

int
store_replay_of(struct store *st, const struct store_event *ev,
    const char *same_action, int *found, char *other_id, size_t idlen, char *other_type,
    size_t typelen, char *err, size_t errlen)
{
	sqlite3_stmt *s = st->replay;
	const char *v;
	int rc = IH_OK, step;

	*found = 0;
	if (ev->fingerprint == NULL)
		return IH_OK;
	sqlite3_bind_text(s, 1, ev->provider, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, ev->fingerprint, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 3, ev->event_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 4, ev->event_type, -1, SQLITE_STATIC);
	if (same_action != NULL)
		sqlite3_bind_text(s, 5, same_action, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(s, 5);
	step = sqlite3_step(s);
	if (step == SQLITE_ROW) {
		*found = 1;
		v = (const char *)sqlite3_column_text(s, 0);
		snprintf(other_id, idlen, "%s", v != NULL ? v : "");
		v = (const char *)sqlite3_column_text(s, 1);
		snprintf(other_type, typelen, "%s", v != NULL ? v : "");
	} else if (step != SQLITE_DONE)
		rc = fail(st, step, "cannot look up the fingerprint", err,
		    errlen);
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	return rc;
}

/*
 * Begins a transaction unless one is open; *own says which.  Processing
 * moves are relaxed; what an operator changes is durable.
 */
static int
join_begin(struct store *st, int *own, int durable, char *err,
    size_t errlen)
{
	*own = sqlite3_get_autocommit(st->db);
	return *own ? store_begin(st, durable, err, errlen) : IH_OK;
}

/* Ends what join_begin() began: commit on success, else roll back. */
static int
join_end(struct store *st, int own, int rc, char *err, size_t errlen)
{
	if (!own)
		return rc;
	if (rc == IH_OK)
		return store_commit(st, err, errlen);
	store_rollback(st);
	return rc;
}

void
store_job_free(struct store_job *job)
{
	free(job->provider);
	free(job->event_id);
	free(job->event_type);
	free(job->subtype);
	free(job->payload);
	memset(job, 0, sizeof(*job));
}

static int
copy_text(sqlite3_stmt *s, int col, char **out)
{
	const unsigned char *t = sqlite3_column_text(s, col);

	*out = NULL;
	if (t == NULL)
		return IH_OK;
	*out = strdup((const char *)t);
	return *out == NULL ? IH_ENOMEM : IH_OK;
}

static int	close_stale_attempts(struct store *, int64_t, int64_t, char *,
		    size_t);

int
store_claim(struct store *st, const char *provider, int64_t rowid,
    const char *owner, int64_t now_ms, int64_t lease_ms,
    struct store_job *job, int *found, char *err, size_t errlen)
{
	sqlite3_stmt *s = st->claim;
	const void *blob;
	int own, rc, step;

	memset(job, 0, sizeof(*job));
	*found = 0;
	rc = join_begin(st, &own, 0, err, errlen);
	if (rc != IH_OK)
		return rc;
	if (provider != NULL)
		sqlite3_bind_text(s, 1, provider, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(s, 1);
	sqlite3_bind_int64(s, 2, rowid);
	sqlite3_bind_text(s, 3, owner, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 4, now_ms);
	sqlite3_bind_int64(s, 5, now_ms + lease_ms);
	step = sqlite3_step(s);
	if (step == SQLITE_DONE) {
		rc = IH_OK;
		goto out;
	}
	if (step != SQLITE_ROW) {
		rc = fail(st, step, "cannot claim event", err, errlen);
		goto out;
	}
	job->rowid = sqlite3_column_int64(s, 0);
	job->attempt = (long)sqlite3_column_int64(s, 6);
	job->received_at = sqlite3_column_int64(s, 7);
	if ((rc = copy_text(s, 1, &job->provider)) != IH_OK ||
	    (rc = copy_text(s, 2, &job->event_id)) != IH_OK ||
	    (rc = copy_text(s, 3, &job->event_type)) != IH_OK ||
	    (rc = copy_text(s, 4, &job->subtype)) != IH_OK)
		goto out;
	blob = sqlite3_column_blob(s, 5);
	job->payload_len = (size_t)sqlite3_column_bytes(s, 5);
	if (blob != NULL) {
		job->payload = malloc(job->payload_len + 1);
		if (job->payload == NULL) {
			rc = IH_ENOMEM;
			goto out;
		}
		memcpy(job->payload, blob, job->payload_len);
		job->payload[job->payload_len] = '\0';
	}
	step = sqlite3_step(s);
	if (step != SQLITE_DONE) {
		rc = fail(st, step, "cannot claim event", err, errlen);
		goto out;
	}
	sqlite3_reset(s);
	if (job->attempt > 1) {
		rc = close_stale_attempts(st, job->rowid, now_ms, err, errlen);
		if (rc != IH_OK)
			goto out;
	}
	sqlite3_bind_int64(st->attempt_start, 1, job->rowid);
	sqlite3_bind_int64(st->attempt_start, 2, now_ms);
	step = sqlite3_step(st->attempt_start);
	if (step == SQLITE_ROW) {
		job->seq = sqlite3_column_int64(st->attempt_start, 0);
		step = sqlite3_step(st->attempt_start);
	}
	sqlite3_reset(st->attempt_start);
	if (step != SQLITE_DONE) {
		rc = fail(st, step, "cannot record attempt", err, errlen);
		goto out;
	}
	*found = 1;
out:
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	rc = join_end(st, own, rc, err, errlen);
	if (rc != IH_OK || !*found) {
		*found = 0;
		store_job_free(job);
	}
	return rc;
}

int
store_effect(struct store *st, const struct store_job *job, const char *kind,
    int64_t now_ms, char *err, size_t errlen)
{
	if (sqlite3_get_autocommit(st->db)) {
		snprintf(err, errlen, "effects are written inside processing");
		return IH_EINVAL;
	}
	sqlite3_bind_int64(st->effect, 1, job->rowid);
	sqlite3_bind_text(st->effect, 2, kind, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st->effect, 3, now_ms);
	return step_done(st, st->effect, "cannot record effect", err, errlen);
}

/* Closes the job's attempt row with its outcome. */
static int
attempt_end(struct store *st, const struct store_job *job, int64_t now_ms,
    const char *outcome, const char *error, char *err, size_t errlen)
{
	sqlite3_stmt *s = st->attempt_end;

	sqlite3_bind_int64(s, 1, job->rowid);
	sqlite3_bind_int64(s, 2, job->seq);
	sqlite3_bind_int64(s, 3, now_ms);
	sqlite3_bind_text(s, 4, outcome, -1, SQLITE_STATIC);
	if (error != NULL)
		sqlite3_bind_text(s, 5, error, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(s, 5);
	return step_done(st, s, "cannot record attempt", err, errlen);
}

int
store_complete(struct store *st, const struct store_job *job,
    const char *owner, int64_t now_ms, char *err, size_t errlen)
{
	sqlite3_stmt *s = st->complete;
	int own, rc;

	rc = join_begin(st, &own, 0, err, errlen);
	if (rc != IH_OK)
		return rc;
	sqlite3_bind_int64(s, 1, job->rowid);
	sqlite3_bind_text(s, 2, owner, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 3, now_ms);
	rc = step_done(st, s, "cannot complete event", err, errlen);
	if (rc == IH_OK && sqlite3_changes(st->db) != 1) {
		snprintf(err, errlen, "lease on event %lld was lost",
		    (long long)job->rowid);
		rc = IH_ENOTFOUND;
	}
	if (rc == IH_OK)
		rc = attempt_end(st, job, now_ms, "done", NULL, err, errlen);
	return join_end(st, own, rc, err, errlen);
}

int
store_fail(struct store *st, const struct store_job *job, const char *owner,
    const char *error, int64_t next_ms, int dead, int64_t now_ms, char *err,
    size_t errlen)
{
	sqlite3_stmt *s = st->failed;
	int own, rc;

	rc = join_begin(st, &own, 0, err, errlen);
	if (rc != IH_OK)
		return rc;
	sqlite3_bind_int64(s, 1, job->rowid);
	sqlite3_bind_text(s, 2, owner, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 3, error, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 4, next_ms);
	sqlite3_bind_int(s, 5, dead != 0);
	rc = step_done(st, s, "cannot mark event failed", err, errlen);
	if (rc == IH_OK && sqlite3_changes(st->db) != 1) {
		snprintf(err, errlen, "lease on event %lld was lost",
		    (long long)job->rowid);
		rc = IH_ENOTFOUND;
	}
	if (rc == IH_OK)
		rc = attempt_end(st, job, now_ms, dead ? "dead" : "failed",
		    error, err, errlen);
	return join_end(st, own, rc, err, errlen);
}

void
store_no_queue(struct store *st)
{
	/* flock(2) locks belong to this descriptor only: closing it frees
	 * nothing another connection holds. */
	if (st->queuefd >= 0 && !st->queued) {
		close(st->queuefd);
		st->queuefd = -1;
	}
}

/*
 * Lease upkeep and lost leases.  These statements run once per action or
 * per lost lease, not per request, so each is prepared per call.
 */

/*
 * Runs sql with ?1 rowid, ?2 text, ?3 and ?4 numbers (a parameter the
 * statement does not use is simply not bound); *changes gets the count.
 */
static int
run_job_sql(struct store *st, const char *sql, int64_t rowid,
    const char *text, int64_t num, int64_t num2, int *changes,
    const char *what, char *err, size_t errlen)
{
	sqlite3_stmt *s = NULL;
	int rc;

	*changes = 0;
	rc = sqlite3_prepare_v2(st->db, sql, -1, &s, NULL);
	if (rc != SQLITE_OK) {
		rc = fail(st, rc, what, err, errlen);
		goto out;
	}
	sqlite3_bind_int64(s, 1, rowid);
	if (text != NULL)
		sqlite3_bind_text(s, 2, text, -1, SQLITE_STATIC);
	if (sqlite3_bind_parameter_count(s) >= 3)
		sqlite3_bind_int64(s, 3, num);
	if (sqlite3_bind_parameter_count(s) >= 4)
		sqlite3_bind_int64(s, 4, num2);
	rc = sqlite3_step(s);
	if (rc != SQLITE_DONE) {
		rc = fail(st, rc, what, err, errlen);
		goto out;
	}
	*changes = sqlite3_changes(st->db);
	rc = IH_OK;
out:
	sqlite3_finalize(s);
	return rc;
}

/*
 * A claim that takes over an expired lease closes the attempt rows its
 * earlier holders left open, so that none stays "running" for ever.
 */
static int
close_stale_attempts(struct store *st, int64_t rowid, int64_t now_ms,
    char *err, size_t errlen)
{
	int n;

	return run_job_sql(st, "UPDATE attempts SET finished_at = ?3,"
	    " outcome = 'lease_expired', error = ?2"
	    " WHERE event = ?1 AND finished_at IS NULL", rowid,
	    "the lease expired before the attempt ended", now_ms, 0, &n,
	    "cannot close stale attempts", err, errlen);
}

int
store_renew(struct store *st, const struct store_job *job,
    const char *owner, int64_t lease_ms, char *err, size_t errlen)
{
	int own, n = 0, rc;

	rc = join_begin(st, &own, 0, err, errlen);
	if (rc != IH_OK)
		return rc;
	/* The new lease runs from now, once the write lock is held. */
	rc = run_job_sql(st, "UPDATE events SET lease_until = ?3"
	    " WHERE id = ?1 AND lease_owner = ?2 AND status = 'processing'",
	    job->rowid, owner, store_now_ms() + lease_ms, 0, &n,
	    "cannot renew lease", err, errlen);
	if (rc == IH_OK && n != 1) {
		snprintf(err, errlen, "lease on event %lld was lost",
		    (long long)job->rowid);
		rc = IH_ENOTFOUND;
	}
	return join_end(st, own, rc, err, errlen);
}

int
store_attempt_lost(struct store *st, const struct store_job *job,
    int64_t now_ms, char *err, size_t errlen)
{
	int own, n, rc;

	rc = join_begin(st, &own, 0, err, errlen);
	if (rc != IH_OK)
		return rc;
	rc = run_job_sql(st, "UPDATE attempts SET finished_at = ?3,"
	    " outcome = 'lease_lost', error = ?2"
	    " WHERE event = ?1 AND attempt = ?4 AND finished_at IS NULL",
	    job->rowid, "another process took the event over", now_ms,
	    job->seq, &n,
	    "cannot close attempt", err, errlen);
	return join_end(st, own, rc, err, errlen);
}

int
store_forget(struct store *st, const struct store_job *job,
    const char *owner, char *err, size_t errlen)
{
	int own, n = 0, rc;

	rc = join_begin(st, &own, 0, err, errlen);
	if (rc != IH_OK)
		return rc;
	/* Its attempts and effects go with it (ON DELETE CASCADE). */
	rc = run_job_sql(st, "DELETE FROM events WHERE id = ?1"
	    " AND lease_owner = ?2 AND status = 'processing'",
	    job->rowid, owner, 0, 0, &n, "cannot forget event", err, errlen);
	if (rc == IH_OK && n != 1) {
		snprintf(err, errlen, "lease on event %lld was lost",
		    (long long)job->rowid);
		rc = IH_ENOTFOUND;
	}
	return join_end(st, own, rc, err, errlen);
}

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
	" payload IS NOT NULL, coalesce(length(payload), 0)," \
	" json_object('provider', provider, 'event_id', event_id," \
	" 'type', event_type, 'subtype', subtype, 'status', status," \
	" 'received_at', received_at, 'last_seen_at', last_seen_at," \
	" 'duplicates', duplicates, 'attempts', attempts," \
	" 'next_attempt_at', next_attempt_at, 'done_at', done_at," \
	" 'purged_at', purged_at, 'last_error', last_error," \
	" 'payload_bytes', length(payload))"

/* A struct store_filter's terms, bound by bind_filter(); limit is ?7. */
#define STORE_FILTER_SQL \
	" (?1 IS NULL OR provider = ?1) AND (?2 IS NULL OR event_id = ?2)" \
	" AND (?3 IS NULL OR event_type = ?3) AND (?4 IS NULL OR status = ?4)" \
	" AND (?5 = 0 OR received_at >= ?5) AND (?6 = 0 OR received_at < ?6)"

/* What replay may take: finished, failed or set aside, with a payload. */
#define STORE_REPLAYABLE_SQL \
	" AND status IN ('done', 'failed', 'dead', 'quarantined')" \
	" AND payload IS NOT NULL"

static void
bind_text_or_null(sqlite3_stmt *s, int i, const char *v)
{
	if (v != NULL)
		sqlite3_bind_text(s, i, v, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(s, i);
}

static void
bind_filter(sqlite3_stmt *s, const struct store_filter *f)
{
	bind_text_or_null(s, 1, f->provider);
	bind_text_or_null(s, 2, f->event_id);
	bind_text_or_null(s, 3, f->event_type);
	bind_text_or_null(s, 4, f->status);
	sqlite3_bind_int64(s, 5, f->since_ms > 0 ? f->since_ms : 0);
	sqlite3_bind_int64(s, 6, f->until_ms > 0 ? f->until_ms : 0);
	sqlite3_bind_int64(s, 7, f->limit > 0 ? f->limit : -1);
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
	if (row->provider == NULL)
		row->provider = "";
	if (row->event_id == NULL)
		row->event_id = "";
	if (row->event_type == NULL)
		row->event_type = "";
	if (row->status == NULL)
		row->status = "";
	if (row->json == NULL)
		row->json = "{}";
}

/* Steps s to the end, calling fn per row; rc of the walk. */
static int
walk_rows(struct store *st, sqlite3_stmt *s, store_row_fn fn, void *arg,
    long *count, const char *what, char *err, size_t errlen)
{
	struct store_row row;
	int rc, step;

	for (;;) {
		step = sqlite3_step(s);
		if (step == SQLITE_DONE)
			return IH_OK;
		if (step != SQLITE_ROW)
			return fail(st, step, what, err, errlen);
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
store_list(struct store *st, const struct store_filter *f, store_row_fn fn,
    void *arg, char *err, size_t errlen)
{
	sqlite3_stmt *s = NULL;
	int rc;

	rc = prepare(st, "SELECT " STORE_ROW_COLS " FROM events WHERE"
	    STORE_FILTER_SQL " ORDER BY id LIMIT ?7", &s, err, errlen);
	if (rc != IH_OK)
		goto out;
	bind_filter(s, f);
	rc = walk_rows(st, s, fn, arg, NULL, "cannot list events", err,
	    errlen);
out:
	sqlite3_finalize(s);
	return rc;
}

int
store_show(struct store *st, const char *provider, const char *event_id,
    store_row_fn fn, void *arg, char *err, size_t errlen)
{
	sqlite3_stmt *s = NULL;
	struct store_row row;
	int rc, step;

	rc = prepare(st, "SELECT " STORE_ROW_COLS ", headers, payload"
	    " FROM events WHERE provider = ?1 AND event_id = ?2", &s, err,
	    errlen);
	if (rc != IH_OK)
		goto out;
	sqlite3_bind_text(s, 1, provider, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, event_id, -1, SQLITE_STATIC);
	step = sqlite3_step(s);
	if (step == SQLITE_DONE) {
		snprintf(err, errlen, "no %s event with id %s", provider,
		    event_id);
		rc = IH_ENOTFOUND;
		goto out;
	}
	if (step != SQLITE_ROW) {
		rc = fail(st, step, "cannot read event", err, errlen);
		goto out;
	}
	fill_row(s, &row);
	row.headers = col_text(s, 20);
	if (row.headers == NULL)
		row.headers = "";
	row.payload = sqlite3_column_blob(s, 21);
	row.payload_len = sqlite3_column_bytes(s, 21);
	if (row.payload == NULL && row.has_payload)
		row.payload = (const unsigned char *)"";
	rc = fn(arg, &row);
out:
	sqlite3_finalize(s);
	return rc;
}

int
store_attempts(struct store *st, int64_t rowid,
    int (*fn)(void *arg, const struct store_attempt *a), void *arg,
    char *err, size_t errlen)
{
	sqlite3_stmt *s = NULL;
	struct store_attempt a;
	int rc, step;

	rc = prepare(st, "SELECT attempt, started_at, coalesce(finished_at, 0),"
	    " outcome, error FROM attempts WHERE event = ?1 ORDER BY attempt",
	    &s, err, errlen);
	if (rc != IH_OK)
		goto out;
	sqlite3_bind_int64(s, 1, rowid);
	for (;;) {
		step = sqlite3_step(s);
		if (step == SQLITE_DONE)
			break;
		if (step != SQLITE_ROW) {
			rc = fail(st, step, "cannot read attempts", err,
			    errlen);
			goto out;
		}
		a.attempt = sqlite3_column_int64(s, 0);
		a.started_at = sqlite3_column_int64(s, 1);
		a.finished_at = sqlite3_column_int64(s, 2);
		a.outcome = col_text(s, 3);
		a.error = col_text(s, 4);
		rc = fn(arg, &a);
		if (rc != IH_OK)
			goto out;
	}
	rc = IH_OK;
out:
	sqlite3_finalize(s);
	return rc;
}

int
store_requeue(struct store *st, const struct store_filter *f, int dry_run,
    int64_t now_ms, store_row_fn fn, void *arg, long *count, char *err,
    size_t errlen)
{
	sqlite3_stmt *s = NULL;
	int own = 0, rc;

	*count = 0;
	if (dry_run)
		rc = prepare(st, "SELECT " STORE_ROW_COLS " FROM events WHERE"
		    STORE_FILTER_SQL STORE_REPLAYABLE_SQL
		    " ORDER BY id LIMIT ?7", &s, err, errlen);
	else
		rc = prepare(st, "UPDATE events SET status = 'received',"
		    " next_attempt_at = ?8, attempts = 0, lease_owner = NULL,"
		    " lease_until = NULL, done_at = NULL"
		    " WHERE id IN (SELECT id FROM events WHERE"
		    STORE_FILTER_SQL STORE_REPLAYABLE_SQL
		    " ORDER BY id LIMIT ?7) RETURNING " STORE_ROW_COLS, &s,
		    err, errlen);
	if (rc != IH_OK)
		goto out;
	bind_filter(s, f);
	if (!dry_run) {
		sqlite3_bind_int64(s, 8, now_ms);
		/* One statement; the transaction lets fn's failure undo it. */
		rc = join_begin(st, &own, 1, err, errlen);
		if (rc != IH_OK)
			goto out;
	}
	rc = walk_rows(st, s, fn, arg, count, "cannot requeue events", err,
	    errlen);
	sqlite3_reset(s);
	if (!dry_run)
		rc = join_end(st, own, rc, err, errlen);
	if (rc != IH_OK)
		*count = 0;
out:
	sqlite3_finalize(s);
	return rc;
}

/* Runs s (bound) once; *n is the number of rows it changed. */
static int
step_changes(struct store *st, sqlite3_stmt *s, long *n, const char *what,
    char *err, size_t errlen)
{
	int rc;

	rc = step_done(st, s, what, err, errlen);
	*n = rc == IH_OK ? (long)sqlite3_changes(st->db) : 0;
	return rc;
}

/* Runs a bound count query into *n. */
static int
step_count(struct store *st, sqlite3_stmt *s, long *n, const char *what,
    char *err, size_t errlen)
{
	int step;

	step = sqlite3_step(s);
	*n = step == SQLITE_ROW ? (long)sqlite3_column_int64(s, 0) : 0;
	sqlite3_reset(s);
	if (step != SQLITE_ROW)
		return fail(st, step, what, err, errlen);
	return IH_OK;
}

/* What purge may touch: ?6 set takes dead letters too. */
#define STORE_PURGE_STATUS_SQL \
	" (status IN ('done', 'quarantined') OR (?6 AND status = 'dead'))"

/* A row purge may delete: ?1 provider, ?2 payload cutoff, ?3 row cutoff. */
#define STORE_PURGE_ROW_SQL \
	" provider = ?1 AND" STORE_PURGE_STATUS_SQL \
	" AND received_at < ?2 AND ?3 > 0 AND last_seen_at < ?3"

/* A payload purge may drop (of a row it keeps). */
#define STORE_PURGE_PAYLOAD_SQL \
	" provider = ?1 AND" STORE_PURGE_STATUS_SQL \
	" AND received_at < ?2 AND payload IS NOT NULL"

/* Dead letters past the payload cutoff that purge keeps. */
#define STORE_PURGE_DEAD_SQL \
	"SELECT count(*) FROM events WHERE provider = ?1 AND NOT ?6" \
	" AND status = 'dead' AND received_at < ?2"

int
store_purge(struct store *st, struct store_purge *p, char *err,
    size_t errlen)
{
	sqlite3_stmt *rows = NULL, *payloads = NULL, *dead = NULL;
	struct timespec nap = { 0, 1000000 };
	long batch = p->batch > 0 ? p->batch : 500, n;
	int rc;

	p->payloads = 0;
	p->rows = 0;
	p->dead_kept = 0;
	rc = prepare(st, STORE_PURGE_DEAD_SQL, &dead, err, errlen);
	if (rc != IH_OK)
		goto out;
	sqlite3_bind_text(dead, 1, p->provider, -1, SQLITE_STATIC);
	sqlite3_bind_int64(dead, 2, p->payload_before_ms);
	sqlite3_bind_int(dead, 6, p->include_dead != 0);
	rc = step_count(st, dead, &p->dead_kept, "cannot count dead events",
	    err, errlen);
	if (rc != IH_OK)
		goto out;
	if (p->dry_run) {
		rc = prepare(st, "SELECT count(*) FROM events WHERE"
		    STORE_PURGE_ROW_SQL, &rows, err, errlen);
		if (rc == IH_OK)
			rc = prepare(st, "SELECT count(*) FROM events WHERE"
			    STORE_PURGE_PAYLOAD_SQL " AND NOT ("
			    STORE_PURGE_ROW_SQL ")", &payloads, err, errlen);
	} else {
		rc = prepare(st, "DELETE FROM events WHERE id IN (SELECT id"
		    " FROM events WHERE" STORE_PURGE_ROW_SQL " LIMIT ?4)",
		    &rows, err, errlen);
		if (rc == IH_OK)
			rc = prepare(st, "UPDATE events SET payload = NULL,"
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
	sqlite3_bind_int64(payloads, 5, store_now_ms());
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
percentile(struct store *st, sqlite3_stmt *s, const struct store_stats *x,
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
	sqlite3_bind_int64(s, 4, k - 1);
	step = sqlite3_step(s);
	if (step == SQLITE_ROW)
		*out = sqlite3_column_int64(s, 0);
	sqlite3_reset(s);
	if (step != SQLITE_ROW && step != SQLITE_DONE)
		return fail(st, step, "cannot compute latency", err, errlen);
	return IH_OK;
}

int
store_stats(struct store *st, const char *provider, int64_t since_ms,
    int64_t until_ms, int (*fn)(void *arg, const struct store_stats *s),
    void *arg, char *err, size_t errlen)
{
	sqlite3_stmt *s = NULL, *lat = NULL;
	struct store_stats x;
	const char *name;
	int rc, step, txn = 0;

	rc = prepare(st, "SELECT provider, sum(w),"
	    " sum(CASE WHEN w THEN duplicates ELSE 0 END),"
	    " sum(w AND status = 'received'), sum(w AND status = 'processing'),"
	    " sum(w AND status = 'done'), sum(w AND status = 'failed'),"
	    " sum(w AND status = 'dead'), sum(w AND status = 'quarantined'),"
	    " sum(w AND status = 'done' AND done_at IS NOT NULL),"
	    " sum(CASE WHEN w AND status = 'done' AND done_at IS NOT NULL"
	    "  THEN done_at - received_at ELSE 0 END),"
	    " min(CASE WHEN status IN ('received', 'processing', 'failed')"
	    "  THEN received_at END),"
	    " sum(status IN ('received', 'processing', 'failed'))"
	    " FROM (SELECT provider, duplicates, status, received_at, done_at,"
	    "  (received_at >= ?2 AND received_at < ?3) AS w FROM events"
	    "  WHERE (?1 IS NULL OR provider = ?1)"
	    "  AND ((received_at >= ?2 AND received_at < ?3)"
	    "  OR status IN ('received', 'processing', 'failed')))"
	    " GROUP BY provider ORDER BY provider", &s, err, errlen);
	if (rc == IH_OK)
		rc = prepare(st, "SELECT done_at - received_at FROM events"
		    " WHERE provider = ?1 AND status = 'done'"
		    " AND done_at IS NOT NULL"
		    " AND received_at >= ?2 AND received_at < ?3"
		    " ORDER BY 1 LIMIT 1 OFFSET ?4", &lat, err, errlen);
	if (rc != IH_OK)
		goto out;
	/* One read transaction: every figure comes from one snapshot. */
	if (sqlite3_get_autocommit(st->db)) {
		rc = exec(st, "BEGIN", "cannot begin read", err, errlen);
		if (rc != IH_OK)
			goto out;
		txn = 1;
	}
	bind_text_or_null(s, 1, provider);
	sqlite3_bind_int64(s, 2, since_ms);
	sqlite3_bind_int64(s, 3, until_ms);
	sqlite3_bind_int64(lat, 2, since_ms);
	sqlite3_bind_int64(lat, 3, until_ms);
	for (;;) {
		step = sqlite3_step(s);
		if (step == SQLITE_DONE)
			break;
		if (step != SQLITE_ROW) {
			rc = fail(st, step, "cannot compute stats", err,
			    errlen);
			goto out;
		}
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
		rc = percentile(st, lat, &x, 50, &x.p50_ms, err, errlen);
		if (rc == IH_OK)
			rc = percentile(st, lat, &x, 95, &x.p95_ms, err,
			    errlen);
		if (rc == IH_OK)
			rc = percentile(st, lat, &x, 99, &x.p99_ms, err,
			    errlen);
		if (rc != IH_OK)
			goto out;
		rc = fn(arg, &x);
		if (rc != IH_OK)
			goto out;
	}
	rc = IH_OK;
out:
	sqlite3_finalize(s);
	sqlite3_finalize(lat);
	if (txn)
		sqlite3_exec(st->db, "COMMIT", NULL, NULL, NULL);
	return rc;
}

int
store_journal_mode(struct store *st, char *mode, size_t len, char *err,
    size_t errlen)
{
	sqlite3_stmt *s = NULL;
	const char *m;
	int rc, step;

	rc = prepare(st, "PRAGMA journal_mode", &s, err, errlen);
	if (rc != IH_OK)
		goto out;
	step = sqlite3_step(s);
	if (step != SQLITE_ROW) {
		rc = fail(st, step, "cannot read journal mode", err, errlen);
		goto out;
	}
	m = col_text(s, 0);
	snprintf(mode, len, "%s", m != NULL ? m : "");
	rc = IH_OK;
out:
	sqlite3_finalize(s);
	return rc;
}

int
store_due(struct store *st, const char *provider, int64_t now_ms, int *due,
    char *err, size_t errlen)
{
	sqlite3_stmt *s = st->due;
	int step;

	if (provider != NULL)
		sqlite3_bind_text(s, 1, provider, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(s, 1);
	sqlite3_bind_int64(s, 2, 0);
	sqlite3_bind_int64(s, 4, now_ms);
	step = sqlite3_step(s);
	*due = step == SQLITE_ROW;
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	if (step != SQLITE_ROW && step != SQLITE_DONE)
		return fail(st, step, "cannot look for due events", err,
		    errlen);
	return IH_OK;
}

/*
 * The console's accessor (store_console.c): its read-only queries run on
 * this connection.  Nothing else may use it.
 */
sqlite3 *
store_sqlite(struct store *st)
{
	return st->db;
}
