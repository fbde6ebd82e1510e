/* sigfail.c -- per-minute counts of refused signatures, shared by file. */
#include <sys/file.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "ih.h"
#include "sigfail.h"
#include "store.h"
#include "store_health.h"

/*
 * One provider's counts: minute[i] is the Unix minute count[i] is of,
 * hour[i] the Unix hour hcount[i] is of (the console's last day).
 */
struct rec {
	char		provider[16];
	int64_t		minute[SIGFAIL_MINUTES];
	uint32_t	count[SIGFAIL_MINUTES];
	int64_t		hour[SIGFAIL_HOURS];
	uint32_t	hcount[SIGFAIL_HOURS];
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

/*
 * Is the file in this layout?  Records gained their hourly counts after
 * the first layout; a file of the old one holds no whole number of
 * records of this one (736 bytes each then, at most 16): its counts are
 * dropped (note) or taken as none (count) rather than misread.
 */
static int
layout_ok(int fd)
{
	struct stat sb;

	return fstat(fd, &sb) == 0 && sb.st_size % (off_t)sizeof(struct rec)
	    == 0;
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
	if (flock(fd, LOCK_EX) != 0 || (!layout_ok(fd) &&
	    ftruncate(fd, 0) != 0))
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
	if (r.hour[m / 60 % SIGFAIL_HOURS] != m / 60) {
		r.hour[m / 60 % SIGFAIL_HOURS] = m / 60;
		r.hcount[m / 60 % SIGFAIL_HOURS] = 0;
	}
	if (r.hcount[m / 60 % SIGFAIL_HOURS] < UINT32_MAX)
		r.hcount[m / 60 % SIGFAIL_HOURS]++;
	rc = pwrite(fd, &r, sizeof(r), (off_t)(at * sizeof(r))) ==
	    (ssize_t)sizeof(r) ? IH_OK : IH_EIO;
out:
	if (rc != IH_OK)
		snprintf(err, errlen, "cannot count in %s: %s", path,
		    rc == IH_ENOTFOUND ? "no room" : strerror(errno));
	close(fd);
	return rc == IH_ENOTFOUND ? IH_OK : rc;
}

/* Adds the counts of r within (m - minutes, m] to *count and *first. */
static void
sum(const struct rec *r, int64_t m, long minutes, long *count,
    int64_t *first)
{
	size_t i;

	for (i = 0; minutes <= SIGFAIL_MINUTES && i < SIGFAIL_MINUTES; i++) {
		if (r->minute[i] <= m - minutes || r->minute[i] > m ||
		    r->count[i] == 0)
			continue;
		*count += (long)r->count[i];
		if (*first == 0 || r->minute[i] < *first)
			*first = r->minute[i];
	}
	/* Longer windows in whole hours, the current one included. */
	for (i = 0; minutes > SIGFAIL_MINUTES && i < SIGFAIL_HOURS; i++) {
		if (r->hour[i] <= (m - minutes) / 60 || r->hour[i] > m / 60 ||
		    r->hcount[i] == 0)
			continue;
		*count += (long)r->hcount[i];
		if (*first == 0 || r->hour[i] * 60 < *first)
			*first = r->hour[i] * 60;
	}
}

int
sigfail_count(struct store *st, const char *db_path, const char *provider,
    int64_t now_ms, long minutes, long *count, int64_t *first_ms, char *err,
    size_t errlen)
{
	char path[4200];
	struct rec r;
	int64_t m = now_ms / 60000, first = 0;
	size_t at;
	int fd, rc;

	*count = 0;
	*first_ms = 0;
	if (minutes > SIGFAIL_HOURS * 60)
		minutes = SIGFAIL_HOURS * 60;
	if (st != NULL) {
		rc = store_sigfail_count(st, provider, m - minutes, m, count,
		    &first, err, errlen);
		*first_ms = first * 60000;
		if (rc != IH_ENOTFOUND)
			return rc;
	}
	rc = path_of(db_path, path, sizeof(path));
	if (rc == IH_ENOTFOUND)
		return IH_OK;
	if (rc != IH_OK)
		return IH_EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 && errno == ENOENT)
		return IH_OK;
	if (fd < 0) {
		snprintf(err, errlen, "cannot open %s: %s", path,
		    strerror(errno));
		return IH_EIO;
	}
	rc = flock(fd, LOCK_SH) != 0 ? IH_EIO : !layout_ok(fd) ?
	    IH_ENOTFOUND : find(fd, provider, 0, &at, &r);
	if (rc == IH_OK)
		sum(&r, m, minutes, count, &first);
	*first_ms = first * 60000;
	close(fd);
	if (rc == IH_EIO)
		snprintf(err, errlen, "cannot read %s: %s", path,
		    strerror(errno));
	return rc == IH_ENOTFOUND ? IH_OK : rc;
}

int
sigfail_sums(struct store *st, const char *db_path, int64_t now_ms,
    store_sigfail_fn fn, void *arg, char *err, size_t errlen)
{
	char path[4200];
	struct rec r;
	int64_t m = now_ms / 60000, first;
	long hour, day;
	size_t i;
	int fd, rc;

	if (st != NULL) {
		rc = store_sigfail_sums(st, m - 60, m - SIGFAIL_HOURS * 60, m,
		    fn, arg, err, errlen);
		if (rc != IH_ENOTFOUND)
			return rc;
	}
	if (path_of(db_path, path, sizeof(path)) != IH_OK)
		return IH_OK;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return errno == ENOENT ? IH_OK : IH_EIO;
	rc = flock(fd, LOCK_SH) == 0 ? IH_OK : IH_EIO;
	for (i = 0; rc == IH_OK && layout_ok(fd) && i < SIGFAIL_PROVIDERS;
	    i++) {
		rc = rec_read(fd, i, &r);
		if (rc != IH_OK || r.provider[0] == '\0')
			continue;
		hour = day = 0;
		first = 0;
		sum(&r, m, SIGFAIL_MINUTES, &hour, &first);
		sum(&r, m, SIGFAIL_HOURS * 60, &day, &first);
		rc = fn(arg, r.provider, hour, day);
	}
	close(fd);
	if (rc == IH_EIO)
		snprintf(err, errlen, "cannot read %s: %s", path,
		    strerror(errno));
	return rc;
}
