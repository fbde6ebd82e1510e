/*
 * dispatch.h -- processing a recorded event exactly once: claim it under
 * a lease, run the configured actions, run the provider's switch, and
 * mark it done in the same transaction as the switch's local effects.
 *
 * Guarantees, given the store's atomic moves:
 *   - an event is claimed by one process at a time (lease), and the
 *     lease is renewed before each action, with a check that it is still
 *     held: a process that lost it stops before its next action;
 *   - the switch's local effects (dispatch_effect) and the move to done
 *     commit together or not at all, so they happen exactly once;
 *   - a failed attempt is retried with exponential backoff and jitter,
 *     and after max_attempts the event is dead, for the operator;
 *   - a crash leaves the lease to expire, after which the event is due
 *     again; actions' external effects are therefore at-least-once.
 */
#ifndef IH_DISPATCH_H
#define IH_DISPATCH_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "event.h"
#include "log.h"
#include "provider.h"

struct config;
struct store;
struct store_job;
struct store_txn;

/* What the switch may use: the log, and the transaction for effects. */
struct dispatch_ctx {
	const struct log_sink	*log;
	struct store		*st;
	struct store_txn	*tx;	/* the open transaction */
	const struct store_job	*job;
};

/*
 * Records the local effect kind ("payment_completed") for the event
 * being processed, in the transaction that will mark it done.
 */
int	dispatch_effect(struct dispatch_ctx *ctx, const char *kind,
	    char *err, size_t errlen);

/*
 * Applies the object that map finds in ev to the objects table, in the
 * transaction that will mark ev done, under the ordering guard
 * (object.h), and logs the verdict.  An event that sets no object, or
 * one without a payload (purged), changes nothing.  When the body gives
 * no time, the time the event was received stands in: never a header's,
 * which the provider may not sign.  Returns IH_OK, or another code with
 * a reason in err (the attempt is then rolled back and retried).
 */
int	dispatch_object(struct dispatch_ctx *ctx,
	    const struct event *ev, dispatch_map_fn map, char *err,
	    size_t errlen);

/* One row of a provider's table of event types, for its switch. */
struct dispatch_type {
	const char	*name;
	int		 type;
};

/*
 * Returns the type of name in the table of n rows, or 0 (every
 * provider's "unknown") when it is not there.  Rows with a NULL name
 * are skipped, so a provider with no known types can still have a table.
 */
int	dispatch_type_of(const struct dispatch_type *tab, size_t n,
	    const char *name);

/*
 * The common end of a switch's case: logs the effect kind for ev and
 * records it with dispatch_effect().  Returns what dispatch_effect() does.
 */
int	dispatch_record(struct dispatch_ctx *ctx,
	    const struct event *ev, const char *kind, char *err,
	    size_t errlen);

struct forward_pause;

struct dispatch {
	struct store		*st;
	const struct provider	*p;
	const struct config	*cfg;
	const char		*owner;	/* lease holder: host:pid:random */
	const struct log_sink	*log;
	/*
	 * The process's part of forwarding's shared state (forward.h), kept
	 * across batches by whoever drains (the processing thread, idemhook
	 * work), or NULL.
	 */
	struct forward_pause	*pause;
};

/*
 * Claims and processes one event of d->p: the one at rowid when rowid >
 * 0, else the oldest due one.  Sets *found to 0 when none was due.
 * Returns IH_OK when the attempt ran to an outcome (done, failed or dead
 * is logged), IH_ESTORE when the store failed.
 */
int	dispatch_one(const struct dispatch *d, int64_t rowid, int *found,
	    char *err, size_t errlen);

/*
 * Processes a job already claimed by d->owner (a receiver claims the
 * event in the transaction that records it), and frees it.  Returns as
 * dispatch_one() does.
 */
int	dispatch_job(const struct dispatch *d, struct store_job *job,
	    char *err, size_t errlen);

/* Most events one transaction of dispatch_drain() claims. */
#define DISPATCH_BATCH		32
/*
 * The largest event whose attempt ends inside a shared transaction: its
 * savepoint's journal (kept in memory) would hold a copy of its row.
 */
#define DISPATCH_WITHIN_MAX	(1024 * 1024)

/*
 * Processes due events of d->p, oldest first, until none is left, max
 * of them were done (max <= 0: no limit), or *stop is set (stop may be
 * NULL).  *done counts the events processed, added to what it held.
 * The one loop of the processing thread and of idemhook work.  Events
 * are claimed up to DISPATCH_BATCH per relaxed transaction, and those
 * that need nothing outside it (no action, no fetch, attempts left, at
 * most DISPATCH_WITHIN_MAX) are processed in it (dispatch_within()),
 * so that many share one commit: losing it in a crash only makes them
 * due again, their effects undone with their status.  A run goes first
 * with no savepoint per event, its switches' lines held until the
 * commit; a switch that fails undoes it, and it runs again a savepoint
 * each, where the failure stays with its event (a provider that
 * forwards keeps the savepoints: its claims note a pause's state).
 * The first that needs more ends its transaction's batch and runs after
 * the commit, as dispatch_job() runs it.  Returns IH_OK, or IH_ESTORE
 * when the store failed.
 */
int	dispatch_drain(const struct dispatch *d, long max,
	    const volatile sig_atomic_t *stop, long *done, char *err,
	    size_t errlen);

/* Could any configured action run for event_type (TYPE@STATUS by TYPE)? */
int	dispatch_has_actions(const struct config *cfg,
	    const char *event_type);

/*
 * Runs the switch for job, which the caller recorded and claimed in tx,
 * and marks it done, inside tx, for an event no action matches: the
 * switch's effects and the move to done then commit with the record, and
 * the event costs no second transaction.  The switch runs in a savepoint:
 * when it fails, only its effects are undone and the event is marked
 * failed (due again after the backoff) in tx.  No alert runs here, with
 * the write lock held: call it only while attempts are left
 * (job->ev.attempt < max_attempts), so that the event cannot die in it.
 * *done says which; the caller logs done with dispatch_within_done() once
 * tx has committed.
 * Returns IH_OK, or IH_ESTORE when tx itself failed.
 *
 * sp 0: the caller holds a savepoint of its own (or the transaction
 * alone) over the record and the switch, and undoes it all when the
 * switch fails, so none is opened here (two statements, and copies of
 * the pages the switch writes, per event).  A failed switch then
 * returns its own code with nothing marked: the caller must undo and
 * record the event again, where this runs with sp 1.
 */
int	dispatch_within(const struct dispatch *d, struct store_txn *tx,
	    const struct store_job *job, int sp, int *done, char *err,
	    size_t errlen);
void	dispatch_within_done(const struct dispatch *d,
	    const struct store_job *job);

/*
 * Inline mode: processes a job the caller has just recorded and claimed
 * (and committed), before the answer.  The job stays the caller's, to
 * free: its payload may be the request's own buffer.  No transaction is
 * open while the actions run, so other deliveries can record meanwhile.
 * Returns IH_OK once the event is durably done; IH_EIO when an action or
 * the switch failed, after which the event is deleted with its attempts,
 * so that the provider's retry is a new delivery; IH_ENOTFOUND when the
 * lease was lost; IH_ESTORE when the store failed (the event stays
 * claimed until its lease expires).  The reason is in err.
 */
int	dispatch_inline(const struct dispatch *d, struct store_job *job,
	    char *err, size_t errlen);

/*
 * A fetch hook (store_thin.h): for a claimed job whose event needs a
 * fetch (a Stripe thin event), gets the full event from the provider's
 * API, stores it with store_fetched(), and points job->ev's payload at it
 * (the job owns it) with needs_fetch cleared.  Returns IH_OK; IH_EIO
 * with the reason in why when the fetch failed (the attempt fails as a
 * failed action does: retried with backoff, then dead); IH_ENOTFOUND
 * when the lease was lost; IH_ESTORE when the store failed.
 */
typedef int (*dispatch_fetch_fn)(void *arg, const struct dispatch *d,
    struct store_job *job, char *why, size_t whylen);

/*
 * Sets the process's fetch hook, once, before any processing: only the
 * idemhook command does (handlers/cli/thin_fetch.c), so that no receiver
 * ever holds an API key or an HTTP client.  Without one, a job that
 * needs a fetch fails its attempt; stores claim none unless told to
 * (store_set_fetch()).
 */
void	dispatch_set_fetch(dispatch_fetch_fn fn, void *arg);

/*
 * The backoff before attempt+1: base * 2^(attempt-1), capped, with
 * "equal jitter" (half fixed, half random) so that retries spread out.
 */
int64_t	dispatch_backoff_ms(const struct config *cfg, long attempt);

/* Fills owner with "host:pid:random" for leases. */
void	dispatch_owner(char *owner, size_t len);

#endif
