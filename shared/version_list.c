/* version_list.c -- the versions a switch is written for, as a list. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ih.h"
#include "version_list.h"

int
version_ok(const char *v, size_t len)
{
	size_t i;

	if (len == 0 || len >= VERSION_MAX)
		return 0;
	for (i = 0; i < len; i++)
		if (!isalnum((unsigned char)v[i]) && v[i] != '.' &&
		    v[i] != '_' && v[i] != '-')
			return 0;
	return 1;
}

int
version_list(const char *name, const char *v, char **out, char *err,
    size_t errlen)
{
	char list[VERSION_LIST_MAX * VERSION_MAX];
	const char *p;
	size_t len, used = 0, n = 0;
	int k;

	list[0] = '\0';
	for (p = v; *p != '\0'; p += len) {
		p += strspn(p, ", \t");
		len = strcspn(p, ", \t");
		if (len == 0)
			continue;
		if (!version_ok(p, len) || ++n > VERSION_LIST_MAX) {
			snprintf(err, errlen, "%s must list at most %d "
			    "versions of letters, digits, '.', '_' and '-'",
			    name, VERSION_LIST_MAX);
			return IH_ECONFIG;
		}
		k = snprintf(list + used, sizeof(list) - used, "%s%.*s",
		    used > 0 ? "," : "", (int)len, p);
		used += (size_t)k;
	}
	if (n == 0) {
		snprintf(err, errlen, "%s names no version", name);
		return IH_ECONFIG;
	}
	*out = strdup(list);
	return *out != NULL ? IH_OK : IH_ENOMEM;
}

int
version_expected(const char *list, const char *v)
{
	const char *p;
	size_t len, vlen;

	if (list == NULL)
		return 1;
	if (v == NULL || *v == '\0')
		return 0;
	vlen = strlen(v);
	for (p = list; *p != '\0'; p += len + (p[len] == ',')) {
		len = strcspn(p, ",");
		if (len == vlen && memcmp(p, v, len) == 0)
			return 1;
	}
	return 0;
}
