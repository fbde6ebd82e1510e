/*
 * cli_backups.c -- the backup files of a folder: the newest, and the
 * rotation of backup --keep (cli_backups.h).
 */
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli_backups.h"
#include "cli_text.h"
#include "clock.h"
#include "ih.h"

/* idemhook-20240501T120000Z.db */
#define BACKUP_NAME_LEN	(sizeof(CLI_BACKUP_PREFIX) - 1 + 16 + \
	sizeof(CLI_BACKUP_SUFFIX) - 1)
#define BACKUP_PATH	4096
/* A name this far ahead of the clock is called a future one. */
#define BACKUP_SKEW_MS	(5 * 60 * 1000)

struct backup {
	char	*name;
	int64_t	 named_ms;	/* the time in its name */
	int64_t	 age_ms;	/* the earlier of that and its mtime; 0 */
	int	 future;	/* named or written after now (+ skew) */
};

/* Whether name is one of ours; *ms the time it names. */
static int
backup_name(const char *name, int64_t *ms)
{
	const char *s = name + sizeof(CLI_BACKUP_PREFIX) - 1;
	struct tm tm;
	size_t i;

	if (strlen(name) != BACKUP_NAME_LEN ||
	    strncmp(name, CLI_BACKUP_PREFIX, sizeof(CLI_BACKUP_PREFIX) - 1) !=
	    0 || strcmp(s + 16, CLI_BACKUP_SUFFIX) != 0 || s[8] != 'T' ||
	    s[15] != 'Z')
		return 0;
	for (i = 0; i < 15; i++)
		if (i != 8 && (s[i] < '0' || s[i] > '9'))
			return 0;
	memset(&tm, 0, sizeof(tm));
	tm.tm_year = (s[0] - '0') * 1000 + (s[1] - '0') * 100 +
	    (s[2] - '0') * 10 + (s[3] - '0') - 1900;
	tm.tm_mon = (s[4] - '0') * 10 + (s[5] - '0') - 1;
	tm.tm_mday = (s[6] - '0') * 10 + (s[7] - '0');
	tm.tm_hour = (s[9] - '0') * 10 + (s[10] - '0');
	tm.tm_min = (s[11] - '0') * 10 + (s[12] - '0');
	tm.tm_sec = (s[13] - '0') * 10 + (s[14] - '0');
	*ms = (int64_t)timegm(&tm) * 1000;
	return 1;
}

static int
age_cmp(const void *a, const void *b)
{
	const struct backup *x = a, *y = b;

	/* Newest first; equal ages by name, newest name first. */
	if (x->age_ms != y->age_ms)
		return x->age_ms > y->age_ms ? -1 : 1;
	return strcmp(y->name, x->name);
}

static void
free_list(struct backup *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i].name);
	free(v);
}

/*
 * Our backup files in dir, newest first, into *out (freed with
 * free_list()).  One whose name and mtime both lie after now_ms has no
 * age to trust: 0, the oldest.  Returns IH_OK, IH_ENOMEM, IH_EIO (errno
 * set).
 */
static int
list_backups(const char *dir, int64_t now_ms, struct backup **out,
    size_t *np)
{
	struct backup *v = NULL, *more;
	struct dirent *de;
	struct stat sb;
	size_t n = 0, cap = 0;
	int64_t ms, mt;
	DIR *d;
	int rc = IH_OK;

	*out = NULL;
	*np = 0;
	d = opendir(dir);
	if (d == NULL)
		return IH_EIO;
	for (;;) {
		de = readdir(d);
		if (de == NULL)
			break;
		if (!backup_name(de->d_name, &ms))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			more = realloc(v, cap * sizeof(*v));
			if (more == NULL) {
				rc = IH_ENOMEM;
				goto out;
			}
			v = more;
		}
		v[n].name = strdup(de->d_name);
		if (v[n].name == NULL) {
			rc = IH_ENOMEM;
			goto out;
		}
		v[n].named_ms = ms;
		v[n].age_ms = ms;
		mt = 0;
		if (fstatat(dirfd(d), de->d_name, &sb,
		    AT_SYMLINK_NOFOLLOW) == 0) {
			mt = (int64_t)sb.st_mtim.tv_sec * 1000 +
			    sb.st_mtim.tv_nsec / 1000000;
			if (mt < ms)
				v[n].age_ms = mt;
		}
		v[n].future = ms > now_ms + BACKUP_SKEW_MS ||
		    mt > now_ms + BACKUP_SKEW_MS;
		if (v[n].age_ms > now_ms + BACKUP_SKEW_MS)
			v[n].age_ms = 0;
		n++;
	}
	if (n > 0)
		qsort(v, n, sizeof(*v), age_cmp);
out:
	closedir(d);
	if (rc != IH_OK) {
		free_list(v, n);
		return rc;
	}
	*out = v;
	*np = n;
	return IH_OK;
}

int
cli_backup_newest(const char *dir, int64_t now_ms, char *name, size_t len,
    int64_t *when_ms, char *future, size_t flen, int64_t *future_ms)
{
	struct backup *v;
	size_t n, i;
	int rc;

	future[0] = '\0';
	*future_ms = 0;
	rc = list_backups(dir, now_ms, &v, &n);
	if (rc != IH_OK)
		return rc;
	rc = IH_ENOTFOUND;
	for (i = 0; i < n; i++) {
		if (v[i].future && future[0] == '\0') {
			snprintf(future, flen, "%s", v[i].name);
			*future_ms = v[i].named_ms;
		}
		if (rc == IH_ENOTFOUND && v[i].age_ms > 0) {
			snprintf(name, len, "%s", v[i].name);
			*when_ms = v[i].age_ms;
			rc = IH_OK;
		}
	}
	free_list(v, n);
	return rc;
}

int
cli_backups_rotate(const char *dir, long keep, const char *just, int json)
{
	struct backup *v;
	char path[BACKUP_PATH];
	size_t n, i;
	long kept = 0, removed = 0;
	int rc;

	rc = list_backups(dir, clock_wall_ms(), &v, &n);
	if (rc != IH_OK)
		return rc;
	for (i = 0; i < n; i++) {
		/* The one just written is kept, and takes one of the places. */
		if (strcmp(v[i].name, just) == 0)
			continue;
		if (kept < keep - 1) {
			kept++;
			continue;
		}
		snprintf(path, sizeof(path), "%s/%s", dir, v[i].name);
		if (unlink(path) != 0) {
			cli_errorf("backup: cannot remove the old backup "
			    "%s: %s", path, strerror(errno));
			continue;
		}
		if (json) {
			printf("%s", removed > 0 ? "," : "");
			cli_put_json(stdout, v[i].name);
		} else
			cli_printf(stdout, "removed the old backup %s\n",
			    v[i].name);
		removed++;
	}
	free_list(v, n);
	return IH_OK;
}
