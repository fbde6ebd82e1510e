/*
 * cli_copy.h -- idemhook copy: the store's events into PostgreSQL (cli_copy.c).
 * Each command takes its argv (argv[0] its name), prints its output and
 * its errors, and returns a CLI_EXIT_* code (idemhook.h).
 */
#ifndef IH_CLI_COPY_H
#define IH_CLI_COPY_H

#include "idemhook.h"

int	cli_copy(struct cli *c, int argc, char **argv);

#endif
