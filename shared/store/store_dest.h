/*
 * store_dest.h -- the state of each forwarding destination, shared by
 * every process through the store (the destinations table, version 12):
 * its limits (with the pause's threshold since version 15), its pause
 * and its rate (forward.h says what they mean).
 *
 * A destination is a provider and the account whose FORWARD_URL it is:
 * "default" for the provider's own, which every account without a
 * FORWARD_URL@account shares.  An event's destination is its account's
 * row when there is one, else its provider's "default" row, else none
 * (not forwarded).  The store's claims (store_claim(), store_due()) hold
 * back an event whose destination is paused (only the probe goes, alone),
 * has its concurrency's deliveries in flight (events processing under a
 * live lease: a crashed holder's slot ends with its lease), or whose
 * rate's next time has not come.  Nothing here keeps a pointer past its
 * call; strings are copied into the out-structures.  Every function
 * returns IH_OK, IH_EINVAL (a write needing a transaction without one) or
 * IH_ESTORE, with the cause in err.
 */
#ifndef IH_STORE_DEST_H
#define IH_STORE_DEST_H

#include <stddef.h>
#include <stdint.h>

#include "store.h"

/* One destination's limits, as the settings give them. */
struct store_dest {
	const char	*account;	/* "default": the provider's */
	long		 concurrency;	/* deliveries in flight, >= 1 */
	int64_t		 rate_ms;	/* between two starts; 0: no limit */
	long		 pause_after;	/* failures that pause; 0: never */
};

/* What a sync replaced of one row: limits another process wrote. */
struct store_dest_was {
	int		 changed;	/* 1: the row held other limits */
	long		 concurrency;	/* the row's, before */
	int64_t		 rate_ms;
	long		 pause_after;
};

/*
 * Inside tx, before claiming provider's events: writes the limits of
 * its n destinations where they differ from the rows (a row is created
 * when missing), and, when prune is set, deletes the provider's rows of
 * destinations no longer configured.  was (NULL, or n entries) says,
 * for each destination, whether its existing row held other limits and
 * which (a created row is no change).  On PostgreSQL the rows stay
 * locked until tx ends, so that the claims of every process that could
 * exceed a limit together take turns.
 */
int	store_dest_sync(struct store *st, struct store_txn *tx,
	    const char *provider, const struct store_dest *dests, size_t n,
	    int prune, struct store_dest_was *was, char *err, size_t errlen);

/*
 * Inside tx, after claiming an event of account's destination whose
 * rate is limited: moves its next free time on by rate_ms.
 */
int	store_dest_claimed(struct store *st, struct store_txn *tx,
	    const char *provider, const char *account, int64_t now_ms,
	    char *err, size_t errlen);

/*
 * A delivery to account's destination answered 2xx: its failures in a
 * row end, and so does a pause (*resumed 1 for the call that ended it,
 * with *failures the count it ended).  Writes nothing when there was
 * neither.
 */
int	store_dest_ok(struct store *st, const char *provider,
	    const char *account, int *resumed, long *failures, char *err,
	    size_t errlen);

/*
 * A delivery of the event at rowid to account's destination failed for
 * a reason a retry may cure: counts it, and pauses the destination with
 * rowid as its probe once the row's pause_after (> 0) failures are in a
 * row: the stored threshold, the same for every process.  *paused is 1
 * for the one call, of any process, that paused it.
 */
int	store_dest_failed(struct store *st, const char *provider,
	    const char *account, int64_t rowid, int64_t now_ms,
	    long *failures, int *paused, char *err, size_t errlen);

/* A destination as it stands, for the operator. */
struct store_dest_state {
	int		 found;		/* 0: not forwarded */
	char		 account[64];	/* the destination's */
	long		 concurrency;
	int64_t		 rate_ms, next_at;
	long		 pause_after;
	long		 failures;
	int		 paused;
	int64_t		 probe;		/* paused: the probe's rowid */
	char		 probe_id[256];	/* and its event id, or "" */
	int64_t		 in_flight;	/* processing under a live lease */
};

/*
 * The destination of the events of provider's account (NULL: the
 * default account) at now_ms, into *out (out->found 0 when none).
 */
int	store_dest_state(struct store *st, const char *provider,
	    const char *account, int64_t now_ms,
	    struct store_dest_state *out, char *err, size_t errlen);

/*
 * Why an event that is due otherwise (not behind its object, its retry
 * time come) still waits at now_ms, given its destination ds and its
 * rowid: "paused", "concurrency", "rate", or NULL (it does not).
 */
const char *store_dest_why(const struct store_dest_state *ds,
	    int64_t rowid, int64_t now_ms);

/*
 * Sets x's forward_paused and its wait_paused, wait_concurrency and
 * wait_rate from ds: due is the number of x's pending events due
 * otherwise (not behind their object, their retry time come), probe_due
 * 1 when ds's probe is among them.
 */
void	store_dest_waiting(const struct store_dest_state *ds, int64_t due,
	    int probe_due, int64_t now_ms, struct store_stats *x);

#endif
