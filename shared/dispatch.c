/* dispatch.c -- claim, act, switch, complete; or fail and back off. */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "action.h"
#include "alert.h"
#include "config.h"
#include "dispatch.h"
#include "fault.h"
#include "ih.h"
#include "log.h"
#include "provider.h"
#include "store.h"

int
dispatch_effect(struct dispatch_ctx *ctx, const char *kind, char *err,
    size_t errlen)
{
	if (ctx->st == NULL || ctx->tx == NULL || ctx->job == NULL) {
		snprintf(err, errlen, "no transaction for effects");
		return IH_EINVAL;
	}
	return store_effect(ctx->st, ctx->tx, ctx->job, kind, store_now_ms(), err,
	    errlen);
}

int
dispatch_type_of(const struct dispatch_type *tab, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (tab[i].name != NULL && strcmp(tab[i].name, name) == 0)
			return tab[i].type;
	return 0;
}

int
dispatch_record(struct dispatch_ctx *ctx, const struct dispatch_event *ev,
    const char *kind, char *err, size_t errlen)
{
	char cid[LOG_CLEAN_SIZE], ctype[LOG_CLEAN_SIZE];

	log_clean(cid, ev->event_id, (size_t)-1);
	log_clean(ctype, ev->event_type, (size_t)-1);
	log_emit(ctx->log, "provider=%s event=%s type=%s effect=%s",
	    ev->provider, cid, ctype, kind);
	return dispatch_effect(ctx, kind, err, errlen);
}

int64_t
dispatch_backoff_ms(const struct config *cfg, long attempt)
{
	int64_t d = cfg->retry_base_ms, cap = (int64_t)cfg->retry_max_s * 1000;
	long i;

	for (i = 1; i < attempt && d < cap; i++)
		d *= 2;
	if (d > cap)
		d = cap;
	if (d < 2)
		return d;
	return d / 2 + (int64_t)arc4random_uniform((uint32_t)(d / 2 > 
	    UINT32_MAX ? UINT32_MAX : d / 2));
}

void
dispatch_owner(char *owner, size_t len)
{
	char host[64];

	if (gethostname(host, sizeof(host)) != 0)
		snprintf(host, sizeof(host), "localhost");
	host[sizeof(host) - 1] = '\0';
	snprintf(owner, len, "%s:%ld:%08x", host, (long)getpid(),
	    arc4random());
}

/*
 * Runs every configured action whose pattern matches the type, renewing
 * the lease before each one, so that actions which together outlast one
 * lease still run in one process only.  Returns IH_OK; IH_EIO when an
 * action failed; IH_ENOTFOUND when the lease was lost (the run must
 * stop); IH_ESTORE when it could not be renewed.  The reason is in err.
 */
static int
run_actions(const struct dispatch *d, const struct store_job *job,
    char *err, size_t errlen)
{
	struct action_event ev;
	size_t i;
	int rc;

	ev.provider = job->provider;
	ev.event_id = job->event_id;
	ev.event_type = job->event_type;
	ev.payload = job->payload != NULL ? job->payload :
	    (const unsigned char *)"";
	ev.payload_len = job->payload_len;
	ev.attempt = job->attempt;
	ev.alert_reason = NULL;
	for (i = 0; i < d->cfg->nactions; i++) {
		if (fnmatch(d->cfg->action_pattern[i], job->event_type, 0) != 0)
			continue;
		rc = store_renew(d->st, NULL, job, d->owner,
		    (int64_t)d->cfg->lease_s * 1000, err, errlen);
		if (rc != IH_OK)
			return rc;
		rc = action_run(d->cfg->action_command[i], &ev,
		    d->cfg->action_passenv, d->cfg->action_timeout_s, err,
		    errlen);
		if (rc != IH_OK)
			return IH_EIO;
	}
	return IH_OK;
}

/* Runs the switch with the job's effects joining the open transaction. */
static int
run_switch(const struct dispatch *d, struct store_txn *tx,
    const struct store_job *job, char *err, size_t errlen)
{
	struct dispatch_event ev;
	struct dispatch_ctx ctx;

	memset(&ev, 0, sizeof(ev));
	ev.rowid = job->rowid;
	ev.provider = job->provider;
	ev.event_id = job->event_id;
	ev.event_type = job->event_type;
	ev.subtype = job->subtype;
	ev.payload = job->payload;
	ev.payload_len = job->payload_len;
	ev.attempt = job->attempt;
	ctx.log = d->log;
	ctx.st = d->st;
	ctx.tx = tx;
	ctx.job = job;
	return d->p->handle(&ev, &ctx, err, errlen);
}

static void
log_job(const struct dispatch *d, const struct store_job *job,
    const char *outcome, const char *detail)
{
	char cid[LOG_CLEAN_SIZE], ctype[LOG_CLEAN_SIZE];
	char cdetail[LOG_CLEAN_SIZE];

	log_clean(cid, job->event_id, (size_t)-1);
	log_clean(ctype, job->event_type, (size_t)-1);
	log_clean(cdetail, detail, (size_t)-1);
	log_emit(d->log, "provider=%s event=%s type=%s processing=%s "
	    "attempt=%ld%s%s", job->provider, cid, ctype, outcome,
	    job->attempt, detail != NULL ? " detail=" : "",
	    detail != NULL ? cdetail : "");
}

/*
 * Another process took the event over: log it and close this attempt's
 * row, which the taker may have closed already.
 */
static void
lost(const struct dispatch *d, const struct store_job *job, const char *why)
{
	char err[STORE_ERR_MAX];

	log_job(d, job, "lease_lost", why);
	if (store_attempt_lost(d->st, NULL, job, store_now_ms(), err, sizeof(err))
	    != IH_OK)
		log_job(d, job, "lease_lost", err);
}

/* Ends a failed attempt: failed with a backoff, or dead at the limit. */
static int
give_up(const struct dispatch *d, const struct store_job *job,
    const char *why, char *err, size_t errlen)
{
	int64_t now = store_now_ms(), next;
	int dead = job->attempt >= d->cfg->max_attempts, rc;

	next = dead ? now : now + dispatch_backoff_ms(d->cfg, job->attempt);
	rc = store_fail(d->st, NULL, job, d->owner, why, next, dead, now, err,
	    errlen);
	if (rc == IH_ENOTFOUND) {
		lost(d, job, err);
		return IH_OK;
	}
	if (rc == IH_OK)
		log_job(d, job, dead ? "dead" : "failed", why);
	if (rc == IH_OK && dead)
		alert_dead(d->cfg, job, why, d->log);
	return rc;
}

int
dispatch_one(const struct dispatch *d, int64_t rowid, int *found, char *err,
    size_t errlen)
{
	struct store_job job;
	int due, rc;

	if (rowid == 0) {
		rc = store_due(d->st, d->p->name, store_now_ms(), &due, err,
		    errlen);
		if (rc != IH_OK || !due) {
			*found = 0;
			return rc;
		}
	}
	rc = store_claim(d->st, NULL, d->p->name, rowid, d->owner, store_now_ms(),
	    (int64_t)d->cfg->lease_s * 1000, &job, found, err, errlen);
	if (rc != IH_OK || !*found)
		return rc;
	return dispatch_job(d, &job, err, errlen);
}

int
dispatch_job(const struct dispatch *d, struct store_job *job, char *err,
    size_t errlen)
{
	struct store_txn *tx;
	char why[256];
	int rc;

	if (job->attempt > d->cfg->max_attempts) {
		/* Every earlier attempt died with its process or lease. */
		rc = give_up(d, job, "lease expired on the last attempt",
		    err, errlen);
		goto out;
	}
	why[0] = '\0';
	rc = run_actions(d, job, why, sizeof(why));
	if (rc == IH_ENOTFOUND) {
		lost(d, job, why);
		rc = IH_OK;
		goto out;
	} else if (rc == IH_ESTORE) {
		/* The lease stays until it expires; the event is due then. */
		snprintf(err, errlen, "%s", why);
		goto out;
	} else if (rc != IH_OK) {
		rc = give_up(d, job, why, err, errlen);
		goto out;
	}
	rc = store_begin(d->st, STORE_RELAXED, &tx, err, errlen);
	if (rc != IH_OK)
		goto out;
	rc = run_switch(d, tx, job, why, sizeof(why));
	if (rc != IH_OK) {
		store_rollback(tx);
		rc = give_up(d, job, why, err, errlen);
		goto out;
	}
	fault_point("processing");
	rc = store_complete(d->st, tx, job, d->owner, store_now_ms(), err,
	    errlen);
	if (rc == IH_OK)
		rc = store_commit(tx, err, errlen);
	else
		store_rollback(tx);
	if (rc == IH_ENOTFOUND) {
		/* Someone else holds it now; our effects were rolled back. */
		lost(d, job, err);
		rc = IH_OK;
	} else if (rc == IH_OK)
		log_job(d, job, "done", NULL);
out:
	store_job_free(job);
	return rc;
}

int
dispatch_drain(const struct dispatch *d, long max,
    const volatile sig_atomic_t *stop, long *done, char *err, size_t errlen)
{
	int found = 1, rc = IH_OK;

	while (found && (max <= 0 || *done < max) &&
	    (stop == NULL || !*stop)) {
		rc = dispatch_one(d, 0, &found, err, errlen);
		if (rc != IH_OK)
			break;
		*done += found;
	}
	return rc;
}

int
dispatch_has_actions(const struct config *cfg, const char *event_type)
{
	size_t i;

	for (i = 0; i < cfg->nactions; i++)
		if (fnmatch(cfg->action_pattern[i], event_type, 0) == 0)
			return 1;
	return 0;
}

int
dispatch_within(const struct dispatch *d, struct store_txn *tx,
    const struct store_job *job, int *done, char *err, size_t errlen)
{
	char why[256];
	int64_t now;
	int rc;

	*done = 0;
	rc = store_savepoint(tx, STORE_SP_OPEN, err, errlen);
	if (rc != IH_OK)
		return rc;
	why[0] = '\0';
	rc = run_switch(d, tx, job, why, sizeof(why));
	if (rc == IH_OK)
		rc = store_complete(d->st, tx, job, d->owner, store_now_ms(),
		    why, sizeof(why));
	if (rc == IH_OK) {
		*done = 1;
		return store_savepoint(tx, STORE_SP_KEEP, err, errlen);
	}
	/* Only the switch's effects go: the event stays, due for a retry. */
	rc = store_savepoint(tx, STORE_SP_UNDO, err, errlen);
	if (rc != IH_OK)
		return rc;
	now = store_now_ms();
	rc = store_fail(d->st, tx, job, d->owner, why,
	    now + dispatch_backoff_ms(d->cfg, job->attempt),
	    job->attempt >= d->cfg->max_attempts, now, err, errlen);
	if (rc == IH_OK)
		log_job(d, job, job->attempt >= d->cfg->max_attempts ?
		    "dead" : "failed", why);
	return rc;
}

void
dispatch_within_done(const struct dispatch *d, const struct store_job *job)
{
	log_job(d, job, "done", NULL);
}

int
dispatch_inline(const struct dispatch *d, struct store_job *job, char *err,
    size_t errlen)
{
	char why[STORE_ERR_MAX], ferr[STORE_ERR_MAX];
	struct store_txn *tx = NULL;
	int rc, frc;

	why[0] = '\0';
	rc = run_actions(d, job, why, sizeof(why));
	if (rc == IH_OK) {
		/* Durable: in this mode the answer says "processed". */
		rc = store_begin(d->st, STORE_DURABLE, &tx, why, sizeof(why));
		if (rc == IH_OK && run_switch(d, tx, job, why, sizeof(why)) !=
		    IH_OK) {
			store_rollback(tx);
			rc = IH_EIO;
		} else if (rc == IH_OK) {
			fault_point("processing");
			rc = store_complete(d->st, tx, job, d->owner,
			    store_now_ms(), why, sizeof(why));
			if (rc == IH_OK)
				rc = store_commit(tx, why, sizeof(why));
			else
				store_rollback(tx);
		}
	}
	if (rc == IH_OK) {
		log_job(d, job, "done", NULL);
	} else if (rc == IH_ENOTFOUND) {
		lost(d, job, why);
	} else if (rc == IH_EIO) {
		/* No record is left: the provider's retry starts afresh. */
		frc = store_forget(d->st, NULL, job, d->owner, ferr, sizeof(ferr));
		if (frc == IH_OK) {
			log_job(d, job, "failed", why);
		} else if (frc == IH_ENOTFOUND) {
			lost(d, job, ferr);
			rc = IH_ENOTFOUND;
		} else {
			log_job(d, job, "failed", ferr);
			snprintf(why, sizeof(why), "%s", ferr);
			rc = IH_ESTORE;
		}
	}
	if (rc != IH_OK)
		snprintf(err, errlen, "%s", why);
	store_job_free(job);
	return rc;
}
