/* dispatch.c -- claim, act, switch, complete; or fail and back off. */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "account.h"
#include "action.h"
#include "alert.h"
#include "clock.h"
#include "config.h"
#include "dispatch.h"
#include "fault.h"
#include "forward.h"
#include "ih.h"
#include "log.h"
#include "object.h"
#include "provider.h"
#include "smoke.h"
#include "store.h"

/* The fetch hook: set by the idemhook command only. */
static dispatch_fetch_fn	fetch_fn;
static void		*fetch_arg;

void
dispatch_set_fetch(dispatch_fetch_fn fn, void *arg)
{
	fetch_fn = fn;
	fetch_arg = arg;
}

int
dispatch_effect(struct dispatch_ctx *ctx, const char *kind, char *err,
    size_t errlen)
{
	if (ctx->st == NULL || ctx->tx == NULL || ctx->job == NULL) {
		snprintf(err, errlen, "no transaction for effects");
		return IH_EINVAL;
	}
	return store_effect(ctx->st, ctx->tx, ctx->job, kind, clock_wall_ms(),
	    err, errlen);
}

int
dispatch_object(struct dispatch_ctx *ctx, const struct event *ev,
    dispatch_map_fn map, char *err, size_t errlen)
{
	char cid[LOG_CLEAN_SIZE], coid[LOG_CLEAN_SIZE], ckind[LOG_CLEAN_SIZE];
	struct store_object o;
	struct object_found f;
	int rc, verdict;

	memset(&f, 0, sizeof(f));
	if (ctx->st == NULL || ctx->tx == NULL || ctx->job == NULL) {
		snprintf(err, errlen, "no transaction for objects");
		return IH_EINVAL;
	}
	if (ev->payload == NULL) {
		rc = IH_OK;
		goto out;
	}
	/* Read on receipt from these same bytes: not parsed again. */
	rc = ev->found != NULL ? object_found_copy(&f, ev->found) :
	    map(ev, &f);
	if (rc != IH_OK) {
		snprintf(err, errlen, "cannot map the event's object: %s",
		    ih_strerror(rc));
		goto out;
	}
	if (!f.mapped)
		goto out;
	memset(&o, 0, sizeof(o));
	/*
	 * A body without a time of its own: when it was received.  Never a
	 * header's time, which nobody signed.
	 */
	if (f.source_ms == 0)
		f.source_ms = ctx->job->ev.received_at;
	o.provider = ev->provider;
	o.account = ev->account;
	o.kind = f.kind;
	o.object_id = f.object_id;
	o.status = f.status;
	o.json = f.json;
	o.json_len = f.json_len;
	o.source_ms = f.source_ms;
	o.rank = f.rank;
	o.event_id = ev->event_id;
	o.event_type = ev->event_type;
	o.deleted = f.deleted;
	rc = store_object_apply(ctx->st, ctx->tx, &o, clock_wall_ms(),
	    &verdict, err, errlen);
	if (rc != IH_OK)
		goto out;
	log_clean(cid, ev->event_id, (size_t)-1);
	log_clean(coid, f.object_id, (size_t)-1);
	log_clean(ckind, f.kind, (size_t)-1);
	log_emit(ctx->log, "provider=%s event=%s object=%s/%s verdict=%s",
	    ev->provider, cid, ckind, coid, object_verdict_name(verdict));
out:
	object_found_free(&f);
	return rc;
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
dispatch_record(struct dispatch_ctx *ctx, const struct event *ev,
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
 * Does the TYPE part of an action's pattern ("TYPE" or "TYPE@STATUS")
 * match the event type?  A TYPE too long to copy matches nothing.
 */
static int
action_type_matches(const char *pattern, const char *type)
{
	const char *at = strchr(pattern, '@');
	char tp[256];
	size_t n;

	if (at == NULL)
		return fnmatch(pattern, type, 0) == 0;
	n = (size_t)(at - pattern);
	if (n >= sizeof(tp))
		return 0;
	memcpy(tp, pattern, n);
	tp[n] = '\0';
	return fnmatch(tp, type, 0) == 0;
}

/*
 * Does an action's pattern match?  "TYPE" (an fnmatch pattern) matches
 * the event type; "TYPE@STATUS" also needs the status the event makes
 * its object take (status NULL: none, see action_status()) to match
 * STATUS.
 */
static int
action_matches(const char *pattern, const char *type, const char *status)
{
	const char *at = strchr(pattern, '@');

	if (at != NULL && status == NULL)
		return 0;
	if (!action_type_matches(pattern, type))
		return 0;
	return at == NULL || fnmatch(at + 1, status, 0) == 0;
}

/* The object's row as it stands, for action_status(). */
struct action_row {
	int		 found;
	int		 same_status;	/* its status is the event's */
	int		 set_by_event;	/* the event set it */
	struct object_key key;
	char		*event_id;
	const char	*status;	/* the event's */
	const char	*ev_id;		/* the event's id */
};

static int
action_row_fn(void *arg, const struct store_object *o)
{
	struct action_row *r = arg;

	free(r->event_id);
	r->event_id = strdup(o->event_id);
	if (r->event_id == NULL)
		return IH_ENOMEM;
	r->found = 1;
	r->same_status = strcmp(o->status, r->status) == 0;
	r->set_by_event = strcmp(o->event_id, r->ev_id) == 0;
	r->key.source_ms = o->source_ms;
	r->key.rank = o->rank;
	r->key.event_id = r->event_id;
	return IH_OK;
}

/*
 * Does the event make its object's status f->status, as its row stands
 * before the actions: a new object, or one that the event's key is
 * newer than and whose status is another (or one this very event set,
 * when it is processed again)?  A stale or tied event, or one that
 * leaves the status as it is, does not.
 */
static int
action_becomes(const struct dispatch *d, const struct store_job *job,
    const struct object_found *f, int *becomes)
{
	struct store_object_filter of;
	struct object_key ev;
	struct action_row r;
	char err[STORE_ERR_MAX];
	int rc;

	*becomes = 0;
	memset(&r, 0, sizeof(r));
	r.status = f->status;
	r.ev_id = job->ev.event_id;
	memset(&of, 0, sizeof(of));
	of.provider = job->ev.provider;
	of.account = account_or_default(job->ev.account);
	of.kind = f->kind;
	of.object_id = f->object_id;
	rc = store_objects(d->st, &of, action_row_fn, &r, err, sizeof(err));
	if (rc == IH_OK) {
		ev.source_ms = f->source_ms > 0 ? f->source_ms :
		    job->ev.received_at;
		ev.rank = f->rank;
		ev.event_id = job->ev.event_id;
		*becomes = !r.found || r.set_by_event || (!r.same_status &&
		    object_guard(&r.key, &ev) == OBJECT_APPLIED);
	}
	free(r.event_id);
	return rc;
}

/*
 * The status the job's event makes its object take, into f (f->mapped
 * 0 when none, see action_becomes()), read only when some action's
 * pattern names a status.
 */
static int
action_status(const struct dispatch *d, const struct store_job *job,
    struct object_found *f)
{
	size_t i;
	int becomes, rc;

	memset(f, 0, sizeof(*f));
	for (i = 0; i < d->cfg->nactions; i++)
		if (strchr(d->cfg->action_pattern[i], '@') != NULL)
			break;
	if (i == d->cfg->nactions || d->p->map_object == NULL ||
	    job->ev.payload == NULL)
		return IH_OK;
	rc = job->ev.found != NULL ? object_found_copy(f, job->ev.found) :
	    d->p->map_object(&job->ev, f);
	if (rc != IH_OK || !f->mapped)
		return rc;
	rc = action_becomes(d, job, f, &becomes);
	if (rc == IH_OK && !becomes)
		f->mapped = 0;
	return rc;
}

/*
 * Runs every configured action whose pattern matches the event (its
 * type, and the status it makes its object take when the pattern names
 * one), renewing
 * the lease before each one, so that actions which together outlast one
 * lease still run in one process only.  Returns IH_OK; IH_EIO when an
 * action failed; IH_ENOTFOUND when the lease was lost (the run must
 * stop); IH_ESTORE when it could not be renewed.  The reason is in err.
 */
static int
run_actions(const struct dispatch *d, const struct store_job *job,
    struct forward_result *fr, char *err, size_t errlen)
{
	struct object_found f;
	size_t i;
	int rc, smoke;

	memset(&f, 0, sizeof(f));
	memset(fr, 0, sizeof(*fr));
	rc = smoke_event(&job->ev, &smoke);
	if (rc != IH_OK) {
		snprintf(err, errlen, "cannot read the event: %s",
		    ih_strerror(rc));
		rc = IH_EIO;
		goto out;
	}
	/*
	 * The application first: the actions run once it has the event.
	 * idemhook smoke's test events are forwarded too, so that the smoke
	 * test proves the application gets and verifies them (cli_smoke.c),
	 * but they run no action (smoke.h).
	 */
	if (forward_dest(d->cfg, job->ev.account) != NULL) {
		rc = store_renew(d->st, NULL, job, d->owner,
		    (int64_t)d->cfg->lease_s * 1000, err, errlen);
		if (rc == IH_OK)
			rc = forward_deliver(d->st, d->p, d->cfg, d->log, job,
			    fr, err, errlen);
		if (rc != IH_OK)
			goto out;
	}
	if (smoke)
		goto out;
	rc = action_status(d, job, &f);
	if (rc != IH_OK) {
		/* A store failure leaves the lease to expire. */
		snprintf(err, errlen, "cannot read the event's object: %s",
		    ih_strerror(rc));
		if (rc != IH_ESTORE)
			rc = IH_EIO;
		goto out;
	}
	for (i = 0; i < d->cfg->nactions; i++) {
		if (!action_matches(d->cfg->action_pattern[i],
		    job->ev.event_type, f.mapped ? f.status : NULL))
			continue;
		rc = store_renew(d->st, NULL, job, d->owner,
		    (int64_t)d->cfg->lease_s * 1000, err, errlen);
		if (rc != IH_OK)
			goto out;
		rc = action_run(d->cfg->action_command[i], &job->ev, NULL,
		    d->cfg->action_passenv, d->cfg->action_timeout_s, err,
		    errlen);
		if (rc != IH_OK) {
			rc = IH_EIO;
			goto out;
		}
	}
	rc = IH_OK;
out:
	object_found_free(&f);
	return rc;
}

/* Runs the switch with the job's effects joining the open transaction. */
static int
run_switch(const struct dispatch *d, struct store_txn *tx,
    const struct store_job *job, char *err, size_t errlen)
{
	struct dispatch_ctx ctx;
	int rc, smoke;

	ctx.log = d->log;
	ctx.st = d->st;
	ctx.tx = tx;
	ctx.job = job;
	/*
	 * A smoke event records its own effect and nothing else: the
	 * switch, where real work may be written, never sees it, and no
	 * object is set from it.
	 */
	rc = smoke_event(&job->ev, &smoke);
	if (rc != IH_OK) {
		snprintf(err, errlen, "cannot read the event: %s",
		    ih_strerror(rc));
		return rc;
	}
	if (smoke)
		return dispatch_record(&ctx, &job->ev, SMOKE_EFFECT, err,
		    errlen);
	return d->p->handle(&job->ev, &ctx, err, errlen);
}

static void
log_job(const struct dispatch *d, const struct store_job *job,
    const char *outcome, const char *detail)
{
	char cid[LOG_CLEAN_SIZE], ctype[LOG_CLEAN_SIZE];
	char cdetail[LOG_CLEAN_SIZE];

	log_clean(cid, job->ev.event_id, (size_t)-1);
	log_clean(ctype, job->ev.event_type, (size_t)-1);
	log_clean(cdetail, detail, (size_t)-1);
	log_emit(d->log, "provider=%s event=%s type=%s processing=%s "
	    "attempt=%ld%s%s", job->ev.provider, cid, ctype, outcome,
	    job->ev.attempt, detail != NULL ? " detail=" : "",
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
	if (store_attempt_lost(d->st, NULL, job, clock_wall_ms(), err,
	    sizeof(err)) != IH_OK)
		log_job(d, job, "lease_lost", err);
}

/*
 * Ends a failed attempt: failed with a backoff (or the application's
 * Retry-After, when longer), or dead at the limit or when fr says no
 * retry can help (fr may be NULL).
 */
static int
give_up(const struct dispatch *d, const struct store_job *job,
    const char *why, const struct forward_result *fr, char *err,
    size_t errlen)
{
	int64_t now = clock_wall_ms(), next, wait;
	int dead = job->ev.attempt >= d->cfg->max_attempts, rc;

	if (fr != NULL && fr->permanent)
		dead = 1;
	wait = dispatch_backoff_ms(d->cfg, job->ev.attempt);
	if (fr != NULL && fr->retry_after_ms > wait)
		wait = fr->retry_after_ms;
	next = dead ? now : now + wait;
	forward_pause_note(d->st, d->cfg, d->log, job, 0, fr);
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
		rc = store_due(d->st, d->p->name, clock_wall_ms(), &due, err,
		    errlen);
		if (rc != IH_OK || !due) {
			*found = 0;
			return rc;
		}
	}
	rc = forward_claim(d->st, NULL, d->cfg, d->p->name, d->pause, d->log,
	    rowid, 0, d->owner, &job, found, err, errlen);
	if (rc != IH_OK || !*found)
		return rc;
	return dispatch_job(d, &job, err, errlen);
}

int
dispatch_job(const struct dispatch *d, struct store_job *job, char *err,
    size_t errlen)
{
	struct forward_result fr;
	struct store_txn *tx;
	char why[512], note[512];
	int rc;

	memset(&fr, 0, sizeof(fr));
	if (job->ev.attempt > d->cfg->max_attempts) {
		/* Every earlier attempt died with its process or lease. */
		rc = give_up(d, job, "lease expired on the last attempt",
		    NULL, err, errlen);
		goto out;
	}
	why[0] = '\0';
	/* A thin event: the full event first, or the attempt fails. */
	if (job->ev.needs_fetch && fetch_fn == NULL) {
		snprintf(why, sizeof(why), "the event needs a fetch, which "
		    "only idemhook work makes");
		rc = IH_EIO;
	} else if (job->ev.needs_fetch)
		rc = fetch_fn(fetch_arg, d, job, why, sizeof(why));
	else
		rc = IH_OK;
	if (rc == IH_OK)
		rc = run_actions(d, job, &fr, why, sizeof(why));
	if (rc == IH_ENOTFOUND) {
		lost(d, job, why);
		rc = IH_OK;
		goto out;
	} else if (rc == IH_ESTORE) {
		/* The lease stays until it expires; the event is due then. */
		snprintf(err, errlen, "%s", why);
		goto out;
	} else if (rc != IH_OK) {
		rc = give_up(d, job, why, &fr, err, errlen);
		goto out;
	}
	/* The application's answer stays with the attempt that ends done. */
	if (forward_dest(d->cfg, job->ev.account) != NULL) {
		snprintf(note, sizeof(note), "%s", why);
		job->done_note = note;
		forward_pause_note(d->st, d->cfg, d->log, job, 1, &fr);
	}
	rc = store_begin(d->st, STORE_RELAXED, &tx, err, errlen);
	if (rc != IH_OK)
		goto out;
	rc = run_switch(d, tx, job, why, sizeof(why));
	if (rc != IH_OK) {
		store_rollback(tx);
		rc = give_up(d, job, why, NULL, err, errlen);
		goto out;
	}
	fault_point("processing");
	rc = store_complete(d->st, tx, job, d->owner, clock_wall_ms(), err,
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
dispatch_has_actions(const struct config *cfg, const char *event_type)
{
	size_t i;

	/*
	 * A TYPE@STATUS action counts by its TYPE alone: the status is
	 * known only once the switch has run, after the answer.
	 */
	if (forward_any(cfg))
		return 1;
	for (i = 0; i < cfg->nactions; i++)
		if (action_type_matches(cfg->action_pattern[i], event_type))
			return 1;
	return 0;
}

int
dispatch_within(const struct dispatch *d, struct store_txn *tx,
    const struct store_job *job, int sp, int *done, char *err,
    size_t errlen)
{
	char why[256];
	int64_t now;
	int rc;

	*done = 0;
	rc = sp ? store_savepoint(tx, STORE_SP_OPEN, err, errlen) : IH_OK;
	if (rc != IH_OK)
		return rc;
	why[0] = '\0';
	rc = run_switch(d, tx, job, why, sizeof(why));
	if (rc == IH_OK)
		rc = store_complete(d->st, tx, job, d->owner, clock_wall_ms(),
		    why, sizeof(why));
	/* A write refused is known while its savepoint can undo it alone. */
	if (rc == IH_OK && sp)
		rc = store_savepoint(tx, STORE_SP_CHECK, why, sizeof(why));
	if (rc == IH_OK) {
		*done = 1;
		return sp ? store_savepoint(tx, STORE_SP_KEEP, err, errlen) :
		    IH_OK;
	}
	if (!sp) {
		/* The caller's undo takes the switch's effects with it. */
		snprintf(err, errlen, "%s", why);
		return rc;
	}
	/* Only the switch's effects go: the event stays, due for a retry. */
	rc = store_savepoint(tx, STORE_SP_UNDO, err, errlen);
	if (rc != IH_OK)
		return rc;
	now = clock_wall_ms();
	rc = store_fail(d->st, tx, job, d->owner, why,
	    now + dispatch_backoff_ms(d->cfg, job->ev.attempt),
	    job->ev.attempt >= d->cfg->max_attempts, now, err, errlen);
	if (rc == IH_OK)
		log_job(d, job, job->ev.attempt >= d->cfg->max_attempts ?
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
	struct forward_result fr;
	struct store_txn *tx = NULL;
	int rc, frc;

	why[0] = '\0';
	rc = run_actions(d, job, &fr, why, sizeof(why));
	/* A failed delivery counts toward the pause as in the other modes. */
	if ((rc == IH_OK || rc == IH_EIO) &&
	    forward_dest(d->cfg, job->ev.account) != NULL)
		forward_pause_note(d->st, d->cfg, d->log, job, rc == IH_OK,
		    &fr);
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
			    clock_wall_ms(), why, sizeof(why));
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
		frc = store_forget(d->st, NULL, job, d->owner, ferr,
		    sizeof(ferr));
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
	return rc;
}
