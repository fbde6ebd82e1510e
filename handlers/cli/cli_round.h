/*
 * cli_round.h -- a job of idemhook work run per provider in a thread of
 * its own (the health checks, the release of GitHub's held repeats), so
 * that a slow provider API (each call waits up to IDEMHOOK_API_TIMEOUT,
 * and retries) never holds up the processing of any provider's events.
 * The thread has its own store connection and log; it reads c's
 * settings, which cli_round_start() loads first and which no one
 * changes while it runs.  Each provider (only that one when only is not
 * NULL) is run every every_ms milliseconds (looked at each second), or
 * once with once.
 */
#ifndef IH_CLI_ROUND_H
#define IH_CLI_ROUND_H

#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "idemhook.h"
#include "log.h"

/*
 * The job for providers_all[pi], with the thread's settings and store
 * (c) and log; stop, once set, ends the API call in flight.  arg is the
 * caller's, given to cli_round_start().  Its return is ignored: a
 * failure is the job's to log.
 */
typedef int	(*cli_round_job)(void *arg, struct cli *c, size_t pi,
		    const struct log_sink *log,
		    const volatile sig_atomic_t *stop);

struct cli_round {
	struct cli	 c;		/* c's settings; its own store */
	const char	*only;
	int64_t		 every_ms;
	int		 once;
	cli_round_job	 job;
	void		*arg;
	pthread_t	 thread;
	pthread_mutex_t	 mu;
	pthread_cond_t	 cv;
	volatile sig_atomic_t stop;
	int64_t		 at[CLI_MAX_PROVIDERS];
	struct log_dest	 logd;
};

/*
 * Starts r's thread.  Returns IH_OK, IH_ECONFIG (settings that do not
 * load: printed) or IH_ENOMEM; r needs cli_round_end() only on IH_OK.
 */
int	cli_round_start(struct cli_round *r, struct cli *c, const char *only,
	    int64_t every_ms, int once, cli_round_job job, void *arg);

/*
 * Ends r's thread: with finish, once its round is over (--once); else
 * at once, its API call in flight stopped.  Frees what r holds.
 */
void	cli_round_end(struct cli_round *r, int finish);

#endif
