/*
 * cli_check_files.h -- idemhook check's audit of the settings that name
 * files or shape logging, called by cli_check.c (kept apart from it):
 *
 *   - IDEMHOOK_GITHUB_APP_KEY_FILE, the GitHub App's private key, is a
 *     secret file like the settings file: a regular file, not a symbolic
 *     link, readable by its owner only, owned by the user running the
 *     check or the programs' user (--user);
 *   - a plain CGI layout (the receivers run as CGI programs: an
 *     .htaccess with "cgi-script" under a document root, fcgiwrap
 *     running, or the settings file found in its fixed place, as under
 *     suEXEC) whose processing runs after the answer needs IDEMHOOK_LOG:
 *     the detached child that processes has its stderr on /dev/null, so
 *     it logs nowhere else;
 *   - IDEMHOOK_CONSOLE_TRUSTED_PROXY, when set, is one IP address.
 *
 * Prints "ok: ", "note: " or "PROBLEM: " lines and adds to *problems
 * and *oks; never prints a secret.
 */
#ifndef IH_CLI_CHECK_FILES_H
#define IH_CLI_CHECK_FILES_H

#include <sys/types.h>

#include "idemhook.h"

/*
 * user is the programs' user (--user) when has_user; docroots (n of
 * them) are the document roots check was given.
 */
void	cli_check_files(struct cli *c, int has_user, uid_t user,
	    const char *const *docroots, size_t n, int *problems, int *oks);

#endif
