/* sigfail.c -- per-minute counts of refused signatures, shared by file. */
#include <sys/file.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ih.h"
#include "sigfail.h"
#include "store.h"

/* One provider's counts: minute[i] is the Unix minute count[i] is of. */
struct rec {
	char		provider[16];
	int64_t		minute[SIGFAIL_MINUTES];
	uint32_t	count[SIGFAIL_MINUTES];
};

static int
path_of(const char *db_path, char *out, size_t len)
{
	int n;

	if (db_path == NULL || store_is_postgres(db_path))
		return IH_ENOTFOUND;
	n = snprintf(out, len, "%s-sigfail", db_path);
	return n < 0 || (size_t)n >= len ? IH_ETOOBIG : IH_OK;
}

/* Reads record i into r; a short read (a new file) is zeros. */
static int
rec_read(int fd, size_t i, struct rec *r)
{
	ssize_t n;

	memset(r, 0, sizeof(*r));
	n = pread(fd, r, sizeof(*r), (off_t)(i * sizeof(*r)));
	if (n < 0)
		return IH_EIO;
	if ((size_t)n < sizeof(*r))
		memset(r, 0, sizeof(*r));
	r->provider[sizeof(r->provider) - 1] = '\0';
	return IH_OK;
}

/* The record of provider (or the first free one when add). */
static int
find(int fd, const char *provider, int add, size_t *at, struct rec *r)
{
	size_t i;

	for (i = 0; i < SIGFAIL_PROVIDERS; i++) {
		if (rec_read(fd, i, r) != IH_OK)
			return IH_EIO;
		if (strcmp(r->provider, provider) == 0 ||
		    (add && r->provider[0] == '\0')) {
			*at = i;
			return IH_OK;
		}
	}
	return IH_ENOTFOUND;
}

int
sigfail_note(const char *db_path, const char *provider, int64_t now_ms,
    char *err, size_t errlen)
{
	char path[4200];
	struct rec r;
	int64_t m = now_ms / 60000;
	size_t at, slot = (size_t)(m % SIGFAIL_MINUTES);
	int fd, rc;

	rc = path_of(db_path, path, sizeof(path));
	if (rc == IH_ENOTFOUND)
		return IH_OK;
	if (rc != IH_OK || strlen(provider) >= sizeof(r.provider))
		return IH_EINVAL;
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		snprintf(err, errlen, "cannot open %s: %s", path,
		    strerror(errno));
		return IH_EIO;
	}
	rc = IH_EIO;
	if (flock(fd, LOCK_EX) != 0)
		goto out;
	rc = find(fd, provider, 1, &at, &r);
	if (rc != IH_OK)
		goto out;
	snprintf(r.provider, sizeof(r.provider), "%s", provider);
	if (r.minute[slot] != m) {
		r.minute[slot] = m;
		r.count[slot] = 0;
	}
	if (r.count[slot] < UINT32_MAX)
		r.count[slot]++;
	rc = pwrite(fd, &r, sizeof(r), (off_t)(at * sizeof(r))) ==
	    (ssize_t)sizeof(r) ? IH_OK : IH_EIO;
out:
	if (rc != IH_OK)
		snprintf(err, errlen, "cannot count in %s: %s", path,
		    rc == IH_ENOTFOUND ? "no room" : strerror(errno));
	close(fd);
	return rc == IH_ENOTFOUND ? IH_OK : rc;
}

int
sigfail_count(const char *db_path, const char *provider, int64_t now_ms,
    long minutes, long *count, int64_t *first_ms, char *err, size_t errlen)
{
	char path[4200];
	struct rec r;
	int64_t m = now_ms / 60000, first = 0;
	size_t at, i;
	int fd, rc;

	*count = 0;
	*first_ms = 0;
	rc = path_of(db_path, path, sizeof(path));
	if (rc == IH_ENOTFOUND)
		return IH_OK;
	if (rc != IH_OK)
		return IH_EINVAL;
	if (minutes > SIGFAIL_MINUTES)
		minutes = SIGFAIL_MINUTES;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 && errno == ENOENT)
		return IH_OK;
	if (fd < 0) {
		snprintf(err, errlen, "cannot open %s: %s", path,
		    strerror(errno));
		return IH_EIO;
	}
	rc = flock(fd, LOCK_SH) == 0 ? find(fd, provider, 0, &at, &r) :
	    IH_EIO;
	for (i = 0; rc == IH_OK && i < SIGFAIL_MINUTES; i++) {
		if (r.minute[i] <= m - minutes || r.minute[i] > m ||
		    r.count[i] == 0)
			continue;
		*count += (long)r.count[i];
		if (first == 0 || r.minute[i] < first)
			first = r.minute[i];
	}
	*first_ms = first * 60000;
	close(fd);
	if (rc == IH_EIO)
		snprintf(err, errlen, "cannot read %s: %s", path,
		    strerror(errno));
	return rc == IH_ENOTFOUND ? IH_OK : rc;
}
