/*
 * cli_health.h -- idemhook health: the endpoint as each provider sees it,
 * through the same session as catch-up (api_session.h), and the same
 * checks run by idemhook work (IDEMHOOK_HEALTH_INTERVAL) with alerts.
 * Each result is kept in the store (store_health.h) for the console.
 */
#ifndef IH_CLI_HEALTH_H
#define IH_CLI_HEALTH_H

#include <signal.h>
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
 * Every run logs one line to log.  stop (may be NULL), once set, ends
 * the API call in flight.  Returns IH_OK; a failed check is logged, not
 * returned.
 */
int	cli_health_alert(struct cli *c, size_t pi, char *last, size_t lastlen,
	    const struct log_sink *log, const volatile sig_atomic_t *stop);

/* What cli_health_job() last alerted, for each provider ("" at first). */
struct cli_health_last {
	char	last[CLI_MAX_PROVIDERS][1024];
};

/*
 * cli_health_alert() as idemhook work's job in a thread of its own
 * (cli_round.h, IDEMHOOK_HEALTH_INTERVAL); arg is a struct
 * cli_health_last.
 */
int	cli_health_job(void *arg, struct cli *c, size_t pi,
	    const struct log_sink *log, const volatile sig_atomic_t *stop);

#endif
