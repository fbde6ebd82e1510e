/*
 * sqlite_restore.c -- SQLite: putting a copy in place of a store that
 * nobody holds (store_restore()): the copy is made beside the store,
 * checked, brought to this build's schema version and compared with the
 * schema this build creates, then swapped in.
 */
#include <sys/file.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "ih.h"
#include "sqlite_copy.h"
#include "sqlite_int.h"
#include "sqlite_shape.h"
#include "sqlite_trust.h"
#include "store_backup.h"

/*
 * SQLite's unix VFS: a connection holds a read lock on these bytes of
 * the database file for as long as it has the store open in WAL mode
 * (os_unix.c, SHARED_FIRST and SHARED_SIZE at the default lock byte).
 */
#define SQLITE_SHARED_FIRST	(0x40000000 + 2)
#define SQLITE_SHARED_SIZE	510
/* Names tried for the store kept aside, within one second. */
#define RESTORE_ASIDE_TRIES	100

/*
 * Whether another process holds the store open: a read lock on SQLite's
 * shared-lock bytes of the file.  *pid gets the holder.  A missing store
 * is held by nobody.
 */
static int
held_open(const char *path, long *pid)
{
	struct flock fl;
	int fd, held = 0;

	*pid = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return 0;
	memset(&fl, 0, sizeof(fl));
	fl.l_type = F_WRLCK;
	fl.l_whence = SEEK_SET;
	fl.l_start = SQLITE_SHARED_FIRST;
	fl.l_len = SQLITE_SHARED_SIZE;
	if (fcntl(fd, F_GETLK, &fl) == 0 && fl.l_type != F_UNLCK) {
		held = 1;
		*pid = (long)fl.l_pid;
	}
	/* This process has no connection to the store: no lock to drop. */
	close(fd);
	return held;
}

static int
refuse(struct store_restore *r, const char *path, char *err, size_t errlen)
{
	r->in_use = 1;
	if (r->holder > 0)
		snprintf(err, errlen, "process %ld holds the store %s open (a "
		    "receiver or idemhook work): stop them first",
		    r->holder, path);
	else
		snprintf(err, errlen, "the store %s is in use (a receiver or "
		    "idemhook work is writing): stop them first", path);
	return IH_ESTORE;
}

/* Writes every byte of fd (the copy, opened by root) into tmp. */
static int
copy_bytes(int fd, const char *src, const char *tmp, char *err,
    size_t errlen)
{
	char buf[65536];
	ssize_t n, w;
	size_t off;
	int out, rc = IH_EIO;

	out = open(tmp, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
	if (out < 0) {
		snprintf(err, errlen, "cannot write the copy %s: %s", tmp,
		    strerror(errno));
		return IH_EIO;
	}
	for (;;) {
		n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			snprintf(err, errlen, "cannot read the copy %s: %s",
			    src, strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		for (off = 0; off < (size_t)n; off += (size_t)w) {
			w = write(out, buf + off, (size_t)n - off);
			if (w < 0 && errno == EINTR) {
				w = 0;
				continue;
			}
			if (w <= 0) {
				snprintf(err, errlen, "cannot write the copy "
				    "%s: %s", tmp, strerror(errno));
				goto out;
			}
		}
	}
	rc = IH_OK;
out:
	close(out);
	return rc;
}

/* The copy's pages, when it was not filled by the backup API. */
static int
page_count(sqlite3 *db, int64_t *pages, char *err, size_t errlen)
{
	sqlite3_stmt *s = NULL;
	int rc;

	rc = sqlite3_prepare_v2(db, "PRAGMA page_count", -1, &s, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		*pages = sqlite3_column_int64(s, 0);
	else
		snprintf(err, errlen, "cannot count the copy's pages: %s",
		    sqlite3_errmsg(db));
	sqlite3_finalize(s);
	return rc == SQLITE_ROW ? IH_OK : IH_ESTORE;
}

/*
 * Brings the copy to this build's schema version, as the next open would,
 * and refuses it when its objects are not the ones this build creates:
 * a trigger planted in a backup would run inside every writer.
 */
static int
check_shape(sqlite3 *db, char *err, size_t errlen)
{
	char found[512];
	int rc, differs;

	rc = sqtrust_harden(db, err, errlen);
	if (rc == IH_OK)
		rc = sq_migrate_copy(db, err, errlen);
	if (rc == IH_OK)
		rc = sq_shape_check(db, found, sizeof(found), &differs, err,
		    errlen);
	if (rc != IH_OK)
		return rc;
	if (differs > 0) {
		snprintf(err, errlen, "the copy's schema is not the one this "
		    "build creates (%s): a trigger or view planted in a copy "
		    "would run inside every writer", found);
		return IH_ESTORE;
	}
	return IH_OK;
}

/*
 * Copies src (by name with SQLite, or the bytes of src_fd) into the
 * temporary file tmp and checks the copy.
 */
static int
restore_copy(const char *src, int src_fd, const char *tmp,
    struct store_restore *r, char *err, size_t errlen)
{
	sqlite3 *in = NULL, *out = NULL;
	int rc;

	if (src_fd >= 0)
		rc = copy_bytes(src_fd, src, tmp, err, errlen);
	else
		rc = sqcopy_open(src, SQLITE_OPEN_READONLY, &in, err, errlen);
	if (rc == IH_OK)
		rc = sqcopy_open(tmp, SQLITE_OPEN_READWRITE, &out, err,
		    errlen);
	if (rc == IH_OK && src_fd < 0) {
		rc = sqcopy_exec(in, "BEGIN", "cannot read the copy", err,
		    errlen);
		if (rc == IH_OK)
			rc = sqcopy_pages(in, out, NULL, NULL, &r->info, err,
			    errlen);
		(void)sqlite3_exec(in, "COMMIT", NULL, NULL, NULL);
	}
	if (rc == IH_OK)
		rc = sqcopy_finish(out, &r->info, err, errlen);
	if (rc == IH_OK && src_fd >= 0)
		rc = page_count(out, &r->info.pages, err, errlen);
	if (rc == IH_OK)
		rc = check_shape(out, err, errlen);
	sqlite3_close(in);
	if (sqlite3_close(out) != SQLITE_OK && rc == IH_OK) {
		snprintf(err, errlen, "cannot close the copy");
		rc = IH_ESTORE;
	}
	if (rc == IH_OK)
		rc = sqcopy_sync(tmp, &r->info.bytes, err, errlen);
	return rc;
}

/*
 * As root, gives the copy the owner of the store it replaces through a
 * descriptor, never by name, and only to the file mkstemp made: a link
 * renamed over the name meanwhile is refused.
 */
static int
own_like(const char *tmp, const struct stat *made, const struct stat *store,
    char *err, size_t errlen)
{
	struct stat sb;
	int fd, rc = IH_EIO;

	fd = open(tmp, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0 || fstat(fd, &sb) != 0) {
		snprintf(err, errlen, "cannot open the copy %s: %s", tmp,
		    strerror(errno));
		goto out;
	}
	if (sb.st_dev != made->st_dev || sb.st_ino != made->st_ino ||
	    !S_ISREG(sb.st_mode)) {
		snprintf(err, errlen, "the copy %s was replaced by another "
		    "file: refused", tmp);
		goto out;
	}
	if (fchown(fd, store->st_uid, store->st_gid) != 0) {
		snprintf(err, errlen, "cannot give the copy the store's owner: "
		    "%s", strerror(errno));
		goto out;
	}
	rc = IH_OK;
out:
	if (fd >= 0)
		close(fd);
	return rc;
}

/*
 * Under SQLite's exclusive lock: nobody else has the store open, and its
 * log is checkpointed into the file.  IH_ESTORE with in_use when another
 * connection holds it; *wal_left is 1 when the log could not be folded
 * in (a damaged store: it is then kept beside it).
 */
static int
quiesce(const char *path, struct store_restore *r, int *wal_left,
    char *err, size_t errlen)
{
	sqlite3 *db = NULL;
	int rc;

	*wal_left = 1;
	if (access(path, F_OK) != 0)
		return IH_OK;
	rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_NOFOLLOW, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, "PRAGMA locking_mode = EXCLUSIVE",
		    NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, "BEGIN EXCLUSIVE; COMMIT", NULL, NULL,
		    NULL);
	if ((rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED) {
		sqlite3_close(db);
		return refuse(r, path, err, errlen);
	}
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, "PRAGMA wal_checkpoint(TRUNCATE); "
		    "PRAGMA journal_mode = DELETE", NULL, NULL, NULL);
	*wal_left = rc != SQLITE_OK;
	sqlite3_close(db);
	return IH_OK;
}

/*
 * Gives the store a second name, r->aside: <path>.before-restore-<UTC
 * time>, or with -2, -3... when that is taken (two restores within a
 * second), whose -wal is free too.  A kept copy is never replaced.
 */
static int
keep_aside(const char *path, struct store_restore *r, char *err,
    size_t errlen)
{
	char stamp[32], wal[SQCOPY_PATH_MAX + 8];
	time_t now = time(NULL);
	struct tm tm;
	int n;

	gmtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	for (n = 1; n <= RESTORE_ASIDE_TRIES; n++) {
		if (n == 1)
			snprintf(r->aside, sizeof(r->aside),
			    "%s.before-restore-%s", path, stamp);
		else
			snprintf(r->aside, sizeof(r->aside),
			    "%s.before-restore-%s-%d", path, stamp, n);
		snprintf(wal, sizeof(wal), "%s-wal", r->aside);
		if (access(wal, F_OK) == 0)
			continue;
		/* A second name first: the store's path never goes missing. */
		if (link(path, r->aside) == 0)
			return IH_OK;
		if (errno != EEXIST)
			break;
	}
	snprintf(err, errlen, "cannot keep the store as %s: %s", r->aside,
	    n > RESTORE_ASIDE_TRIES ? "every such name is taken" :
	    strerror(errno));
	r->aside[0] = '\0';
	return IH_EIO;
}

/* Moves the store (and its -wal) aside, then the copy into place. */
static int
swap_in(const char *path, const char *tmp, struct store_restore *r,
    int wal_left, char *err, size_t errlen)
{
	char wal[SQCOPY_PATH_MAX], shm[SQCOPY_PATH_MAX];
	char aside_wal[SQCOPY_PATH_MAX + 8];

	snprintf(wal, sizeof(wal), "%s-wal", path);
	snprintf(shm, sizeof(shm), "%s-shm", path);
	r->aside[0] = '\0';
	if (access(path, F_OK) == 0) {
		if (keep_aside(path, r, err, errlen) != IH_OK)
			return IH_EIO;
		/* Linked, not renamed: an existing name is never replaced. */
		snprintf(aside_wal, sizeof(aside_wal), "%s-wal", r->aside);
		if (wal_left && access(wal, F_OK) == 0 &&
		    link(wal, aside_wal) == 0)
			r->aside_wal = 1;
	}
	/* A stale log would be replayed into the copy: never keep it. */
	(void)unlink(wal);
	(void)unlink(shm);
	if (rename(tmp, path) != 0) {
		snprintf(err, errlen, "cannot rename the copy to %s: %s", path,
		    strerror(errno));
		if (r->aside[0] != '\0' && !r->aside_wal)
			(void)unlink(r->aside);
		return IH_EIO;
	}
	return sqcopy_sync_dir(path, err, errlen);
}

int
store_restore(const struct store_opts *opts, const char *src, int src_fd,
    struct store_restore *r, char *err, size_t errlen)
{
	const char *path = opts->path;
	char tmp[SQCOPY_PATH_MAX], qpath[SQCOPY_PATH_MAX];
	struct stat sb, ssb, tsb;
	int rc, qfd = -1, made = 0, wal_left = 1, have = 0;

	memset(r, 0, sizeof(*r));
	if (store_is_postgres(path)) {
		snprintf(err, errlen, "not a SQLite store: use pg_restore");
		return IH_EINVAL;
	}
	if ((src_fd >= 0 ? fstat(src_fd, &ssb) : stat(src, &ssb)) != 0) {
		snprintf(err, errlen, "cannot read the copy %s: %s", src,
		    strerror(errno));
		return IH_ESTORE;
	}
	if (!S_ISREG(ssb.st_mode)) {
		snprintf(err, errlen, "the copy %s is not a regular file",
		    src);
		return IH_ESTORE;
	}
	have = lstat(path, &sb) == 0;
	if (have && (!S_ISREG(sb.st_mode) || (sb.st_dev == ssb.st_dev &&
	    sb.st_ino == ssb.st_ino))) {
		snprintf(err, errlen, "%s is %s", path, S_ISREG(sb.st_mode) ?
		    "the copy itself" : "not a regular file (a link is "
		    "refused)");
		return IH_ESTORE;
	}
	/* Refused early, before the copy costs anything. */
	if (held_open(path, &r->holder))
		return refuse(r, path, err, errlen);
	rc = sqcopy_make_temp(path, "restore", tmp, sizeof(tmp), &tsb, err,
	    errlen);
	if (rc != IH_OK)
		return IH_ESTORE;
	made = 1;
	rc = restore_copy(src, src_fd, tmp, r, err, errlen);
	/* As the store it replaces (the command drops root when it can). */
	if (rc == IH_OK && have && geteuid() == 0)
		rc = own_like(tmp, &tsb, &sb, err, errlen);
	if (rc != IH_OK)
		goto out;
	snprintf(qpath, sizeof(qpath), "%s-lock", path);
	qfd = open(qpath, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	/* A queue file made here by root must stay the receivers'. */
	if (qfd >= 0 && have && geteuid() == 0)
		(void)fchown(qfd, sb.st_uid, sb.st_gid);
	if (qfd >= 0 && flock(qfd, LOCK_EX | LOCK_NB) != 0) {
		rc = refuse(r, path, err, errlen);
		goto out;
	}
	if (held_open(path, &r->holder)) {
		rc = refuse(r, path, err, errlen);
		goto out;
	}
	rc = quiesce(path, r, &wal_left, err, errlen);
	if (rc == IH_OK)
		rc = swap_in(path, tmp, r, wal_left, err, errlen);
	if (rc == IH_OK)
		made = 0;
out:
	if (qfd >= 0)
		close(qfd);
	if (made)
		sqcopy_remove(tmp);
	return rc == IH_OK ? IH_OK : IH_ESTORE;
}
