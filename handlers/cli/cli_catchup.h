/*
 * cli_catchup.h -- idemhook catch-up: asks each provider's own API what
 * it sent, or tried to send, in a window, and records what the store
 * lacks (api_session.h says how, and the exit codes).  The command
 * only: the session is api_session.h, the providers' table
 * api_providers.h.
 */
#ifndef IH_CLI_CATCHUP_H
#define IH_CLI_CATCHUP_H

#include "idemhook.h"

/* idemhook catch-up. */
int	cli_catchup(struct cli *c, int argc, char **argv);

#endif
