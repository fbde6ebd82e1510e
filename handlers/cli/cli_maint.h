/*
 * cli_maint.h -- idemhook purge and stats: retention and figures (cli_maint.c).
 * Each command takes its argv (argv[0] its name), prints its output and
 * its errors, and returns a CLI_EXIT_* code (idemhook.h).
 */
#ifndef IH_CLI_MAINT_H
#define IH_CLI_MAINT_H

#include "idemhook.h"

int	cli_purge(struct cli *c, int argc, char **argv);
int	cli_stats(struct cli *c, int argc, char **argv);

#endif
