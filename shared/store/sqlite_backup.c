/*
 * sqlite_backup.c -- SQLite: a consistent copy of a live store
 * (store_backup()), its checks and the quick check of the open store;
 * the steps that restore shares (sqlite_copy.h, sqlite_restore.c).
 *
 * A plain file copy of a WAL store can be torn: the database and its log
 * read at different moments.  The backup API inside one read transaction
 * copies one snapshot instead, and in WAL mode a reader never blocks the
 * writers, so the receivers keep recording meanwhile.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "ih.h"
#include "sqlite_int.h"
#include "sqlite_copy.h"
#include "store_backup.h"

/* Pages per backup step: each step reports progress. */
#define BACKUP_STEP	1024
/* How long a step may wait for the copy's own lock, in ms. */
#define BACKUP_BUSY_MS	5000

/* The tables whose rows a copy must hold as many of as its source. */
static const struct {
	const char	*name;
	const char	*sql;
	size_t		 off;
} backup_tables[] = {
	{ "events", "SELECT count(*) FROM events",
	    offsetof(struct store_backup_info, events) },
	{ "attempts", "SELECT count(*) FROM attempts",
	    offsetof(struct store_backup_info, attempts) },
	{ "effects", "SELECT count(*) FROM effects",
	    offsetof(struct store_backup_info, effects) },
	{ "objects", "SELECT count(*) FROM objects",
	    offsetof(struct store_backup_info, objects) },
	{ "object_events", "SELECT count(*) FROM object_events",
	    offsetof(struct store_backup_info, object_events) },
};
#define BACKUP_NTABLES	(sizeof(backup_tables) / sizeof(backup_tables[0]))

static int64_t *
table_count(struct store_backup_info *info, size_t i)
{
	return (int64_t *)(void *)((char *)info + backup_tables[i].off);
}

static int
db_fail(sqlite3 *db, int rc, const char *what, char *err, size_t errlen)
{
	snprintf(err, errlen, "%s: %s (sqlite %d)", what,
	    db != NULL ? sqlite3_errmsg(db) : sqlite3_errstr(rc), rc);
	return IH_ESTORE;
}

int
sqcopy_exec(sqlite3 *db, const char *sql, const char *what, char *err,
    size_t errlen)
{
	int rc;

	rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
	if (rc != SQLITE_OK)
		return db_fail(db, rc, what, err, errlen);
	return IH_OK;
}

/* The first column of the one row sql returns, as an integer. */
static int
db_int(sqlite3 *db, const char *sql, const char *arg, int64_t *out,
    char *err, size_t errlen)
{
	sqlite3_stmt *s = NULL;
	int rc;

	rc = sqlite3_prepare_v2(db, sql, -1, &s, NULL);
	if (rc == SQLITE_OK && arg != NULL)
		sqlite3_bind_text(s, 1, arg, -1, SQLITE_STATIC);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(s);
	if (rc != SQLITE_ROW) {
		rc = db_fail(db, rc, sql, err, errlen);
		goto out;
	}
	*out = sqlite3_column_int64(s, 0);
	rc = IH_OK;
out:
	sqlite3_finalize(s);
	return rc;
}

/* Sets *there to whether db has a table called name. */
static int
db_has_table(sqlite3 *db, const char *name, int64_t *there, char *err,
    size_t errlen)
{
	return db_int(db, "SELECT count(*) FROM sqlite_master WHERE "
	    "type = 'table' AND name = ?1", name, there, err, errlen);
}

/*
 * The rows of each table (0 for a table an older schema lacks) and the
 * schema version, as db sees them now.
 */
static int
db_counts(sqlite3 *db, struct store_backup_info *info, char *err,
    size_t errlen)
{
	int64_t v, there;
	size_t i;
	int rc;

	rc = db_int(db, "PRAGMA user_version", NULL, &v, err, errlen);
	if (rc != IH_OK)
		return rc;
	info->schema_version = (int)v;
	for (i = 0; i < BACKUP_NTABLES; i++) {
		*table_count(info, i) = 0;
		rc = db_has_table(db, backup_tables[i].name, &there, err,
		    errlen);
		if (rc == IH_OK && there)
			rc = db_int(db, backup_tables[i].sql, NULL,
			    table_count(info, i), err, errlen);
		if (rc != IH_OK)
			return rc;
	}
	return IH_OK;
}

/*
 * Runs an integrity pragma and writes "ok" or its first findings, joined
 * by "; ", into out.
 */
static int
db_integrity(sqlite3 *db, const char *pragma, char *out, size_t outlen,
    char *err, size_t errlen)
{
	sqlite3_stmt *s = NULL;
	const char *m;
	size_t used = 0;
	int rc, n;

	out[0] = '\0';
	rc = sqlite3_prepare_v2(db, pragma, -1, &s, NULL);
	if (rc != SQLITE_OK)
		return db_fail(db, rc, pragma, err, errlen);
	for (;;) {
		rc = sqlite3_step(s);
		if (rc != SQLITE_ROW)
			break;
		m = (const char *)sqlite3_column_text(s, 0);
		n = snprintf(out + used, outlen - used, "%s%s",
		    used > 0 ? "; " : "", m != NULL ? m : "?");
		if (n < 0 || (size_t)n >= outlen - used)
			break;
		used += (size_t)n;
	}
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		snprintf(out, outlen, "%s", sqlite3_errmsg(db));
		rc = IH_OK;	/* a check that cannot read is a finding */
		goto out;
	}
	rc = IH_OK;
out:
	sqlite3_finalize(s);
	return rc;
}

/*
 * Checks the copy open in db: integrity_check, a schema this build can
 * open, an events table; fills *info.  IH_ESTORE with the reason when
 * the copy is not sound.
 */
static int
check_copy(sqlite3 *db, struct store_backup_info *info, char *err,
    size_t errlen)
{
	int64_t there = 0;
	int rc;

	rc = db_integrity(db, "PRAGMA integrity_check(8)", info->integrity,
	    sizeof(info->integrity), err, errlen);
	if (rc != IH_OK)
		return rc;
	if (strcmp(info->integrity, "ok") != 0) {
		snprintf(err, errlen, "the copy fails the integrity check: %s",
		    info->integrity);
		return IH_ESTORE;
	}
	rc = db_counts(db, info, err, errlen);
	if (rc == IH_OK)
		rc = db_has_table(db, "events", &there, err, errlen);
	if (rc != IH_OK)
		return rc;
	if (!there || info->schema_version < 1) {
		snprintf(err, errlen, "the copy is not an idemhook store "
		    "(no events table, or schema version %d)",
		    info->schema_version);
		return IH_ESTORE;
	}
	if (info->schema_version > STORE_SCHEMA_VERSION) {
		snprintf(err, errlen, "the copy's schema version %d is newer "
		    "than this build's %d: upgrade idemhook",
		    info->schema_version, STORE_SCHEMA_VERSION);
		return IH_ESTORE;
	}
	return IH_OK;
}

/* Removes path and the side files SQLite may have left beside it. */
void
sqcopy_remove(const char *path)
{
	static const char *const sides[] = { "", "-journal", "-wal", "-shm" };
	char p[SQCOPY_PATH_MAX];
	size_t i;
	int n;

	for (i = 0; i < sizeof(sides) / sizeof(sides[0]); i++) {
		n = snprintf(p, sizeof(p), "%s%s", path, sides[i]);
		if (n > 0 && (size_t)n < sizeof(p))
			(void)unlink(p);
	}
}

/* fsync of path (a file, or a folder), and its size in *size. */
int
sqcopy_sync(const char *path, int64_t *size, char *err, size_t errlen)
{
	struct stat sb;
	int fd, rc = IH_OK;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 || fsync(fd) != 0 || fstat(fd, &sb) != 0) {
		snprintf(err, errlen, "cannot sync %s: %s", path,
		    strerror(errno));
		rc = IH_EIO;
	} else if (size != NULL)
		*size = (int64_t)sb.st_size;
	if (fd >= 0)
		close(fd);
	return rc;
}

/* fsync of the folder that holds path, so that a rename there lasts. */
int
sqcopy_sync_dir(const char *path, char *err, size_t errlen)
{
	char buf[SQCOPY_PATH_MAX];
	int n;

	n = snprintf(buf, sizeof(buf), "%s", path);
	if (n < 0 || (size_t)n >= sizeof(buf)) {
		snprintf(err, errlen, "path too long");
		return IH_EINVAL;
	}
	return sqcopy_sync(dirname(buf), NULL, err, errlen);
}

/* Creates an empty owner-only temporary file named after base. */
int
sqcopy_make_temp(const char *base, const char *tag, char *out,
    size_t outlen, struct stat *made, char *err, size_t errlen)
{
	int fd, n;

	n = snprintf(out, outlen, "%s.%s.XXXXXX", base, tag);
	if (n < 0 || (size_t)n >= outlen) {
		snprintf(err, errlen, "path too long: %s", base);
		return IH_EINVAL;
	}
	/* mkstemp creates the file 0600, O_EXCL: never through a link. */
	fd = mkstemp(out);
	if (fd < 0) {
		snprintf(err, errlen, "cannot create a temporary file beside "
		    "%s: %s", base, strerror(errno));
		return IH_EIO;
	}
	(void)fchmod(fd, 0600);
	if (made != NULL && fstat(fd, made) != 0)
		memset(made, 0, sizeof(*made));
	/* Closed before SQLite opens it: no lock of SQLite's to drop. */
	close(fd);
	return IH_OK;
}

/*
 * Copies every page of src into dst with the backup API, calling fn
 * after each step.  The caller holds a read transaction on src, so the
 * steps all see one snapshot and never restart.
 */
int
sqcopy_pages(sqlite3 *src, sqlite3 *dst, store_backup_fn fn, void *arg,
    struct store_backup_info *info, char *err, size_t errlen)
{
	sqlite3_backup *b;
	int rc, waited = 0;

	b = sqlite3_backup_init(dst, "main", src, "main");
	if (b == NULL)
		return db_fail(dst, sqlite3_errcode(dst), "cannot start the "
		    "backup", err, errlen);
	for (;;) {
		rc = sqlite3_backup_step(b, BACKUP_STEP);
		if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED) {
			if (++waited > BACKUP_BUSY_MS)
				break;
			sqlite3_sleep(1);
			continue;
		}
		if (rc != SQLITE_OK && rc != SQLITE_DONE)
			break;
		info->pages = sqlite3_backup_pagecount(b);
		if (fn != NULL && fn(arg, info->pages -
		    sqlite3_backup_remaining(b), info->pages) != IH_OK) {
			rc = SQLITE_INTERRUPT;
			break;
		}
		if (rc == SQLITE_DONE)
			break;
	}
	if (sqlite3_backup_finish(b) != SQLITE_OK && rc == SQLITE_DONE)
		rc = sqlite3_errcode(dst);
	if (rc != SQLITE_DONE)
		return db_fail(dst, rc, "cannot copy the store", err, errlen);
	return IH_OK;
}

/*
 * The copy, filled by sqcopy_pages(): taken out of WAL mode (the source's
 * header says WAL), so that it is one self-contained file, and checked.
 */
int
sqcopy_finish(sqlite3 *dst, struct store_backup_info *info, char *err,
    size_t errlen)
{
	int rc;

	rc = sqcopy_exec(dst, "PRAGMA journal_mode = DELETE", "cannot take the "
	    "copy out of WAL mode", err, errlen);
	if (rc == IH_OK)
		rc = check_copy(dst, info, err, errlen);
	return rc;
}

int
sqcopy_open(const char *path, int flags, sqlite3 **db, char *err,
    size_t errlen)
{
	int rc;

	rc = sqlite3_open_v2(path, db, flags | SQLITE_OPEN_NOFOLLOW, NULL);
	if (rc != SQLITE_OK) {
		rc = db_fail(*db, rc, "cannot open the copy", err, errlen);
		sqlite3_close(*db);
		*db = NULL;
		return rc;
	}
	sqlite3_extended_result_codes(*db, 1);
	sqlite3_busy_timeout(*db, BACKUP_BUSY_MS);
	/* The copy is written once: durability comes from sqcopy_sync(). */
	return sqcopy_exec(*db, "PRAGMA synchronous = FULL", "cannot set "
	    "synchronous", err, errlen);
}

int
store_backup(struct store *st, const char *dest, store_backup_fn fn,
    void *arg, struct store_backup_info *info, char *err, size_t errlen)
{
	struct store_backup_info snap;
	char tmp[SQCOPY_PATH_MAX];
	sqlite3 *src, *dst = NULL;
	size_t i;
	int rc, in_tx = 0, made = 0;

	memset(info, 0, sizeof(*info));
	memset(&snap, 0, sizeof(snap));
	if (strcmp(store_backend(st), "sqlite") != 0) {
		snprintf(err, errlen, "not a SQLite store: use pg_dump");
		return IH_EINVAL;
	}
	src = sq_of(st)->db;
	rc = sqcopy_make_temp(dest, "tmp", tmp, sizeof(tmp), NULL, err,
	    errlen);
	if (rc != IH_OK)
		return rc;
	made = 1;
	rc = sqcopy_open(tmp, SQLITE_OPEN_READWRITE, &dst, err, errlen);
	if (rc != IH_OK)
		goto out;
	/* One snapshot for the counts and every page. */
	rc = sqcopy_exec(src, "BEGIN", "cannot begin a read", err, errlen);
	if (rc != IH_OK)
		goto out;
	in_tx = 1;
	rc = db_counts(src, &snap, err, errlen);
	if (rc == IH_OK)
		rc = sqcopy_pages(src, dst, fn, arg, info, err, errlen);
	(void)sqlite3_exec(src, "COMMIT", NULL, NULL, NULL);
	in_tx = 0;
	if (rc == IH_OK)
		rc = sqcopy_finish(dst, info, err, errlen);
	if (rc != IH_OK)
		goto out;
	for (i = 0; i < BACKUP_NTABLES; i++)
		if (*table_count(info, i) != *table_count(&snap, i)) {
			snprintf(err, errlen, "the copy holds %lld %s rows, "
			    "the store %lld", (long long)*table_count(info, i),
			    backup_tables[i].name,
			    (long long)*table_count(&snap, i));
			rc = IH_ESTORE;
			goto out;
		}
	rc = sqlite3_close(dst) == SQLITE_OK ? IH_OK : IH_ESTORE;
	dst = NULL;
	if (rc != IH_OK) {
		snprintf(err, errlen, "cannot close the copy");
		goto out;
	}
	rc = sqcopy_sync(tmp, &info->bytes, err, errlen);
	if (rc != IH_OK)
		goto out;
	if (rename(tmp, dest) != 0) {
		snprintf(err, errlen, "cannot rename the copy to %s: %s", dest,
		    strerror(errno));
		rc = IH_EIO;
		goto out;
	}
	made = 0;
	rc = sqcopy_sync_dir(dest, err, errlen);
out:
	if (in_tx)
		(void)sqlite3_exec(src, "COMMIT", NULL, NULL, NULL);
	sqlite3_close(dst);
	if (made)
		sqcopy_remove(tmp);
	return rc == IH_OK ? IH_OK : IH_ESTORE;
}

int
store_quick_check(struct store *st, char *out, size_t outlen, char *err,
    size_t errlen)
{
	if (strcmp(store_backend(st), "sqlite") != 0) {
		snprintf(err, errlen, "not a SQLite store");
		return IH_EINVAL;
	}
	return db_integrity(sq_of(st)->db, "PRAGMA quick_check(8)", out,
	    outlen, err, errlen);
}
