/*
 * store_many.h -- several deliveries recorded with one wait for all their
 * inserts' answers, where a round trip per statement is what costs
 * (PostgreSQL's pipeline mode), and without a savepoint each, where the
 * savepoints are what costs (SQLite: two statements per event);
 * shared/batch.c's group commit uses it.
 *
 * Ownership: the caller's events, owners and jobs, as store.h's record
 * calls.  Limits: 64 events at once.  Failure: there is no savepoint per
 * event, so any failure fails the transaction; the caller rolls it back
 * and records the events one at a time, each in a savepoint.
 */
#ifndef IH_STORE_MANY_H
#define IH_STORE_MANY_H

#include "store.h"

/*
 * Inside tx: store_record_claim() for the n events of evs (at most 64)
 * at once, owners[i] NULL recording evs[i] unclaimed, where the backend
 * can send their inserts together and wait once for all the answers
 * (PostgreSQL's pipeline; SQLite runs them one after the other).  No
 * savepoint each: when any of them fails, so does the transaction
 * (IH_ESTORE), and the caller rolls it back and records the events one
 * at a time.  An event replacing a held one (struct event's
 * replaces_held) is for store_record_claim().  Returns IH_EINVAL,
 * changing nothing, when the backend cannot: store_record_many_ok()
 * says so first.
 */
int	store_record_claim_many(struct store *st, struct store_txn *tx,
	    const struct event *const *evs, size_t n, int64_t now_ms,
	    const char *const *owners, int64_t lease_ms,
	    struct store_result *res, struct store_job *const *jobs,
	    char *err, size_t errlen);
/*
 * store_record_claim_many() where done[i] set says that evs[i], claimed,
 * has its switch next in tx, as store_record_done() says of one event:
 * where the backend can, it goes in done.
 */
int	store_record_done_many(struct store *st, struct store_txn *tx,
	    const struct event *const *evs, size_t n, int64_t now_ms,
	    const char *const *owners, const int *done, int64_t lease_ms,
	    struct store_result *res, struct store_job *const *jobs,
	    char *err, size_t errlen);
int	store_record_many_ok(const struct store *st);
/*
 * store_begin() for a transaction that store_record_claim_many() starts:
 * the BEGIN may travel with the inserts (PostgreSQL), so a connection
 * found broken fails the inserts instead, and the caller, which then
 * rolls back and records one at a time in a transaction begun with
 * store_begin(), has the connection reopened there.
 */
int	store_begin_many(struct store *st, enum store_durability d,
	    struct store_txn **tx, char *err, size_t errlen);

/*
 * store_record_claim() of an event whose switch runs next in the same
 * transaction (batch.c, dispatch_within()).  Where the backend can
 * (SQLite, PostgreSQL), the row is inserted done, with its first attempt
 * closed as done, so that store_complete() of the job then writes
 * nothing, and store_fail() of the job turns it to failed; elsewhere it
 * is store_record_claim().  Either way the caller completes or fails the
 * job inside tx, so nothing else ever sees the difference.
 */
int	store_record_done(struct store *st, struct store_txn *tx,
	    const struct event *ev, int64_t now_ms, const char *owner,
	    int64_t lease_ms, struct store_result *res,
	    struct store_job *job, char *err, size_t errlen);

#endif
