/*
 * docroot.c -- path resolution and containment for the document-root
 * rule (docroot.h).
 */

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "docroot.h"

int
docroot_resolve(const char *path, char *out, size_t len)
{
	char dir[PATH_MAX], real[PATH_MAX];
	const char *slash;
	size_t n;

	if (realpath(path, real) != NULL)
		return snprintf(out, len, "%s", real) < (int)len ? 0 : -1;
	slash = strrchr(path, '/');
	if (slash == NULL)
		return -1;
	n = (size_t)(slash - path);
	if (n == 0)
		n = 1;
	if (n >= sizeof(dir))
		return -1;
	memcpy(dir, path, n);
	dir[n] = '\0';
	/* A store whose directory is not made yet: compare it as written. */
	if (realpath(dir, real) == NULL)
		return snprintf(out, len, "%s", path) < (int)len ? 0 : -1;
	return snprintf(out, len, "%s/%s", strcmp(real, "/") == 0 ? "" : real,
	    slash + 1) < (int)len ? 0 : -1;
}

int
docroot_contains(const char *dir, const char *path)
{
	size_t len = strlen(dir);

	while (len > 1 && dir[len - 1] == '/')
		len--;
	if (strncmp(path, dir, len) != 0)
		return 0;
	return path[len] == '/' || path[len] == '\0' || len == 1;
}
