/*
 * cli_events.h -- idemhook list, show, verify and replay: the
 * operator's view of single events (cli_events.c).
 * Each command takes its argv (argv[0] its name), prints its output and
 * its errors, and returns a CLI_EXIT_* code (idemhook.h).
 */
#ifndef IH_CLI_EVENTS_H
#define IH_CLI_EVENTS_H

#include "idemhook.h"

int	cli_list(struct cli *c, int argc, char **argv);
int	cli_show(struct cli *c, int argc, char **argv);
int	cli_verify(struct cli *c, int argc, char **argv);
int	cli_replay(struct cli *c, int argc, char **argv);

#endif
