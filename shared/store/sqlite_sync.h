/*
 * sqlite_sync.h -- one fdatasync of the write-ahead log for the durable
 * commits of several processes (IDEMHOOK_SYNCHRONOUS=SHARED).
 *
 * Under mod_fcgid each process serves one request at a time, so commits
 * cannot be grouped inside a process.  Instead a durable transaction
 * commits at synchronous=NORMAL (its log frames are written, not yet on
 * the disk) and then waits here until some process has run fdatasync on
 * the log after that commit returned.  Whoever takes the sync lock first
 * syncs for every commit before it.
 *
 * The shared state is a small file next to the store, <db>-sync, mapped
 * into every process: a commit counter and a "durable up to" mark.  The
 * sync lock is flock(2) on that file, so a process that dies holding it
 * releases it.
 *
 * Contract:
 *   sqsync_open()   maps <path>-sync (created 0600, never a symlink);
 *                   IH_OK and *out, or IH_ESTORE with err set (the store
 *                   then syncs each durable commit itself, as at FULL).
 *   sqsync_note()   right after a COMMIT at NORMAL returned SQLITE_OK:
 *                   numbers the commit (its ticket).
 *   sqsync_wait()   returns IH_OK only once an fdatasync of the store's
 *                   log that started after the ticket was taken has
 *                   completed, here or in another process; IH_ESTORE if
 *                   this process's sync failed (the commit must then not
 *                   be answered as durable).  It syncs the log through
 *                   a descriptor of its own (SQLite holds no POSIX lock
 *                   on the log, so closing it drops none) and syncs the
 *                   store's folder only for a log file not synced so
 *                   before (named in <path>-sync by device, inode and
 *                   generation): SQLite's own sync would flush the folder
 *                   again in every process.  Where the generation cannot
 *                   be read, it syncs through db's handle (SQLite's
 *                   xSync), as before.
 *   sqsync_close()  unmaps; NULL is ignored.
 */
#ifndef IH_SQLITE_SYNC_H
#define IH_SQLITE_SYNC_H

#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

struct sqsync;

int	 sqsync_open(const char *path, struct sqsync **out, char *err,
	    size_t errlen);
uint64_t sqsync_note(struct sqsync *);
int	 sqsync_wait(struct sqsync *, sqlite3 *db, uint64_t ticket,
	    char *err, size_t errlen);
void	 sqsync_close(struct sqsync *);

#endif
