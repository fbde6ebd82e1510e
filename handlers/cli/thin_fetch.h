/*
 * thin_fetch.h -- idemhook work's fetch of Stripe's thin events.
 *
 * A thin event (an event destination's "v2.core.event" notification,
 * https://docs.stripe.com/event-destinations) carries the event's id and
 * a reference to the object it concerns, never their data.  The
 * receivers record it with needs_fetch (store_thin.h) and never claim
 * it: they hold no API key and no HTTP client.  idemhook work, with
 * IDEMHOOK_STRIPE_API_KEY, claims it like any due event and, before the
 * actions and the switch, fetches GET /v2/core/events/{id} and the
 * related object (GET <related_object.url>), as Stripe's SDKs do
 * (fetchEvent(), fetchRelatedObject()), through api_http.c with its
 * timeouts and retries.  A fetch that fails fails the attempt: retried
 * with backoff, then dead, like a failed action, and counts in failed.
 * Without a key, or in a build without an HTTP client, nothing is
 * claimed: the events wait, and a line says so.
 *
 * An account's thin events (account.h) are fetched with that account's
 * own key, IDEMHOOK_STRIPE_API_KEY@name, never another's, and their
 * object in that account's first IDEMHOOK_STRIPE_API_VERSIONS@name
 * (falling back to the provider's, as at receipt).  An account without
 * a key of its own fails the attempt, saying which setting is missing.
 *
 * One struct thin_fetch per process (the hook is process-wide, see
 * dispatch_set_fetch()), owned by cmd_work; it holds the key and
 * borrows the command's settings, never printed.
 */
#ifndef IH_THIN_FETCH_H
#define IH_THIN_FETCH_H

#include <stdint.h>

#include "api_http.h"
#include "idemhook.h"
#include "log.h"

struct store;

struct thin_fetch {
	struct cli	*c;	/* the accounts' keys and versions */
	const char	*key;	/* IDEMHOOK_STRIPE_API_KEY, or NULL */
	int		 any_key;	/* that, or an account's */
	char		 base[API_HTTP_URL_MAX];
	char		 version[64];	/* the related object's version */
	struct api_http	 http;
	int64_t		 warned_at;	/* the last "no key" line, Unix ms */
	long		 failed;	/* fetches failed since open */
};

/*
 * Reads the settings (IDEMHOOK_STRIPE_API_KEY and the accounts' keys,
 * IDEMHOOK_STRIPE_API_BASE, the first of IDEMHOOK_STRIPE_API_VERSIONS);
 * thin_fetch_ready() sets the process's fetch hook when any key is set.
 * Returns IH_OK, IH_ECONFIG (printed) or IH_ENOMEM.
 */
int	thin_fetch_open(struct thin_fetch *tf, struct cli *c);
void	thin_fetch_close(struct thin_fetch *tf);

/*
 * Before provider's drain: with any key (the default account's or an
 * account's), lets st's claims take thin events; without one, logs to
 * log (at most once a minute) that some wait, when any does, and keeps
 * them unclaimed.  A build without an HTTP client (STORE_THIN_CAN_FETCH)
 * never claims them either, and its line says why.  Returns IH_OK or
 * IH_ESTORE.
 */
int	thin_fetch_ready(struct thin_fetch *tf, struct store *st,
	    const char *provider, const struct log_sink *log, char *err,
	    size_t errlen);

#endif
