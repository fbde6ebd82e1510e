/*
 * sqlite_copy.h -- the steps store_backup() and store_restore() share
 * (sqlite_backup.c): temporary files beside a path, opening, filling,
 * checking and syncing a copy, and removing one that failed.
 *
 * Every function borrows what it is given and keeps nothing; failures
 * return IH_ESTORE, IH_EIO or IH_EINVAL with the cause in err.
 */
#ifndef IH_SQLITE_COPY_H
#define IH_SQLITE_COPY_H

#include <sys/stat.h>

#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#include "store_backup.h"

#define SQCOPY_PATH_MAX	4200

/* sqlite3_exec() of sql; what names it in err on failure. */
int	sqcopy_exec(sqlite3 *db, const char *sql, const char *what, char *err,
	    size_t errlen);

/*
 * Creates an empty 0600 file "<base>.<tag>.XXXXXX" (mkstemp: never
 * through a link), writes its name into out and, when made is not
 * NULL, what fstat says of it (its device and inode) into *made.
 */
int	sqcopy_make_temp(const char *base, const char *tag, char *out,
	    size_t outlen, struct stat *made, char *err, size_t errlen);

/* Opens a copy (never through a link), FULL sync, a busy timeout. */
int	sqcopy_open(const char *path, int flags, sqlite3 **db, char *err,
	    size_t errlen);

/*
 * Copies every page of src into dst with the backup API, calling fn (if
 * any) after each step; the caller holds a read transaction on src.
 */
int	sqcopy_pages(sqlite3 *src, sqlite3 *dst, store_backup_fn fn,
	    void *arg, struct store_backup_info *info, char *err,
	    size_t errlen);

/*
 * Takes the copy out of WAL mode (one self-contained file) and checks
 * it: integrity_check, an idemhook schema no newer than this build's;
 * fills *info.
 */
int	sqcopy_finish(sqlite3 *dst, struct store_backup_info *info, char *err,
	    size_t errlen);

/* fsync of path (file or folder, never through a link), its size. */
int	sqcopy_sync(const char *path, int64_t *size, char *err,
	    size_t errlen);

/* fsync of the folder that holds path. */
int	sqcopy_sync_dir(const char *path, char *err, size_t errlen);

/* Removes path and the -journal, -wal and -shm SQLite may leave. */
void	sqcopy_remove(const char *path);

#endif /* IH_SQLITE_COPY_H */
