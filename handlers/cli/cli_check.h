/*
 * cli_check.h -- idemhook check: the deployment audit (cli_check.c).
 * Each command takes its argv (argv[0] its name), prints its output and
 * its errors, and returns a CLI_EXIT_* code (idemhook.h).
 */
#ifndef IH_CLI_CHECK_H
#define IH_CLI_CHECK_H

#include "idemhook.h"

int	cli_check(struct cli *c, int argc, char **argv);

#endif
