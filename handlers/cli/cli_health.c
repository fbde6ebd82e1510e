/*
 * cli_health.c -- idemhook health: the endpoint as each provider sees it
 * (Stripe's endpoint status, GitHub's hook, Asaas's queue, Shopify's
 * subscriptions), through the same credentials and client as catch-up.
 * A problem runs IDEMHOOK_ALERT_ACTION with IDEMHOOK_ALERT_REASON
 * "endpoint", as idemhook work does for dead events and silences.  Each
 * result is kept in the store (store_health.h) for the console's
 * overview.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "alert.h"
#include "api_http.h"
#include "api_providers.h"
#include "api_session.h"
#include "cli_args.h"
#include "cli_health.h"
#include "cli_text.h"
#include "clock.h"
#include "ih.h"
#include "log.h"
#include "providers.h"
#include "store_health.h"

static void
usage(FILE *f)
{
	fprintf(f, "usage: idemhook health [--provider P]... [--json]\n\n"
	    "Reads the endpoint's state on each provider's side, with the\n"
	    "provider's API key (IDEMHOOK_<P>_API_KEY):\n"
	    "  stripe   each webhook endpoint's status (disabled?), URL and "
	    "API version\n"
	    "  github   each hook's active flag and last response\n"
	    "  asaas    each webhook's queue: interrupted, penalized events\n"
	    "  shopify  subscriptions missing from IDEMHOOK_SHOPIFY_TOPICS\n"
	    "  standard Standard Webhooks defines no API: nothing to read\n"
	    "A problem runs IDEMHOOK_ALERT_ACTION (reason \"endpoint\").\n"
	    "Exit: 0 healthy, 1 a call failed, 2 usage or configuration "
	    "(a key refused), 3 a problem found.\n");
}

/*
 * Keeps the result in the store for the console, which holds no API
 * key (store_health.h): the problem lines, or why the check failed.
 */
static void
keep(struct catchup *cu, const struct health *h, int rc, const char *text)
{
	struct store_health sh;
	char err[STORE_ERR_MAX];

	if (cu->st == NULL)
		return;
	memset(&sh, 0, sizeof(sh));
	sh.provider = cu->p->name;
	sh.checked_at = clock_wall_ms();
	sh.outcome = rc == IH_ECONFIG ? "refused" : rc != IH_OK ? "failed" :
	    h->problems > 0 ? "problem" : "ok";
	sh.problems = h->problems;
	sh.findings = rc != IH_OK ? cu->err : text;
	if (store_health_put(cu->st, &sh, err, sizeof(err)) != IH_OK)
		log_emit(log_dest_sink(&cu->w.logd, &log_stderr), "health "
		    "provider=%s cannot be kept in the store: %s",
		    cu->p->name, err);
}

/* The findings: terminal or JSON, the alert, and one log line. */
static void
report(struct catchup *cu, const struct health *h, int json, int first,
    int ex)
{
	char text[HEALTH_MAX * (HEALTH_LINE_MAX + 1)];
	size_t i, len = 0;

	if (json) {
		printf("%s{\"provider\":", first ? "" : ",");
		cli_put_json(stdout, cu->p->name);
		printf(",\"problems\":%d,\"findings\":[", h->problems);
		for (i = 0; i < h->n; i++) {
			printf("%s{\"problem\":%s,\"text\":", i ? "," : "",
			    h->problem[i] ? "true" : "false");
			cli_put_json(stdout, h->line[i]);
			printf("}");
		}
		printf("],\"error\":");
		if (ex == 1 || ex == 2)
			cli_put_json(stdout, cu->err);
		else
			printf("null");
		printf("}");
	} else {
		for (i = 0; i < h->n; i++)
			cli_printf(stdout, "%s %s\n", h->problem[i] ?
			    "PROBLEM" : "ok     ", h->line[i]);
		if (ex == 1 || ex == 2)
			cli_errorf("health: %s: %s", cu->p->name, cu->err);
	}
	text[0] = '\0';
	for (i = 0; i < h->n; i++)
		if (h->problem[i] && len < sizeof(text))
			len += (size_t)snprintf(text + len, sizeof(text) - len,
			    "%s\n", h->line[i]);
	keep(cu, h, ex == 2 ? IH_ECONFIG : ex == 1 ? IH_EIO : IH_OK, text);
	if (h->problems > 0)
		alert_text(cu->cfg, cu->p->name, "endpoint", text,
		    log_dest_sink(&cu->w.logd, &log_stderr));
	log_emit(log_dest_sink(&cu->w.logd, &log_stderr), "health "
	    "provider=%s problems=%d outcome=%s", cu->p->name, h->problems,
	    ex == 0 ? "ok" : ex == 3 ? "problem" : ex == 2 ? "refused" :
	    "failed");
}

struct run {
	struct cli	*c;
	int		 json;
};

static int
run_one(void *arg, size_t pi, const struct api_provider *ap, int named,
    int *first)
{
	const struct run *run = arg;
	struct cli *c = run->c;
	int json = run->json;
	struct catchup cu;
	struct health h;
	int rc, ex;

	ex = api_provider_open(&cu, c, pi, ap, named, "health", "");
	if (ex != 0)
		return ex;
	memset(&h, 0, sizeof(h));
	rc = ap->health(&cu, &h);
	if (rc == IH_ECONFIG)
		ex = 2;
	else if (rc != IH_OK)
		ex = 1;
	else
		ex = h.problems > 0 ? CLI_EXIT_MISSING : 0;
	report(&cu, &h, json, *first, ex);
	*first = 0;
	catchup_close(&cu);
	return ex;
}

int
cli_health(struct cli *c, int argc, char **argv)
{
	/* Worse exit codes win: 2, then 1, then 3, then 0. */
	static const int rank[] = { 0, 2, 3, 1 };
	const char *named[CLI_MAX_PROVIDERS];
	struct run run;
	size_t nnamed = 0;
	int a, r, json = 0;

	for (a = 1; a < argc; a++) {
		r = cli_opt(argc, argv, &a, "--provider", &named[nnamed]);
		if (r == 1 && nnamed + 1 < CLI_MAX_PROVIDERS) {
			if (cli_provider_index(named[nnamed]) < 0)
				return 2;
			if (api_provider_named("health", named[nnamed],
			    API_JOB_HEALTH) == NULL)
				return 2;
			nnamed++;
		} else if (r == 0 && strcmp(argv[a], "--json") == 0)
			json = 1;
		else
			return cli_help_or_usage(argv[a], usage);
	}
	run.c = c;
	run.json = json;
	return api_each_provider("health", API_JOB_HEALTH, named, nnamed,
	    json, rank, run_one, &run);
}

int
cli_health_alert(struct cli *c, size_t pi, char *last, size_t lastlen,
    const struct log_sink *log, const volatile sig_atomic_t *stop)
{
	const struct api_provider *ap;
	struct catchup cu;
	struct health h;
	char text[HEALTH_MAX * (HEALTH_LINE_MAX + 1)];
	size_t i, len = 0;
	int rc;

	ap = api_provider_find(providers_all[pi]->name);
	if (ap == NULL || ap->health == NULL)
		return IH_OK;
	rc = catchup_open(&cu, c, pi, ap);
	if (rc != IH_OK) {
		catchup_close(&cu);
		return IH_OK;
	}
	cu.http.stop = stop;
	memset(&h, 0, sizeof(h));
	rc = ap->health(&cu, &h);
	text[0] = '\0';
	for (i = 0; rc == IH_OK && i < h.n; i++)
		if (h.problem[i] && len < sizeof(text))
			len += (size_t)snprintf(text + len, sizeof(text) - len,
			    "%s\n", h.line[i]);
	keep(&cu, &h, rc, text);
	if (rc != IH_OK)
		log_emit(log, "health provider=%s outcome=failed detail=%s",
		    cu.p->name, cu.err);
	else
		log_emit(log, "health provider=%s problems=%d outcome=%s",
		    cu.p->name, h.problems, h.problems > 0 ? "problem" : "ok");
	if (rc == IH_OK && h.problems == 0)
		last[0] = '\0';
	else if (rc == IH_OK && strncmp(text, last, lastlen - 1) != 0) {
		snprintf(last, lastlen, "%s", text);
		alert_text(cu.cfg, cu.p->name, "endpoint", text, log);
	}
	catchup_close(&cu);
	return IH_OK;
}

/* One round: each provider whose check is due.  Called with hr->mu held. */
static void
round_once(struct cli_health_round *hr)
{
	const struct config *cfg;
	size_t i;

	for (i = 0; providers_all[i] != NULL && i < CLI_MAX_PROVIDERS &&
	    !hr->stop; i++) {
		if (hr->only != NULL &&
		    strcmp(providers_all[i]->name, hr->only) != 0)
			continue;
		if (hr->at[i] != 0 &&
		    clock_wall_ms() - hr->at[i] < hr->every_s * 1000)
			continue;
		hr->at[i] = clock_wall_ms();
		if (cli_config(&hr->c, i, &cfg) != IH_OK)
			continue;
		pthread_mutex_unlock(&hr->mu);
		(void)cli_health_alert(&hr->c, i, hr->last[i],
		    sizeof(hr->last[i]), log_dest_sink(&hr->logd,
		    &log_stderr), &hr->stop);
		pthread_mutex_lock(&hr->mu);
	}
}

static void *
round_main(void *arg)
{
	struct cli_health_round *hr = arg;
	struct timespec until;
	sigset_t set;

	/* The stop signals are the main thread's (its loop's flag). */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	pthread_mutex_lock(&hr->mu);
	while (!hr->stop) {
		round_once(hr);
		if (hr->once)
			break;
		/* Looked at again each second: intervals are whole seconds. */
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += 1;
		while (!hr->stop && pthread_cond_timedwait(&hr->cv, &hr->mu,
		    &until) != ETIMEDOUT)
			;
	}
	pthread_mutex_unlock(&hr->mu);
	return NULL;
}

int
cli_health_start(struct cli_health_round *hr, struct cli *c,
    const char *only, long every_s, int once)
{
	const struct config *cfg;
	struct api_http http;
	struct store *st;
	char err[256];
	size_t i;

	memset(hr, 0, sizeof(*hr));
	/* Loaded here, so that the thread only reads them. */
	for (i = 0; providers_all[i] != NULL && i < CLI_MAX_PROVIDERS; i++)
		if ((only == NULL || i == 0 ||
		    strcmp(providers_all[i]->name, only) == 0) &&
		    cli_config(c, i, &cfg) != IH_OK)
			return IH_ECONFIG;
	hr->c = *c;
	hr->c.st = NULL;
	hr->only = only;
	hr->every_s = every_s;
	hr->once = once;
	log_dest_init(&hr->logd);
	if (cli_config(c, 0, &cfg) == IH_OK &&
	    log_dest_set(&hr->logd, cfg->log, err, sizeof(err)) != IH_OK)
		fprintf(stderr, "idemhook: %s\n", err);
	/* A connection of its own, out of the process's writer queue. */
	if (cli_store(&hr->c, &st) == IH_OK)
		store_no_queue(st);
	/* libcurl's global start-up, which is not for two threads at once. */
	(void)api_http_init(&http);
	api_http_free(&http);
	pthread_mutex_init(&hr->mu, NULL);
	pthread_cond_init(&hr->cv, NULL);
	if (pthread_create(&hr->thread, NULL, round_main, hr) != 0) {
		cli_errorf("work: cannot start the health checks' thread");
		pthread_cond_destroy(&hr->cv);
		pthread_mutex_destroy(&hr->mu);
		if (hr->c.st != NULL)
			store_close(hr->c.st);
		log_dest_close(&hr->logd);
		return IH_ENOMEM;
	}
	return IH_OK;
}

void
cli_health_end(struct cli_health_round *hr, int finish)
{
	pthread_mutex_lock(&hr->mu);
	if (!finish)
		hr->stop = 1;
	pthread_cond_signal(&hr->cv);
	pthread_mutex_unlock(&hr->mu);
	pthread_join(hr->thread, NULL);
	pthread_cond_destroy(&hr->cv);
	pthread_mutex_destroy(&hr->mu);
	if (hr->c.st != NULL)
		store_close(hr->c.st);
	log_dest_close(&hr->logd);
}
