/*
 * account_name.c -- accounts' names (account_name.h): the rule, the
 * default account, and the account of a request's URL.
 */
#include <stdio.h>
#include <string.h>

#include "account_name.h"
#include "ih.h"

int
account_name_ok(const char *name)
{
	size_t i;

	if (name == NULL)
		return 0;
	for (i = 0; name[i] != '\0'; i++) {
		if (i >= ACCOUNT_NAME_MAX)
			return 0;
		if (!(name[i] >= 'a' && name[i] <= 'z') &&
		    !(name[i] >= '0' && name[i] <= '9') &&
		    name[i] != '_' && name[i] != '-')
			return 0;
	}
	return i > 0;
}

const char *
account_or_default(const char *name)
{
	return name != NULL && *name != '\0' ? name : ACCOUNT_DEFAULT;
}

int
account_from_path(const char *path_info, char *out, size_t outlen)
{
	size_t len;

	if (outlen < ACCOUNT_NAME_MAX + 1)
		return IH_EINVAL;
	if (path_info == NULL || path_info[0] == '\0' ||
	    strcmp(path_info, "/") == 0) {
		snprintf(out, outlen, "%s", ACCOUNT_DEFAULT);
		return IH_OK;
	}
	if (path_info[0] != '/')
		return IH_EINVAL;
	path_info++;
	len = strlen(path_info);
	if (len > 0 && path_info[len - 1] == '/')
		len--;
	if (len == 0 || len > ACCOUNT_NAME_MAX)
		return IH_EINVAL;
	memcpy(out, path_info, len);
	out[len] = '\0';
	return account_name_ok(out) ? IH_OK : IH_EINVAL;
}
