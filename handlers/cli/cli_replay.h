/*
 * cli_replay.h -- idemhook replay: one event or a filtered set made
 * due again (cli_replay.c).  The command takes its argv (argv[0] its
 * name), prints its output and its errors, and returns a CLI_EXIT_*
 * code (idemhook.h).
 */
#ifndef IH_CLI_REPLAY_H
#define IH_CLI_REPLAY_H

#include "idemhook.h"

int	cli_replay(struct cli *c, int argc, char **argv);

#endif
