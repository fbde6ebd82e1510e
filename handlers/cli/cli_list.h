/*
 * cli_list.h -- idemhook list: events, newest first, as a table or JSON
 * (cli_list.c).  The command takes its argv (argv[0] its name), prints
 * its output and its errors, and returns a CLI_EXIT_* code (idemhook.h).
 */
#ifndef IH_CLI_LIST_H
#define IH_CLI_LIST_H

#include "idemhook.h"

int	cli_list(struct cli *c, int argc, char **argv);

#endif
