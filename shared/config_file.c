/*
 * config_file.c -- the settings file as a long-running program holds
 * it: read again only when its stamp changes, refused when a request
 * named a file its owner rule rejects.
 */
#include <sys/stat.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "config_file.h"
#include "config_vars.h"
#include "ih.h"

/* A file changed this recently may change again unseen in the same tick. */
#define CONFIG_RACY_NS	(2LL * 1000000000LL)

static void
stamp_of(const struct stat *sb, struct config_stamp *st)
{
	memset(st, 0, sizeof(*st));
	st->dev = sb->st_dev;
	st->ino = sb->st_ino;
	st->size = sb->st_size;
	st->mtim = sb->st_mtim;
	st->ctim = sb->st_ctim;
}

static int
stamp_equal(const struct config_stamp *a, const struct config_stamp *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	    a->mtim.tv_sec == b->mtim.tv_sec &&
	    a->mtim.tv_nsec == b->mtim.tv_nsec &&
	    a->ctim.tv_sec == b->ctim.tv_sec &&
	    a->ctim.tv_nsec == b->ctim.tv_nsec;
}

/*
 * Was the file changed so recently that a later edit could keep every
 * field of the stamp?  File times advance in clock ticks (or seconds on
 * some file systems), so a same-size rewrite within one tick is
 * invisible; such a stamp is not trusted and the file is read again.
 */
static int
stamp_racy(const struct config_stamp *st)
{
	long long t, m, c;

	/* A clock that cannot be read gives 0: the stamp is not trusted. */
	t = (long long)clock_wall_ns();
	m = (long long)st->mtim.tv_sec * 1000000000LL + st->mtim.tv_nsec;
	c = (long long)st->ctim.tv_sec * 1000000000LL + st->ctim.tv_nsec;
	return t - m < CONFIG_RACY_NS || t - c < CONFIG_RACY_NS;
}

/* The owner of the running program file, or (uid_t)-1. */
static uid_t
program_owner(void)
{
	struct stat sb;

	if (stat("/proc/self/exe", &sb) != 0)
		return (uid_t)-1;
	return sb.st_uid;
}

/* CONFIG_FILE_REQUEST's rule: see config.h. */
static int
check_owner(const struct stat *sb, const char *path, char *err,
    size_t errlen)
{
	if (S_ISREG(sb->st_mode) && (sb->st_mode & 022) == 0 &&
	    (sb->st_uid == 0 || sb->st_uid == geteuid() ||
	    sb->st_uid == program_owner()))
		return IH_OK;
	snprintf(err, errlen, "a config named by a request parameter must be "
	    "a file writable only by its owner (root, this program's user or "
	    "its owner): %s", path);
	return IH_EAUTH;
}

void
config_file_free(struct config_file *cf)
{
	unsigned long gen = cf->gen;

	config_vars_free(&cf->vars);
	free(cf->path);
	memset(cf, 0, sizeof(*cf));
	cf->gen = gen + 1;
}

int
config_file_refresh(struct config_file *cf, const char *path, int flags,
    int *reloaded, char *err, size_t errlen)
{
	struct config_stamp now;
	struct config_vars fresh;
	struct stat sb;
	char *copy = NULL;
	int fd = -1, rc;

	if (reloaded != NULL)
		*reloaded = 0;
	if (path == NULL || *path == '\0') {
		if (cf->path != NULL)
			config_file_free(cf);
		return IH_OK;
	}
	if (cf->path != NULL && strcmp(cf->path, path) == 0 &&
	    cf->flags == flags && !cf->racy) {
		if (stat(path, &sb) != 0) {
			rc = errno == ENOENT ? IH_ENOTFOUND : IH_EIO;
			snprintf(err, errlen, "cannot open config %s: %s",
			    path, strerror(errno));
			goto out;
		}
		stamp_of(&sb, &now);
		if (stamp_equal(&now, &cf->stamp))
			return IH_OK;
	}
	/* The stamp comes from the descriptor that is read, before reading. */
	rc = config_vars_open(path, &fd, err, errlen);
	if (rc != IH_OK)
		goto out;
	if (fstat(fd, &sb) != 0) {
		rc = IH_EIO;
		snprintf(err, errlen, "cannot stat config %s: %s", path,
		    strerror(errno));
		goto out;
	}
	if ((flags & CONFIG_FILE_REQUEST) != 0) {
		rc = check_owner(&sb, path, err, errlen);
		if (rc != IH_OK)
			goto out;
	}
	copy = strdup(path);
	if (copy == NULL) {
		rc = IH_ENOMEM;
		goto out;
	}
	rc = config_vars_from_fd(&fresh, fd, path, err, errlen);
	if (rc != IH_OK)
		goto out;
	config_file_free(cf);
	cf->vars = fresh;
	cf->path = copy;
	copy = NULL;
	cf->flags = flags;
	stamp_of(&sb, &cf->stamp);
	cf->racy = stamp_racy(&cf->stamp);
	if (reloaded != NULL)
		*reloaded = 1;
out:
	if (fd >= 0)
		close(fd);
	free(copy);
	/* Fail closed: old lines and their secrets do not outlive the file. */
	if (rc != IH_OK)
		config_file_free(cf);
	return rc;
}
