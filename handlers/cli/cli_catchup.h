/*
 * cli_catchup.h -- idemhook catch-up: asks each provider's own API what
 * it sent, or tried to send, in a window, and records what the store
 * lacks (api_session.h says how, and the exit codes).  The command
 * only: the session is api_session.h, the providers' table
 * api_providers.h.
 */
#ifndef IH_CLI_CATCHUP_H
#define IH_CLI_CATCHUP_H

#include <signal.h>
#include <stddef.h>

#include "idemhook.h"
#include "log.h"

/* idemhook catch-up. */
int	cli_catchup(struct cli *c, int argc, char **argv);

/*
 * For idemhook work: releases the held events of providers_all[pi] that
 * its API confirms (api_session.h, struct api_provider's release), when
 * it has such an API and a key or App is set; nothing otherwise.  A
 * release, and a failure, is one line to log.  Returns IH_OK or the
 * release's code.  stop (may be NULL), once set, ends the API call in
 * flight.
 */
int	cli_catchup_release(struct cli *c, size_t pi,
	    const struct log_sink *log, const volatile sig_atomic_t *stop);

#endif
