/*
 * cli_check_store.h -- idemhook check's findings about where the store
 * lives and whether it is sound (cli_check_store.c), called by
 * cli_check.c:
 *
 *   - cli_check_fs(): a SQLite store on a network or FUSE filesystem
 *     (statfs(2) of its folder), where WAL's shared memory is not shared
 *     between hosts and a durable commit can cost a large fraction of a
 *     second;
 *   - cli_check_store(): PRAGMA quick_check of the open store, and the
 *     age of the newest idemhook backup in IDEMHOOK_BACKUP_DIR against
 *     IDEMHOOK_BACKUP_MAX_AGE (default 36h);
 *   - cli_check_dests(): each forwarding destination's limits in these
 *     settings against its row in the store, which the last process to
 *     claim wrote: a difference means another process runs with other
 *     settings (a destination without a row yet is not compared).
 *
 * Each prints "ok: ..." or "PROBLEM: ..." lines, or "note: ..." for
 * what is not checked, as the rest of check does, and adds to
 * *problems and *oks.  Nothing is kept between calls.
 */
#ifndef IH_CLI_CHECK_STORE_H
#define IH_CLI_CHECK_STORE_H

#include <stdarg.h>

#include "idemhook.h"
#include "ih.h"

void	cli_check_fs(const char *db, int *problems, int *oks);
/* The line printer the check files share: "ok: " or "PROBLEM: ". */
void	cli_check_say(int good, int *problems, int *oks, const char *fmt,
	    ...) IH_PRINTF(4, 5);
/* The same with a va_list, for check's own printers (cli_check.c). */
void	cli_check_vsay(int good, int *problems, int *oks, const char *fmt,
	    va_list ap);
/* The console's sign-in settings (cli_check_console.c). */
void	cli_check_console(const struct cli *c, int *problems, int *oks);
void	cli_check_store(struct cli *c, struct store *st, int *problems,
	    int *oks);
/* For each provider i with checked[i] (CLI_MAX_PROVIDERS entries). */
void	cli_check_dests(struct cli *c, struct store *st, const int *checked,
	    int *problems, int *oks);

#endif
