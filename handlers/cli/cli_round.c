/*
 * cli_round.c -- idemhook work's jobs that call a provider's API, in a
 * thread of their own (cli_round.h).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "api_http.h"
#include "cli_round.h"
#include "cli_text.h"
#include "clock.h"
#include "ih.h"
#include "log.h"
#include "providers.h"
#include "store.h"

/* One round: each provider whose job is due.  Called with r->mu held. */
static void
round_once(struct cli_round *r)
{
	const struct config *cfg;
	size_t i;

	for (i = 0; providers_all[i] != NULL && i < CLI_MAX_PROVIDERS &&
	    !r->stop; i++) {
		if (r->only != NULL &&
		    strcmp(providers_all[i]->name, r->only) != 0)
			continue;
		if (r->at[i] != 0 && clock_wall_ms() - r->at[i] < r->every_ms)
			continue;
		r->at[i] = clock_wall_ms();
		if (cli_config(&r->c, i, &cfg) != IH_OK)
			continue;
		pthread_mutex_unlock(&r->mu);
		(void)r->job(r->arg, &r->c, i, log_dest_sink(&r->logd,
		    &log_stderr), &r->stop);
		pthread_mutex_lock(&r->mu);
	}
}

static void *
round_main(void *arg)
{
	struct cli_round *r = arg;
	struct timespec until;
	sigset_t set;

	/* The stop signals are the main thread's (its loop's flag). */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	pthread_mutex_lock(&r->mu);
	while (!r->stop) {
		round_once(r);
		if (r->once)
			break;
		/* Looked at again each second: intervals are whole seconds. */
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += 1;
		while (!r->stop && pthread_cond_timedwait(&r->cv, &r->mu,
		    &until) != ETIMEDOUT)
			;
	}
	pthread_mutex_unlock(&r->mu);
	return NULL;
}

int
cli_round_start(struct cli_round *r, struct cli *c, const char *only,
    int64_t every_ms, int once, cli_round_job job, void *arg)
{
	const struct config *cfg;
	struct api_http http;
	struct store *st;
	char err[256];
	size_t i;

	memset(r, 0, sizeof(*r));
	/* Loaded here, so that the thread only reads them. */
	for (i = 0; providers_all[i] != NULL && i < CLI_MAX_PROVIDERS; i++)
		if ((only == NULL || i == 0 ||
		    strcmp(providers_all[i]->name, only) == 0) &&
		    cli_config(c, i, &cfg) != IH_OK)
			return IH_ECONFIG;
	r->c = *c;
	r->c.st = NULL;
	r->only = only;
	r->every_ms = every_ms;
	r->once = once;
	r->job = job;
	r->arg = arg;
	log_dest_init(&r->logd);
	if (cli_config(c, 0, &cfg) == IH_OK &&
	    log_dest_set(&r->logd, cfg->log, err, sizeof(err)) != IH_OK)
		fprintf(stderr, "idemhook: %s\n", err);
	/* A connection of its own, out of the process's writer queue. */
	if (cli_store(&r->c, &st) == IH_OK)
		store_no_queue(st);
	/* libcurl's global start-up, which is not for two threads at once. */
	(void)api_http_init(&http);
	api_http_free(&http);
	pthread_mutex_init(&r->mu, NULL);
	pthread_cond_init(&r->cv, NULL);
	if (pthread_create(&r->thread, NULL, round_main, r) != 0) {
		cli_errorf("work: cannot start a thread for the API's calls");
		pthread_cond_destroy(&r->cv);
		pthread_mutex_destroy(&r->mu);
		if (r->c.st != NULL)
			store_close(r->c.st);
		log_dest_close(&r->logd);
		return IH_ENOMEM;
	}
	return IH_OK;
}

void
cli_round_end(struct cli_round *r, int finish)
{
	pthread_mutex_lock(&r->mu);
	if (!finish)
		r->stop = 1;
	pthread_cond_signal(&r->cv);
	pthread_mutex_unlock(&r->mu);
	pthread_join(r->thread, NULL);
	pthread_cond_destroy(&r->cv);
	pthread_mutex_destroy(&r->mu);
	if (r->c.st != NULL)
		store_close(r->c.st);
	log_dest_close(&r->logd);
}
