/*
 * cli_health.h -- idemhook health: the endpoint as each provider sees it,
 * through the same session as catch-up (api_session.h), and the same
 * checks run by idemhook work (IDEMHOOK_HEALTH_INTERVAL) with alerts.
 * Each result is kept in the store (store_health.h) for the console.
 */
#ifndef IH_CLI_HEALTH_H
#define IH_CLI_HEALTH_H

#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>

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

/*
 * idemhook work's health checks, in a thread of their own, so that a
 * slow provider API (each call waits up to IDEMHOOK_API_TIMEOUT, and
 * retries) never holds up the processing of any provider's events.  The
 * thread has its own store connection and log; it reads c's settings,
 * which cli_health_start() loads first and which no one changes while
 * it runs.  Each provider (only that one when only is not NULL) is
 * checked every every_s seconds, or once with once.
 */
struct cli_health_round {
	struct cli	 c;		/* c's settings; its own store */
	const char	*only;
	long		 every_s;
	int		 once;
	pthread_t	 thread;
	pthread_mutex_t	 mu;
	pthread_cond_t	 cv;
	volatile sig_atomic_t stop;
	int64_t		 at[CLI_MAX_PROVIDERS];
	char		 last[CLI_MAX_PROVIDERS][1024];
	struct log_dest	 logd;
};

/*
 * Starts hr's thread.  Returns IH_OK, IH_ECONFIG (settings that do not
 * load: printed) or IH_ENOMEM; hr needs cli_health_end() only on IH_OK.
 */
int	cli_health_start(struct cli_health_round *hr, struct cli *c,
	    const char *only, long every_s, int once);

/*
 * Ends hr's thread: with finish, once its round is over (--once); else
 * at once, its API call in flight stopped.  Frees what hr holds.
 */
void	cli_health_end(struct cli_health_round *hr, int finish);

#endif
