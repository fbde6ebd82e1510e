/*
 * cli_console.h -- idemhook console-password: the console's password
 * hash (cli_console.c).
 * Each command takes its argv (argv[0] its name), prints its output and
 * its errors, and returns a CLI_EXIT_* code (idemhook.h).
 */
#ifndef IH_CLI_CONSOLE_H
#define IH_CLI_CONSOLE_H

#include "idemhook.h"

int	cli_console_password(struct cli *c, int argc, char **argv);

#endif
