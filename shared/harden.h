/*
 * harden.h -- process protections every idemhook program applies first.
 *
 * The programs hold webhook secrets in memory for as long as they run.
 * A core dump, or another process of the same user reading this one's
 * memory (ptrace, /proc/<pid>/mem), would hand them out.  harden_process()
 * sets the core file size limit to 0 (RLIMIT_CORE, soft and hard) and
 * marks the process not dumpable (PR_SET_DUMPABLE 0 on Linux), which also
 * makes its /proc/<pid> files owned by root and refuses ptrace by anyone
 * without CAP_SYS_PTRACE.
 */
#ifndef IH_HARDEN_H
#define IH_HARDEN_H

#include <stddef.h>

/*
 * Applies the protections above.  Returns IH_OK, or IH_EIO with the
 * failing call in err; the caller logs it and carries on, since a
 * platform without prctl is no reason to refuse webhooks.
 */
int	harden_process(char *err, size_t errlen);

/*
 * Wipes, in place, the values of the secret variables (IDEMHOOK_*_SECRET*,
 * IDEMHOOK_*_TOKEN*, IDEMHOOK_*_API_KEY*, and the console's
 * IDEMHOOK_CONSOLE_KEY and IDEMHOOK_CONSOLE_PASSWORD_HASH) of env, an
 * environ-style array, once the program has
 * its own copy (config_vars_from_env): the process's original environment
 * block then no longer holds them, nor does /proc/<pid>/environ, nor
 * anything that inherits the environment.  Each becomes an empty value.
 */
void	harden_scrub_environ(char **env);

#endif
