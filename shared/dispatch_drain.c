/*
 * dispatch_drain.c -- processing due events many to a transaction: the
 * loop of the processing thread and of idemhook work (dispatch.h).
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "config.h"
#include "dispatch.h"
#include "fault.h"
#include "forward.h"
#include "forward_settings.h"
#include "ih.h"
#include "provider.h"
#include "store.h"

/* Can job's attempt end inside a drain's transaction? */
static int
drain_within(const struct dispatch *d, const struct store_job *job)
{
	return job->ev.attempt < d->cfg->max_attempts &&
	    !job->ev.needs_fetch &&
	    job->ev.payload_len <= DISPATCH_WITHIN_MAX &&
	    !dispatch_has_actions(d->cfg, job->ev.event_type);
}

/*
 * The log lines of a run without savepoints (drain_run()), held until
 * its commit: a run done again must not log its switches twice.  A line
 * past the buffer flushes what is held and goes out at once.
 */
#define DRAIN_HELD_MAX	(16 * 1024)

struct drain_held {
	char			 buf[DRAIN_HELD_MAX];
	size_t			 len;
	int			 over;
	const struct log_sink	*to;
	struct log_sink		 sink;
};

static void
held_flush(struct drain_held *h)
{
	log_write_lines(h->to, h->buf, h->len);
	h->len = 0;
}

static void
held_write(void *arg, const char *line, size_t len)
{
	struct drain_held *h = arg;

	if (!h->over && len > sizeof(h->buf) - h->len) {
		held_flush(h);
		h->over = 1;
	}
	if (h->over) {
		h->to->write(h->to->arg, line, len);
		return;
	}
	memcpy(h->buf + h->len, line, len);
	h->len += len;
}

/*
 * One transaction of dispatch_drain(): claims up to want due events (at
 * most DISPATCH_BATCH) and ends within it the attempt of each that needs
 * nothing outside it (dispatch_within()), so that they share one relaxed
 * commit; the first that needs more ends the batch and runs after the
 * commit, as dispatch_one() runs it.  *n counts the events claimed.
 * held NULL: each attempt in a savepoint of its own.  Else none (two
 * statements, and a copy of every page it writes again, per event), the
 * switches' lines held in held until the commit; a switch that fails
 * then undoes the whole run, which sets *again for the caller to run it
 * again with savepoints.
 */
static int
drain_run(const struct dispatch *d, long want, struct drain_held *held,
    long *n, int *again, char *err, size_t errlen)
{
	struct store_job jobs[DISPATCH_BATCH];
	int within[DISPATCH_BATCH], due, found, done = 0, rc;
	struct store_txn *tx = NULL;
	struct dispatch dh = *d;
	long i, k = 0;

	*again = 0;
	if (held != NULL)
		dh.log = &held->sink;
	rc = store_due(d->st, d->p->name, clock_wall_ms(), &due, err, errlen);
	if (rc != IH_OK || !due)
		goto out;
	rc = store_begin(d->st, STORE_RELAXED, &tx, err, errlen);
	while (rc == IH_OK && k < want && k < DISPATCH_BATCH) {
		rc = forward_claim(d->st, tx, d->cfg, d->p->name, d->pause,
		    d->log, 0, 0, d->owner, &jobs[k], &found, err, errlen);
		if (rc != IH_OK || !found)
			break;
		within[k] = drain_within(d, &jobs[k]);
		/*
		 * One that needs more runs right after the commit and ends the
		 * batch: no other claimed event's lease runs out meanwhile.
		 */
		if (!within[k++])
			break;
		rc = dispatch_within(&dh, tx, &jobs[k - 1], held == NULL,
		    &done, err, errlen);
		/* A failed switch was logged and its event marked failed. */
		if (rc == IH_OK && !done)
			within[k - 1] = -1;
		/* Without savepoints: undone whole, and done again. */
		if (rc != IH_OK && held != NULL)
			*again = 1;
	}
	if (tx != NULL && rc == IH_OK) {
		fault_point("processing");
		rc = store_commit(tx, err, errlen);
	} else if (tx != NULL)
		store_rollback(tx);
	if (held != NULL && rc == IH_OK)
		held_flush(held);
	for (i = 0; i < k; i++) {
		if (rc == IH_OK && within[i] == 1)
			dispatch_within_done(d, &jobs[i]);
		/* Actions, a fetch or a last attempt: as dispatch_one(). */
		if (rc == IH_OK && within[i] == 0)
			rc = dispatch_job(d, &jobs[i], err, errlen);
		else
			store_job_free(&jobs[i]);
	}
out:
	*n = *again ? 0 : k;
	return *again ? IH_OK : rc;
}

/*
 * A run first without savepoints, unless the provider forwards (its
 * claims keep a pause's state, which a run done again would repeat).
 */
static int
drain_batch(const struct dispatch *d, long want, long *n, char *err,
    size_t errlen)
{
	struct drain_held *held;
	int again = 0, rc;

	held = forward_any(d->cfg) ? NULL : malloc(sizeof(*held));
	if (held != NULL) {
		held->len = 0;
		held->over = 0;
		held->to = d->log != NULL ? d->log : &log_stderr;
		held->sink.write = held_write;
		held->sink.arg = held;
		rc = drain_run(d, want, held, n, &again, err, errlen);
		free(held);
		if (!again)
			return rc;
	}
	return drain_run(d, want, NULL, n, &again, err, errlen);
}

int
dispatch_drain(const struct dispatch *d, long max,
    const volatile sig_atomic_t *stop, long *done, char *err, size_t errlen)
{
	long n = 1;
	int rc = IH_OK;

	/* A paused destination's events are not due: the store holds them. */
	while (n > 0 && (max <= 0 || *done < max) &&
	    (stop == NULL || !*stop)) {
		rc = drain_batch(d, max <= 0 ? DISPATCH_BATCH : max - *done, &n,
		    err, errlen);
		if (rc != IH_OK)
			break;
		*done += n;
	}
	return rc;
}
