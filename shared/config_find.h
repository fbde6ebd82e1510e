/*
 * config_find.h -- where the settings file is when IDEMHOOK_CONFIG is unset.
 *
 * suEXEC (shared hosting) drops SetEnv variables, so a program may get no
 * setting at all.  Then, and only then (config_find_wanted()), it looks,
 * in this order, at
 *
 *   <home>/idemhook/idemhook.env   <home> from the password database for
 *                                  the process's effective user (not
 *                                  $HOME, which suEXEC and cron may drop)
 *   /etc/idemhook/idemhook.env
 *
 * and takes the first that exists.  A file found this way is used only
 * when it is a regular file owned by the process's user or by root and
 * not writable by group or others: anyone who can write it could set the
 * actions, which run commands.  An unsafe file is an error, not skipped,
 * so that a wrong owner or mode is reported rather than silently ignored.
 */
#ifndef IH_CONFIG_FIND_H
#define IH_CONFIG_FIND_H

#include <stddef.h>

struct config_vars;

#define CONFIG_FIND_USER	"idemhook/idemhook.env"	/* under <home> */
#define CONFIG_FIND_SYSTEM	"/etc/idemhook/idemhook.env"

/*
 * Are the fixed places to be looked at?  Only when env, the start-up
 * environment, sets no IDEMHOOK_* variable to a non-empty value (an
 * empty value counts as unset everywhere): a program configured at
 * start-up is configured there and by the file it names, and a file
 * nobody named must not layer its settings, actions included, under
 * those, nor fail a program that never needed it.
 */
int	config_find_wanted(const struct config_vars *env);

/*
 * Looks for the settings file as above.  Returns IH_OK with its path in
 * out; IH_ENOTFOUND when no candidate exists; IH_ECONFIG (cause in err)
 * when the first existing candidate is unsafe or cannot be examined.
 */
int	config_find(char *out, size_t outlen, char *err, size_t errlen);

/*
 * The name and home of the user uid: /etc/passwd first (fgetpwent, which
 * needs no NSS module, so a static build works on any host), then
 * getpwuid(3).  Returns IH_OK or IH_ENOTFOUND.
 */
int	config_find_user(unsigned uid, char *name, size_t namelen, char *home,
	    size_t homelen);

/*
 * Checks that path is a regular file owned by uid or root and not
 * writable by group or others.  Returns IH_OK, IH_ENOTFOUND, or
 * IH_ECONFIG with the cause in err.
 */
int	config_find_safe(const char *path, unsigned uid, char *err,
	    size_t errlen);

#endif
