/*
 * cli_backup.h -- idemhook backup and restore (cli_backup.c): a checked,
 * consistent copy of the live SQLite store, and putting one back while
 * nothing holds the store; on PostgreSQL the pg_dump and pg_restore
 * commands to run instead, after checking that the server answers.
 *
 * Each command takes its argv (argv[0] its name), prints its output and
 * its errors, and returns a CLI_EXIT_* code (idemhook.h).  The backup
 * files of a folder are named idemhook-<UTC time>.db (cli_backups.h).
 * As root, each runs as the user who owns the folder it writes in
 * (cli_owner.h).  Nothing here allocates beyond the call.
 */
#ifndef IH_CLI_BACKUP_H
#define IH_CLI_BACKUP_H

#include <stddef.h>
#include <stdint.h>

#include "idemhook.h"

int	cli_backup(struct cli *c, int argc, char **argv);
int	cli_restore(struct cli *c, int argc, char **argv);

#endif
