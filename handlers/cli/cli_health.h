/*
 * cli_health.h -- idemhook health: the endpoint as each provider sees it,
 * through the same session as catch-up (api_session.h), and the same
 * checks run by idemhook work (IDEMHOOK_HEALTH_INTERVAL) with alerts.
 * Each result is kept in the store (store_health.h) for the console.
 */
#ifndef IH_CLI_HEALTH_H
#define IH_CLI_HEALTH_H

#include <stddef.h>

#include "idemhook.h"
#include "log.h"

/* idemhook health. */
int	cli_health(struct cli *c, int argc, char **argv);

/*
 * For idemhook work (IDEMHOOK_HEALTH_INTERVAL): the health checks of
 * providers_all[pi], when it has an API and a key, without output; a
 * problem runs the alert (reason "endpoint") unless last (lastlen bytes,
 * the findings last alerted, "" at first) holds the same findings.
 * Every run logs one line to log.  Returns IH_OK; a failed check is
 * logged, not returned.
 */
int	cli_health_alert(struct cli *c, size_t pi, char *last, size_t lastlen,
	    const struct log_sink *log);

#endif
