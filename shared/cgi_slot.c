/* cgi_slot.c -- N flock slots beside the store for plain CGI's processors. */
#include <sys/file.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cgi_slot.h"
#include "ih.h"
#include "store.h"

void
cgi_slot_init(struct cgi_slot *s)
{
	s->fd = -1;
	s->gate = -1;
	s->held = 0;
}

/* Opens "<db_path>-proc<i>" (i 0: the gate, "<db_path>-proc"). */
static int
open_side(const char *db_path, long i, char *err, size_t errlen)
{
	char path[CGI_SLOT_PATH];
	int n, fd;

	if (i == 0)
		n = snprintf(path, sizeof(path), "%s-proc", db_path);
	else
		n = snprintf(path, sizeof(path), "%s-proc%ld", db_path, i);
	if (n < 0 || (size_t)n >= sizeof(path)) {
		snprintf(err, errlen, "the store's path is too long for its "
		    "processing slots");
		return -1;
	}
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		snprintf(err, errlen, "cannot open %s: %s", path,
		    strerror(errno));
	return fd;
}

/* Sets the gate's pending mark to v; the gate is locked by the caller. */
static int
mark_set(int gate, char v)
{
	return pwrite(gate, &v, 1, 0) == 1 ? IH_OK : IH_EIO;
}

int
cgi_slot_take(struct cgi_slot *s, const char *db_path, long n, int mark,
    char *err, size_t errlen)
{
	long i;
	int e, fd, gate = -1, rc = CGI_SLOT_NONE;

	err[0] = '\0';
	if (s->held)
		return CGI_SLOT_TAKEN;
	if (db_path == NULL || store_is_postgres(db_path))
		return CGI_SLOT_NONE;
	/* The gate first, when marking: a holder's last look waits. */
	if (mark) {
		gate = open_side(db_path, 0, err, errlen);
		if (gate < 0)
			goto out;
		if (flock(gate, LOCK_EX) != 0) {
			snprintf(err, errlen, "cannot lock the processing "
			    "gate: %s", strerror(errno));
			goto out;
		}
	}
	for (i = 1; i <= n; i++) {
		fd = open_side(db_path, i, err, errlen);
		if (fd < 0)
			goto out;
		if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
			s->fd = fd;
			s->held = 1;
			rc = CGI_SLOT_TAKEN;
			goto out;
		}
		e = errno;
		close(fd);
		if (e != EWOULDBLOCK) {
			snprintf(err, errlen, "cannot lock processing slot "
			    "%ld: %s", i, strerror(e));
			goto out;
		}
	}
	rc = CGI_SLOT_FULL;
	if (mark && mark_set(gate, 1) != IH_OK) {
		snprintf(err, errlen, "cannot mark the processing gate: %s",
		    strerror(errno));
		rc = CGI_SLOT_NONE;
	}
out:
	if (gate >= 0)
		close(gate);
	return rc;
}

int
cgi_slot_leave(struct cgi_slot *s, const char *db_path)
{
	char err[256], v = 0;
	int gate;

	if (!s->held)
		return 0;
	if (s->gate < 0) {
		gate = open_side(db_path, 0, err, sizeof(err));
		/* No gate to look at: no mark could be set either. */
		if (gate < 0)
			return 0;
		s->gate = gate;
	}
	if (flock(s->gate, LOCK_EX) != 0)
		return 0;
	if (pread(s->gate, &v, 1, 0) == 1 && v != 0 &&
	    mark_set(s->gate, 0) == IH_OK) {
		(void)flock(s->gate, LOCK_UN);
		return 1;
	}
	/* Locked until the exit, which lets go of the slot too. */
	return 0;
}
