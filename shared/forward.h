/*
 * forward.h -- forwarding each event to the application that already
 * has a webhook endpoint (issue 41): idemhook stands in front of it, and
 * the application gets every event once, in order, re-signed so that its
 * own provider library still verifies it.
 *
 * The destination is a setting of the provider's, never a request's:
 *   IDEMHOOK_<PROVIDER>_FORWARD_URL	https://app.example/webhooks/stripe
 *					(plain http only to a loopback host)
 *   IDEMHOOK_<PROVIDER>_FORWARD_SIGN	provider (the default), standard,
 *					or as-received
 *   IDEMHOOK_<PROVIDER>_FORWARD_SECRET	the secret the application verifies
 *					with (provider and standard)
 *   IDEMHOOK_<PROVIDER>_FORWARD_TIMEOUT	seconds for one delivery, 1-300,
 *					default 30
 * An account (account.h) may have a destination of its own: the same
 * names suffixed @account (IDEMHOOK_STRIPE_FORWARD_URL@acme, _SIGN@acme,
 * _SECRET@acme, _TIMEOUT@acme).  Its _SIGN and _TIMEOUT fall back to the
 * provider's; its _SECRET never does.  An account without a destination
 * of its own forwards to the provider's, when there is one.  At most
 * FORWARD_ACCOUNTS_MAX accounts have one; _PAUSE_AFTER is the provider's.
 *   IDEMHOOK_<PROVIDER>_FORWARD_CONCURRENCY	deliveries in flight, 1-256,
 *					default 4
 *   IDEMHOOK_<PROVIDER>_FORWARD_RATE	deliveries a second, 0.01-1000,
 *					unset: no limit
 * (also @account, falling back to the provider's as _TIMEOUT does).
 * Every value is checked when the settings load; a wrong one is refused
 * (IH_ECONFIG) with its name, never with the secret.  A build without an
 * HTTP client (the static build) refuses IDEMHOOK_*_FORWARD_URL.
 *
 * A delivery is an action of the processing machinery (dispatch.h): it
 * runs under the event's lease, before the configured actions, after an
 * older event of the same object (the order key) has ended.  A 2xx
 * answer is success; a timeout, a connection failure, a 5xx, a 408 or a
 * 429 fails the attempt, retried with the backoff (or Retry-After, when
 * longer); any other answer fails it for good (the event is dead at
 * once, for the operator).  The attempt's error names the status, the
 * duration and the answer's first FORWARD_ANSWER_SHOW bytes, escaped.
 * Nothing logged or stored holds a secret or a signature.
 */
#ifndef IH_FORWARD_H
#define IH_FORWARD_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "forward_settings.h"
#include "forward_sign.h"

struct log_sink;
struct store;
struct store_job;
struct store_txn;

#define FORWARD_ANSWER_SHOW	200	/* answer bytes kept, escaped */

struct event;
struct provider;

/*
 * The destination of account's events (account may be NULL: the
 * default account's), or NULL when they are not forwarded.
 */
const struct config_forward *forward_dest(const struct config *cfg,
	    const char *account);

/* Is any event of cfg's provider forwarded (to any destination)? */
int	forward_any(const struct config *cfg);

/*
 * The order key of a forwarded event whose provider gives none (Stripe,
 * GitHub, Shopify): the object the provider's mapping finds in it
 * ("kind:id", object.h), so that the store claims an object's events
 * one at a time, in the order received (store.h), and the application
 * gets them so.  Writes it to out and returns 1; returns 0 (out "") when
 * ev is not forwarded, has a key already, needs a fetch, or sets no
 * object (or one whose key would not fit).
 */
int	forward_order_key(const struct config *cfg, const struct provider *p,
	    const struct event *ev, char *out, size_t outlen);

/* The outcome of one delivery. */
struct forward_result {
	int	 failed;		/* a delivery was made and failed */
	long	 status;		/* HTTP status, 0 without an answer */
	int64_t	 ms;			/* how long it took */
	int	 permanent;		/* fail for good: no retry helps */
	int64_t	 retry_after_ms;	/* Retry-After, or 0 */
};

/*
 * Order and pace, shared by every process through the store
 * (store_dest.h): at most IDEMHOOK_<PROVIDER>_FORWARD_CONCURRENCY
 * deliveries in flight to a destination (default
 * FORWARD_DEFAULT_CONCURRENCY), at most _FORWARD_RATE a second when set,
 * and the pause (a circuit breaker): after _FORWARD_PAUSE_AFTER
 * deliveries in a row failed, of any process, for a reason a retry may
 * cure (no answer, 5xx, 408, 429), the destination is paused: the store
 * claims only the last failed event (the probe), alone, each time it
 * comes due, until the application answers 2xx, so that an outage costs
 * one event's attempts, not every event's.  Pausing is logged and
 * alerted (IDEMHOOK_ALERT_ACTION, reason "forward_paused") by the one
 * process that paused it, resuming logged by the one that resumed it.
 * Nothing is dropped: held-back events wait due, spending no attempt.
 * What a process keeps: whether it has pruned the store's rows of
 * destinations its settings no longer have, and when it last logged
 * that its limits replaced other ones (FORWARD_SAID_MS apart at most
 * once per destination, so that two processes flip-flopping a row do
 * not flood the log).  Zeroed: not yet.  A process's threads (its
 * receivers' writers and its processing thread) share one: it is read
 * and written with atomic operations.
 */
#define FORWARD_SAID_MS	60000
struct forward_pause {
	int	 pruned;
	int64_t	 said_ms[FORWARD_ACCOUNTS_MAX + 1];
};

/*
 * Inside tx: brings the store's destinations of provider to cfg's
 * limits (and, once per process with fp, prunes those no longer
 * configured).  The one writer of the limits: every claim's (a
 * receiver's, in its insert, too) comes here.  With fp and log, a row
 * whose limits another process wrote otherwise is logged (setting,
 * old -> new).  On PostgreSQL their
 * rows stay locked until tx ends: a writer that records a forwarded
 * event calls it before the insert, so that two writers never wait for
 * each other's insert and row.
 */
int	forward_sync(struct store *st, struct store_txn *tx,
	    const struct config *cfg, const char *provider,
	    struct forward_pause *fp, const struct log_sink *log, char *err,
	    size_t errlen);

/*
 * Claims an event of provider as store_claim() (store_claim_fresh() when
 * fresh) does, in tx or, with tx NULL, in a transaction of its own,
 * after bringing the store's destinations to cfg's limits, and paces the
 * claimed event's destination when its rate is limited.  fp (or NULL)
 * is the process's state, log (or NULL) where forward_sync() logs.
 * Returns as store_claim() does.
 */
int	forward_claim(struct store *st, struct store_txn *tx,
	    const struct config *cfg, const char *provider,
	    struct forward_pause *fp, const struct log_sink *log, int64_t rowid,
	    int fresh, const char *owner, struct store_job *job, int *found,
	    char *err, size_t errlen);

/*
 * After job's attempt, in any mode: fr says whether a delivery was made
 * and how it went (delivered: 2xx).  Ends the destination's failures and
 * pause, or counts the failure and pauses it, through st, and logs (to
 * log) and alerts (as cfg says) the change.  A store failure is logged:
 * the next delivery counts again.
 */
void	forward_pause_note(struct store *st, const struct config *cfg,
	    const struct log_sink *log, const struct store_job *job,
	    int delivered, const struct forward_result *fr);

/*
 * Delivers job's event, of provider p, to cfg's destination, reading its
 * kept headers from st and logging a delivery to log.  Returns IH_OK for
 * a 2xx answer, with a summary ("HTTP 200 in 12 ms") in why; IH_EIO when
 * the attempt failed, fr saying whether for good and for how long the
 * application asked to be left alone, the reason in why; IH_ESTORE when
 * the event's headers could not be read (the lease then expires).
 */
int	forward_deliver(struct store *st, const struct provider *p,
	    const struct config *cfg, const struct log_sink *log,
	    const struct store_job *job, struct forward_result *fr, char *why,
	    size_t whylen);

#endif
