/*
 * cli_verify.h -- idemhook verify: the stored signature checked again
 * (cli_verify.c).  The command takes its argv (argv[0] its name), prints
 * its output and its errors, and returns a CLI_EXIT_* code (idemhook.h).
 */
#ifndef IH_CLI_VERIFY_H
#define IH_CLI_VERIFY_H

#include "idemhook.h"

int	cli_verify(struct cli *c, int argc, char **argv);

#endif
