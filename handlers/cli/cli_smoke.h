/*
 * cli_smoke.h -- idemhook smoke: a signed test event posted to an
 * endpoint through the web server, its answers checked (cli_smoke.c);
 * --list and --purge for the test events.  The command takes its argv
 * (argv[0] its name), prints its output and its errors, and returns a
 * CLI_EXIT_* code (idemhook.h).
 */
#ifndef IH_CLI_SMOKE_H
#define IH_CLI_SMOKE_H

#include "idemhook.h"

int	cli_smoke(struct cli *c, int argc, char **argv);

#endif
