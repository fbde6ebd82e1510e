/*
 * sqlite_sync.c -- one fdatasync of the write-ahead log for the durable
 * commits of several processes; see sqlite_sync.h.
 */
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <linux/fs.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ih.h"
#include "sqlite_sync.h"

/*
 * The mapped file: the first two words only ever grow.  The last three
 * name the log whose directory entry is durable (see sync_log()); they
 * change only under the sync lock.
 */
struct sqsync_shared {
	uint64_t	committed;	/* commits numbered so far */
	uint64_t	durable;	/* every commit <= this is synced */
	uint64_t	wal_dev;
	uint64_t	wal_ino;
	uint64_t	wal_gen;	/* the inode's generation */
};

struct sqsync {
	int			 fd;	/* <path>-sync; flock = sync lock */
	int			 walfd;	/* <path>-wal, opened at first sync */
	char			 wal[4200];
	char			 dir[4200];	/* the folder of both */
	struct sqsync_shared	*sh;
};

/* The folder of a path, in place: "." for a bare name, "/" for the root. */
static void
dir_of(char *p)
{
	char *slash = strrchr(p, '/');

	if (slash == NULL)
		snprintf(p, 2, ".");
	else if (slash == p)
		p[1] = '\0';
	else
		*slash = '\0';
}

int
sqsync_open(const char *path, struct sqsync **out, char *err,
    size_t errlen)
{
	struct sqsync *s;
	struct stat sb;
	char name[4200];
	void *m;
	int n, rc = IH_ESTORE;

	*out = NULL;
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return IH_ENOMEM;
	s->fd = -1;
	s->walfd = -1;
	n = snprintf(name, sizeof(name), "%s-sync", path);
	if (n >= 0 && (size_t)n < sizeof(name))
		n = snprintf(s->wal, sizeof(s->wal), "%s-wal", path);
	if (n >= 0 && (size_t)n < sizeof(s->wal))
		n = snprintf(s->dir, sizeof(s->dir), "%s", path);
	if (n < 0 || (size_t)n >= sizeof(name)) {
		snprintf(err, errlen, "store path is too long");
		goto out;
	}
	s->fd = open(name, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (s->fd < 0) {
		snprintf(err, errlen, "cannot open %s: %s", name,
		    strerror(errno));
		goto out;
	}
	/* A new file is empty: make room, never shrink a used one. */
	if (fstat(s->fd, &sb) != 0 ||
	    ((size_t)sb.st_size < sizeof(*s->sh) &&
	    ftruncate(s->fd, (off_t)sizeof(*s->sh)) != 0)) {
		snprintf(err, errlen, "cannot size %s: %s", name,
		    strerror(errno));
		goto out;
	}
	m = mmap(NULL, sizeof(*s->sh), PROT_READ | PROT_WRITE, MAP_SHARED,
	    s->fd, 0);
	if (m == MAP_FAILED) {
		snprintf(err, errlen, "cannot map %s: %s", name,
		    strerror(errno));
		goto out;
	}
	s->sh = m;
	dir_of(s->dir);
	*out = s;
	s = NULL;
	rc = IH_OK;
out:
	sqsync_close(s);
	return rc;
}

void
sqsync_close(struct sqsync *s)
{
	if (s == NULL)
		return;
	if (s->sh != NULL)
		munmap(s->sh, sizeof(*s->sh));
	if (s->fd >= 0)
		close(s->fd);
	if (s->walfd >= 0)
		close(s->walfd);
	free(s);
}

/*
 * Numbered after the commit returned: its log frames are written by
 * then, so a sync that reads the counter later covers them.
 */
uint64_t
sqsync_note(struct sqsync *s)
{
	return __atomic_add_fetch(&s->sh->committed, 1, __ATOMIC_SEQ_CST);
}

static int
durable_for(const struct sqsync *s, uint64_t ticket)
{
	return __atomic_load_n(&s->sh->durable, __ATOMIC_SEQ_CST) >= ticket;
}

/* Syncs the log through db's own handle of it. */
static int
sync_sqlite(sqlite3 *db, char *err, size_t errlen)
{
	sqlite3_file *f = NULL;
	int rc;

	rc = sqlite3_file_control(db, "main", SQLITE_FCNTL_JOURNAL_POINTER,
	    &f);
	if (rc != SQLITE_OK || f == NULL || f->pMethods == NULL) {
		snprintf(err, errlen, "cannot sync the write-ahead log: it is "
		    "not open");
		return IH_ESTORE;
	}
	rc = f->pMethods->xSync(f, SQLITE_SYNC_NORMAL);
	if (rc != SQLITE_OK) {
		snprintf(err, errlen, "cannot sync the write-ahead log: %s",
		    sqlite3_errstr(rc));
		return IH_ESTORE;
	}
	return IH_OK;
}

/* 0, or the errno of opening or syncing the store's folder. */
static int
sync_dir(const struct sqsync *s)
{
	int fd, rc = 0;

	fd = open(s->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	if (fsync(fd) != 0)
		rc = errno;
	close(fd);
	return rc;
}

/*
 * Syncs the log, holding the sync lock.  SQLite's own sync of the log
 * also syncs its folder on the first call through each handle, since it
 * opens the log as if to create it, which a CGI process paid at every
 * delivery: a second flush of the disk's cache.  The folder needs it only
 * once per log file.  So the log is synced through a descriptor of its
 * own (SQLite takes no lock on the log, so opening and closing one drops
 * none), and the folder only when the mapped file does not name this
 * log, by device, inode and the inode's generation (which a file made
 * later on a reused inode does not share): then the folder is synced and
 * the log named.  The name is written after the folder's sync returns,
 * so a name that survives a crash means a durable entry.  Where the
 * generation cannot be read, SQLite syncs, as before.
 */
static int
sync_log(struct sqsync *s, sqlite3 *db, char *err, size_t errlen)
{
	struct sqsync_shared *sh = s->sh;
	struct stat sb;
	unsigned int gen = 0;
	int e;

	/* NONBLOCK: something else put there (a FIFO) must not hang us. */
	if (s->walfd < 0)
		s->walfd = open(s->wal, O_RDONLY | O_CLOEXEC | O_NOFOLLOW |
		    O_NONBLOCK);
	if (s->walfd < 0 || fstat(s->walfd, &sb) != 0 ||
	    !S_ISREG(sb.st_mode) ||
	    ioctl(s->walfd, FS_IOC_GETVERSION, &gen) != 0)
		return sync_sqlite(db, err, errlen);
	if (fdatasync(s->walfd) != 0) {
		snprintf(err, errlen, "cannot sync the write-ahead log: %s",
		    strerror(errno));
		return IH_ESTORE;
	}
	if (sh->wal_dev == (uint64_t)sb.st_dev &&
	    sh->wal_ino == (uint64_t)sb.st_ino && sh->wal_gen == gen)
		return IH_OK;
	e = sync_dir(s);
	if (e != 0) {
		snprintf(err, errlen, "cannot sync the store's folder: %s",
		    strerror(e));
		return IH_ESTORE;
	}
	sh->wal_dev = (uint64_t)sb.st_dev;
	sh->wal_ino = (uint64_t)sb.st_ino;
	sh->wal_gen = gen;
	return IH_OK;
}

int
sqsync_wait(struct sqsync *s, sqlite3 *db, uint64_t ticket, char *err,
    size_t errlen)
{
	uint64_t upto;
	int rc;

	if (durable_for(s, ticket))
		return IH_OK;
	while (flock(s->fd, LOCK_EX) != 0) {
		if (errno != EINTR) {
			/* No lock, no sharing: sync for ourselves. */
			return sync_sqlite(db, err, errlen);
		}
	}
	/* Whoever held the lock may have synced past us meanwhile. */
	if (durable_for(s, ticket)) {
		flock(s->fd, LOCK_UN);
		return IH_OK;
	}
	upto = __atomic_load_n(&s->sh->committed, __ATOMIC_SEQ_CST);
	rc = sync_log(s, db, err, errlen);
	if (rc == IH_OK &&
	    __atomic_load_n(&s->sh->durable, __ATOMIC_SEQ_CST) < upto)
		__atomic_store_n(&s->sh->durable, upto, __ATOMIC_SEQ_CST);
	flock(s->fd, LOCK_UN);
	return rc;
}
