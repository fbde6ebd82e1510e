/*
 * smoke.h -- the smoke test's events (idemhook smoke, issue 39): test
 * deliveries signed with an endpoint's own secret, recorded and processed
 * like any event of the provider, forwarded to its destination when it
 * has one, except that no action and no switch runs for them, so they
 * never set an object's current state.
 *
 * A smoke event is recognised by what its sender signed, never by an
 * unsigned header alone: its type is SMOKE_TYPE and its body, which
 * every provider's signature or token covers, has the top-level string
 * member SMOKE_MARK, whose value begins with SMOKE_ID_PREFIX and ends
 * the event's id ("idemhook_smoke_<hex>", or GitHub's
 * "-:idemhook_smoke_<hex>").  GitHub and Shopify take the type from a
 * header anyone may rewrite; a real body sent under SMOKE_TYPE lacks the
 * mark and is processed as any other event.
 *
 * The last delivery the silence and bad-signature alarms look at leaves
 * smoke events out (store_console.h), and a refused smoke request is not
 * counted when it proves itself one (smoke_wrong_secret()): a smoke test
 * from cron never hides, nor raises, an alarm.  Nothing here allocates
 * beyond the parse; no state is kept.
 */
#ifndef IH_SMOKE_H
#define IH_SMOKE_H

#include "event.h"

#define SMOKE_TYPE	"idemhook.smoke"
#define SMOKE_ID_PREFIX	"idemhook_smoke_"
#define SMOKE_MARK	"idemhook_smoke"
/* The effect a smoke event records in place of its switch's. */
#define SMOKE_EFFECT	"smoke_test"
/*
 * The header idemhook smoke sends with each request.  Unsigned, it never
 * alone decides anything: a refused request that carries it is left out
 * of the bad-signature alarm's count (sigfail.h) only when it verifies
 * with the wrong secret derived from the endpoint's own, which only a
 * holder of that secret can make (smoke_wrong_secret()).  Anyone else's
 * refused request with it is counted like any other, at the cost of one
 * more verification.
 */
#define SMOKE_HEADER	"X-Idemhook-Smoke"
/* Room for smoke_wrong_secret()'s text and its NUL. */
#define SMOKE_WRONG_MAX	96

/*
 * Sets *yes to 1 when ev is a smoke event as above (0 for an event
 * without its payload).  Returns IH_OK, or IH_ENOMEM (*yes 0): the
 * caller then fails the attempt rather than run its actions.
 */
int	smoke_event(const struct event *ev, int *yes);

/*
 * The wrong secret idemhook smoke signs its refused copy with, derived
 * from the endpoint's own secret (an HMAC of a fixed label), in
 * provider's shape: "whsec_" and base64 for Standard Webhooks, "whsec_"
 * and hex for Stripe, hex for the others.  No endpoint holds it, and
 * nobody without the secret can compute it.  Writes it into out
 * (SMOKE_WRONG_MAX bytes).  Returns IH_OK, IH_ETOOBIG or IH_EIO.
 */
int	smoke_wrong_secret(const char *provider, const void *secret,
	    size_t secret_len, char *out, size_t outlen);

#endif
