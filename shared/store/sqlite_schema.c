/*
 * sqlite_schema.c -- SQLite: creating the store (its folders 0700, the
 * file 0600, never through a link), WAL, the schema and its migrations,
 * and the readiness check.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "ih.h"
#include "sqlite_int.h"

/* db/sqlite/schema.sql, turned into a C string at build time. */
extern const char store_sqlite_schema_sql[];
/* db/sqlite/migrations/<N>.sql as [N]: version N-1 to N. */
extern const char *const store_sqlite_migrations[];
extern const size_t store_sqlite_nmigrations;

/* Creates each missing directory of path's parent, mode 0700. */
int
sq_make_parents(const char *path, char *err, size_t errlen)
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
int
sq_make_file(const char *path, char *err, size_t errlen)
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
		if ((rc & 0xff) != SQLITE_BUSY || !sq_busy_wait(st, count))
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

/*
 * Runs pragma up to its one row, in *stmt, which the caller finalizes
 * (also on failure).
 */
static int
pragma_row(struct sq *st, const char *pragma, sqlite3_stmt **stmt,
    const char *what, char *err, size_t errlen)
{
	int rc;

	rc = sqlite3_prepare_v2(st->db, pragma, -1, stmt, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(*stmt);
	if (rc != SQLITE_ROW)
		return sq_fail(st, rc, what, err, errlen);
	return IH_OK;
}

static int
user_version(struct sq *st, int *version, char *err, size_t errlen)
{
	sqlite3_stmt *stmt = NULL;
	int rc;

	rc = pragma_row(st, "PRAGMA user_version", &stmt,
	    "cannot read schema version", err, errlen);
	if (rc == IH_OK)
		*version = sqlite3_column_int(stmt, 0);
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

/* Refuses a migration that left a child row without its parent. */
static int
fk_check(struct sq *st, char *err, size_t errlen)
{
	sqlite3_stmt *stmt = NULL;
	int rc;

	rc = sqlite3_prepare_v2(st->db, "PRAGMA foreign_key_check", -1,
	    &stmt, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW) {
		snprintf(err, errlen, "migration left a row of %s without "
		    "its parent", sqlite3_column_text(stmt, 0));
		rc = IH_ESTORE;
	} else if (rc != SQLITE_DONE)
		rc = sq_fail(st, rc, "cannot check foreign keys", err, errlen);
	else
		rc = IH_OK;
	sqlite3_finalize(stmt);
	return rc;
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
	/*
	 * Remaking a table (version 8) drops the old one, which with foreign
	 * keys on would delete its children; the pragma is a no-op inside a
	 * transaction, so it is set before and checked at the end.
	 */
	rc = sq_exec(st, "PRAGMA foreign_keys = OFF", "cannot migrate", err,
	    errlen);
	if (rc != IH_OK)
		return rc;
	rc = sq_exec(st, "BEGIN IMMEDIATE", "cannot lock store to migrate",
	    err, errlen);
	if (rc != IH_OK)
		goto out;
	/* Another process may have migrated while this one waited. */
	rc = user_version(st, &version, err, errlen);
	if (rc != IH_OK)
		goto out;
	rc = store_schema_newer(version, err, errlen);
	if (rc != IH_OK)
		goto out;
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
	rc = fk_check(st, err, errlen);
	if (rc == IH_OK)
		rc = sq_exec(st, "COMMIT", "cannot commit schema", err,
		    errlen);
out:
	if (rc != IH_OK && !sqlite3_get_autocommit(st->db))
		sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
	if (sqlite3_exec(st->db, "PRAGMA foreign_keys = ON", NULL, NULL,
	    NULL) != SQLITE_OK && rc == IH_OK) {
		snprintf(err, errlen, "cannot enable foreign keys");
		rc = IH_ESTORE;
	}
	return rc;
}

int
sq_migrate_copy(sqlite3 *db, char *err, size_t errlen)
{
	struct sq st;

	memset(&st, 0, sizeof(st));
	st.db = db;
	st.queuefd = -1;
	return migrate(&st, err, errlen);
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
	rc = pragma_row(st, "PRAGMA journal_mode", &stmt,
	    "cannot read journal mode", err, errlen);
	if (rc == IH_OK) {
		mode = sqlite3_column_text(stmt, 0);
		*ready = mode != NULL && strcmp((const char *)mode, "wal") == 0;
	}
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
int
sq_set_up(struct sq *st, char *err, size_t errlen)
{
	int ready, rc;

	rc = is_ready(st, &ready, err, errlen);
	if (rc != IH_OK || ready)
		return rc;
	rc = sq_queue_enter(st, err, errlen);
	if (rc != IH_OK)
		return rc;
	rc = set_wal(st, err, errlen);
	if (rc == IH_OK)
		rc = migrate(st, err, errlen);
	sq_queue_leave(st);
	return rc;
}
