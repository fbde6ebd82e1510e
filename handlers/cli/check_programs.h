/*
 * check_programs.h -- what idemhook check learns from the running
 * programs and the settings file's owner, beyond the settings: a
 * FastCGI program listening on TCP, where anyone who reaches the port can
 * send it requests (issue 24), one started with another store or
 * settings file than the command's (issue 25), and, for a check run as
 * root with no --user, the user the programs run as; the names
 * www-config/README.md gives the store's findings.  Programs reading
 * another settings file belong to another deployment and are left alone.
 *
 * They read /proc and the file system only; nothing is written or
 * signalled.  The programs make themselves non-dumpable, so only root
 * sees their sockets and environments: another user gets a note saying
 * so, not a verdict.  Lines go to stdout in check's form ("PROBLEM: ",
 * "ok: ", "note: ").
 */
#ifndef IH_CHECK_PROGRAMS_H
#define IH_CHECK_PROGRAMS_H

#include <stddef.h>

#include "store.h"

struct cli;

/*
 * Looks at every running idemhook program (<provider>.fcgi,
 * console.fcgi) in this PID namespace and prints one PROBLEM line for
 * each whose FastCGI socket (its fd 0) is a listening TCP socket, and for
 * each that reads this command's settings file but was started with an
 * IDEMHOOK_DB (its start-up environment) other than the store this
 * command uses: it would record where the command does not look.  An
 * ok or note line otherwise.  Returns the number of problems printed.
 */
int	check_programs(struct cli *c);

/*
 * For a check run as root with no --user: the owner of the settings file
 * at path when that is not root (the README installs it owned by the
 * programs' user), in name.  Returns name, or NULL (not root, no file, a
 * root-owned file, an unknown user).
 */
const char *check_programs_user(const char *path, char *name, size_t len);

/*
 * Where to move a store found under a document root: the system's
 * place (/var/lib/idemhook/idemhook.db) for root or a user who can write
 * it, else the shared-hosting one in the user's home, outside
 * public_html, as the README's shared-hosting recipe has it.
 */
const char *check_store_advice(void);

/*
 * A finding's value as www-config/README.md names it: SQLite's
 * synchronous level 2 or 1 as FULL or NORMAL (IDEMHOOK_SYNCHRONOUS's
 * names; SHARED commits run at FULL's level between their shared
 * fsyncs).  Other values as they are.
 */
const char *check_audit_value(const struct store_audit *a);

#endif
