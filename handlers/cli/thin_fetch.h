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
 * with backoff, then dead, like a failed action.  Without a key nothing
 * is claimed: the events wait, and a line says so.
 *
 * One struct thin_fetch per process (the hook is process-wide, see
 * dispatch_set_fetch()), owned by cmd_work; it holds the key, never
 * printed.
 */
#ifndef IH_THIN_FETCH_H
#define IH_THIN_FETCH_H

#include <stdint.h>

#include "api_http.h"
#include "idemhook.h"
#include "log.h"

struct store;

struct thin_fetch {
	const char	*key;	/* IDEMHOOK_STRIPE_API_KEY, or NULL */
	char		 base[API_HTTP_URL_MAX];
	char		 version[64];	/* the related object's version */
	struct api_http	 http;
	int64_t		 warned_at;	/* the last "no key" line, Unix ms */
};

/*
 * Reads the settings (IDEMHOOK_STRIPE_API_KEY, IDEMHOOK_STRIPE_API_BASE,
 * the first of IDEMHOOK_STRIPE_API_VERSIONS) and, with a key, sets the
 * process's fetch hook.  Returns IH_OK, IH_ECONFIG (printed) or
 * IH_ENOMEM.
 */
int	thin_fetch_open(struct thin_fetch *tf, struct cli *c);
void	thin_fetch_close(struct thin_fetch *tf);

/*
 * Before provider's drain: with a key, lets st's claims take thin events;
 * without one, logs to log (at most once a minute) that some wait, when
 * any does, and keeps them unclaimed.  Returns IH_OK or IH_ESTORE.
 */
int	thin_fetch_ready(struct thin_fetch *tf, struct store *st,
	    const char *provider, const struct log_sink *log, char *err,
	    size_t errlen);

#endif
