/*
 * sqlite_sync.c -- one fdatasync of the write-ahead log for the durable
 * commits of several processes; see sqlite_sync.h.
 */
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ih.h"
#include "sqlite_sync.h"

/* The mapped file: both words only ever grow. */
struct sqsync_shared {
	uint64_t	committed;	/* commits numbered so far */
	uint64_t	durable;	/* every commit <= this is synced */
};

struct sqsync {
	int			 fd;	/* <path>-sync; flock = sync lock */
	struct sqsync_shared	*sh;
};

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
	n = snprintf(name, sizeof(name), "%s-sync", path);
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
sync_log(sqlite3 *db, char *err, size_t errlen)
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
			return sync_log(db, err, errlen);
		}
	}
	/* Whoever held the lock may have synced past us meanwhile. */
	if (durable_for(s, ticket)) {
		flock(s->fd, LOCK_UN);
		return IH_OK;
	}
	upto = __atomic_load_n(&s->sh->committed, __ATOMIC_SEQ_CST);
	rc = sync_log(db, err, errlen);
	if (rc == IH_OK &&
	    __atomic_load_n(&s->sh->durable, __ATOMIC_SEQ_CST) < upto)
		__atomic_store_n(&s->sh->durable, upto, __ATOMIC_SEQ_CST);
	flock(s->fd, LOCK_UN);
	return rc;
}
