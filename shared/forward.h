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

struct dispatch;
struct store_job;

#define FORWARD_ANSWER_SHOW	200	/* answer bytes kept, escaped */

struct event;
struct provider;

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
 * The pause (a circuit breaker) of one process's deliveries to one
 * destination: after IDEMHOOK_<PROVIDER>_FORWARD_PAUSE_AFTER deliveries
 * in a row failed for a reason a retry may cure (no answer, 5xx, 408,
 * 429), the process claims none of the provider's due events until the
 * last failed one is due again, then tries that one alone (the probe),
 * again and again, until the application answers 2xx: so that an
 * outage costs one event's attempts, not every event's.  Pausing is
 * logged and alerted (IDEMHOOK_ALERT_ACTION, reason "forward_paused")
 * once, resuming logged.  Nothing is dropped: events wait due.  The
 * state is the process's own (the processing thread's, idemhook
 * work's): each process pauses and probes by itself.  Zeroed: running.
 */
struct forward_pause {
	long	 failures;	/* deliveries failed in a row */
	int	 paused;
	int64_t	 until_ms;	/* paused: no claim before this */
	int64_t	 probe;		/* paused: the event tried first (rowid) */
};

/*
 * May the process claim the provider's due events at now_ms?  Returns 1
 * (with *probe the row to claim first, or 0: any), 0 while paused.
 */
int	forward_pause_gate(const struct forward_pause *fp, int64_t now_ms,
	    int64_t *probe);

/* The probe was not due (another process took it): the pause ends. */
void	forward_pause_end(struct forward_pause *fp);

/*
 * After job's attempt: fr says whether a delivery was made and how it
 * went (delivered: 2xx), next_ms when the job is due again.  Updates
 * d->pause (when not NULL) and logs and alerts the change.
 */
void	forward_pause_note(const struct dispatch *d,
	    const struct store_job *job, int delivered,
	    const struct forward_result *fr, int64_t next_ms);

/*
 * Delivers job's event to d->cfg's destination.  Returns IH_OK for a 2xx
 * answer, with a summary ("HTTP 200 in 12 ms") in why; IH_EIO when the
 * attempt failed, fr saying whether for good and for how long the
 * application asked to be left alone, the reason in why; IH_ESTORE when
 * the event's headers could not be read (the lease then expires).
 */
int	forward_deliver(const struct dispatch *d, const struct store_job *job,
	    struct forward_result *fr, char *why, size_t whylen);

#endif
