/*
 * store_backup.h -- consistent copies of a SQLite store while it serves,
 * their checks, and putting one back (the backup part of the store's
 * interface; sqlite_backup.c implements it for SQLite only).
 *
 * Ownership: every struct here is the caller's; nothing is kept between
 * calls.  Limits: a PostgreSQL store answers IH_EINVAL (pg_dump is the
 * tool there).  Failure: IH_ESTORE with the cause in err, and nothing
 * in place changed.
 */
#ifndef IH_STORE_BACKUP_H
#define IH_STORE_BACKUP_H

#include <stddef.h>
#include <stdint.h>

#include "store.h"

/*
 * Backup and restore (idemhook backup, restore; sqlite_backup.c).  SQLite
 * only: with a PostgreSQL store each answers IH_EINVAL (pg_dump is the
 * tool there).
 *
 * What a copy holds, as checked after it was written: the result of
 * PRAGMA integrity_check ("ok", or its first findings), the schema
 * version, the rows of each table and the file's size.
 */
struct store_backup_info {
	char		 integrity[256];
	int		 schema_version;
	int64_t		 events, attempts, effects, objects, object_events;
	int64_t		 pages;
	int64_t		 bytes;
};

/* Progress: pages copied so far of total; a non-IH_OK return stops. */
typedef int (*store_backup_fn)(void *arg, int64_t done, int64_t total);

/*
 * Writes a consistent copy of st to dest while the receivers keep
 * recording: SQLite's online backup API inside one read transaction of
 * st (a WAL snapshot, which never blocks writers), into a temporary file
 * in dest's folder, created 0600.  The copy is switched out of WAL mode
 * (one self-contained file), checked (integrity_check, schema version,
 * the row counts of the snapshot), fsynced, renamed over dest and the
 * folder fsynced.  Returns IH_OK with *info filled; IH_ESTORE with the
 * cause in err, when dest is left as it was and the temporary file is
 * removed.
 */
int	store_backup(struct store *st, const char *dest, store_backup_fn fn,
	    void *arg, struct store_backup_info *info, char *err,
	    size_t errlen);

/*
 * PRAGMA quick_check of the open store: "ok" or its first findings in
 * out.  Returns IH_OK when it ran (whatever it found), IH_EINVAL on
 * PostgreSQL, IH_ESTORE when it could not run.
 */
int	store_quick_check(struct store *st, char *out, size_t outlen,
	    char *err, size_t errlen);

/*
 * Puts the SQLite copy src in place of the store at opts->path, which
 * must not be open (call it without a struct store).  It refuses
 * (IH_ESTORE, r->in_use set, r->holder the process when known) while any
 * process holds the store open (a receiver, idemhook work: SQLite's
 * shared lock, held for as long as a WAL connection is open) or the
 * writers' queue (<path>-lock); it copies src to a temporary file beside
 * the store and checks the copy as store_backup() does (a schema newer
 * than this build's is refused; an older one is migrated at the next
 * open), owned like the store it replaces; then, holding the queue and
 * SQLite's exclusive lock, it checkpoints the current store, keeps it
 * as r->aside (<path>.before-restore-<UTC time>, or with -2, -3... when
 * that name is taken: a kept copy is never replaced; with its -wal when
 * the checkpoint could not run), removes the stale -wal and -shm and renames
 * the copy into place.  Nothing is changed on any failure before that
 * rename.  Returns IH_OK, IH_EINVAL on PostgreSQL, IH_ESTORE.
 *
 * The copy is migrated to this build's schema version before the swap
 * (as the next open would) and refused when its schema objects are not
 * the ones this build creates (a planted trigger, say).  src_fd -1 reads
 * src by name with SQLite; otherwise the copy's bytes are read from
 * src_fd (root opened it for the store's owner, who runs this), and src
 * only names it.  As root, the copy is given the replaced store's owner
 * through a descriptor, and refused if its name no longer leads to the
 * file made; a caller running as root should rather run this as the
 * store's owner (cli_owner.h), since the store's folder is that user's.
 */
struct store_restore {
	struct store_backup_info	 info;	/* the copy put in place */
	int				 in_use;
	long				 holder;	/* its pid, or 0 */
	char				 aside[4200];	/* "" when none */
	int				 aside_wal;	/* kept with its -wal */
};

int	store_restore(const struct store_opts *opts, const char *src,
	    int src_fd, struct store_restore *r, char *err, size_t errlen);

#endif /* IH_STORE_BACKUP_H */
