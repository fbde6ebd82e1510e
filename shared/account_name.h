/*
 * account_name.h -- accounts' names (account.h tells what an account
 * is): a name matches [a-z0-9_-]{1,32}, ACCOUNT_DEFAULT is the implicit
 * account of an installation without accounts, and a request's URL
 * (PATH_INFO) names its account.  This sits below the settings
 * (config.h, config_vars.h) and knows none of them, so that they can
 * check a name.  Nothing here allocates or keeps a pointer.
 */
#ifndef IH_ACCOUNT_NAME_H
#define IH_ACCOUNT_NAME_H

#include <stddef.h>

#define ACCOUNT_NAME_MAX	32
#define ACCOUNT_DEFAULT		"default"

/* 1 when name matches [a-z0-9_-]{1,32}, else 0. */
int	account_name_ok(const char *name);

/* name, or ACCOUNT_DEFAULT for NULL or "". */
const char *account_or_default(const char *name);

/*
 * The account named by a request's PATH_INFO into out (at least
 * ACCOUNT_NAME_MAX + 1 bytes): NULL, "" or "/" name the default account,
 * "/name" (one trailing slash allowed) the account name.  Returns IH_OK,
 * or IH_EINVAL for anything else (another segment, a bad name).
 */
int	account_from_path(const char *path_info, char *out, size_t outlen);

#endif
