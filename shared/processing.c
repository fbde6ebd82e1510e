/* processing.c -- the processing thread after the answer. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "config.h"
#include "dispatch.h"
#include "ih.h"
#include "log.h"
#include "processing.h"
#include "provider.h"
#include "store.h"

void
processing_here(const struct dispatch *d, struct store_job *job, long drain)
{
	char err[STORE_ERR_MAX] = "";
	long done = 0;
	int rc = IH_OK;

	if (job->ev.rowid > 0)
		rc = dispatch_job(d, job, err, sizeof(err));
	if (rc == IH_OK && drain != 0)
		rc = dispatch_drain(d, drain > 0 ? drain : 0, NULL, &done, err,
		    sizeof(err));
	if (rc != IH_OK)
		log_emit(d->log, "provider=%s processing stopped: %s",
		    d->p->name, err);
}

/*
 * One batch in the thread: the handed job and a few due events, then, as
 * long as events were recorded meanwhile, as many more.
 */
static void
run_batch(struct processing *w, const struct config *cfg,
    struct store_job *job, const char *owner)
{
	struct dispatch d;
	char err[STORE_ERR_MAX];
	long more = 0;

	/* The thread's own copy of IDEMHOOK_LOG; the loop reports a bad one. */
	(void)log_dest_set(&w->logd, cfg->log, err, sizeof(err));
	if (settings_store(&w->slot, cfg, err, sizeof(err)) != IH_OK) {
		/* A claimed job waits for its lease to expire. */
		log_emit(log_dest_sink(&w->logd, NULL),
		    "provider=%s processing stopped: %s", w->p->name, err);
		store_job_free(job);
		return;
	}
	/* Another thread's connection has the process's queue timer (a
	 * no-op on a connection already without it). */
	store_no_queue(w->slot.st);
	d.st = w->slot.st;
	d.p = w->p;
	d.cfg = cfg;
	d.owner = owner;
	d.log = log_dest_sink(&w->logd, &log_stderr);
	d.pause = &w->pause;
	do {
		processing_here(&d, job, PROCESSING_DRAIN + more);
		pthread_mutex_lock(&w->mu);
		more = w->stop ? 0 : w->more;
		w->more = 0;
		pthread_mutex_unlock(&w->mu);
	} while (more > 0);
}

static void *
thread_main(void *arg)
{
	struct processing *w = arg;
	struct processing_item *it;
	sigset_t set;

	/* The batch writer's store waits with SIGALRM: let it go there. */
	sigemptyset(&set);
	sigaddset(&set, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	pthread_mutex_lock(&w->mu);
	for (;;) {
		while (w->head == NULL && !w->stop)
			pthread_cond_wait(&w->cv, &w->mu);
		it = w->head;
		/* Stopping: what is queued waits for its lease to expire. */
		if (it == NULL || w->stop)
			break;
		w->head = it->next;
		if (w->head == NULL)
			w->tail = NULL;
		w->busy = 1;
		pthread_mutex_unlock(&w->mu);
		run_batch(w, &it->cfg, &it->job, it->owner);
		config_free(&it->cfg);
		store_job_free(&it->job);
		free(it);
		pthread_mutex_lock(&w->mu);
		w->busy = w->head != NULL;
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

void
processing_init(struct processing *w, const struct provider *p)
{
	memset(w, 0, sizeof(*w));
	w->p = p;
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, NULL);
	log_dest_init(&w->logd);
}

int
processing_idle(struct processing *w)
{
	int idle;

	pthread_mutex_lock(&w->mu);
	idle = !w->busy;
	pthread_mutex_unlock(&w->mu);
	return idle;
}

int
processing_hand(struct processing *w, struct config *cfg,
    struct store_job *job, const char *owner)
{
	struct processing_item *it = NULL;
	int ok = 1;

	pthread_mutex_lock(&w->mu);
	w->last_ms = clock_wall_ms();
	if (!w->started) {
		if (pthread_create(&w->thread, NULL, thread_main, w) != 0) {
			pthread_mutex_unlock(&w->mu);
			log_emit(NULL, "provider=%s no processing thread: "
			    "events wait for idemhook work or a lease",
			    w->p->name);
			store_job_free(job);
			return 0;
		}
		w->started = 1;
	}
	if (w->busy && job->ev.rowid <= 0) {
		w->more++;
		goto out;
	}
	it = calloc(1, sizeof(*it));
	if (it == NULL) {
		ok = 0;
		goto out;
	}
	it->cfg = *cfg;
	memset(cfg, 0, sizeof(*cfg));
	it->job = *job;
	memset(job, 0, sizeof(*job));
	if (owner != NULL && *owner != '\0')
		snprintf(it->owner, sizeof(it->owner), "%s", owner);
	else
		dispatch_owner(it->owner, sizeof(it->owner));
	if (w->tail != NULL)
		w->tail->next = it;
	else
		w->head = it;
	w->tail = it;
	w->busy = 1;
	pthread_cond_signal(&w->cv);
out:
	pthread_mutex_unlock(&w->mu);
	store_job_free(job);
	return ok;
}

void
processing_poll(struct processing *w, struct config *cfg,
    int64_t interval_ms)
{
	struct store_job none;
	int64_t now = clock_wall_ms(), last;

	pthread_mutex_lock(&w->mu);
	last = w->last_ms;
	pthread_mutex_unlock(&w->mu);
	if (now - last < interval_ms)
		return;
	memset(&none, 0, sizeof(none));
	(void)processing_hand(w, cfg, &none, NULL);
}

void
processing_end(struct processing *w)
{
	struct processing_item *it;

	pthread_mutex_lock(&w->mu);
	w->stop = 1;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
	if (w->started)
		pthread_join(w->thread, NULL);
	while (w->head != NULL) {
		it = w->head;
		w->head = it->next;
		config_free(&it->cfg);
		store_job_free(&it->job);
		free(it);
	}
	w->tail = NULL;
	settings_store_close(&w->slot);
	log_dest_close(&w->logd);
	pthread_cond_destroy(&w->cv);
	pthread_mutex_destroy(&w->mu);
}
