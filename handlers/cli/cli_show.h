/*
 * cli_show.h -- idemhook show: one event, as text, raw bytes or JSON
 * (cli_show.c).  The command takes its argv (argv[0] its name), prints
 * its output and its errors, and returns a CLI_EXIT_* code (idemhook.h).
 */
#ifndef IH_CLI_SHOW_H
#define IH_CLI_SHOW_H

#include "idemhook.h"

int	cli_show(struct cli *c, int argc, char **argv);

#endif
