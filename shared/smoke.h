/*
 * smoke.h -- the smoke test's events (idemhook smoke, issue 39): test
 * deliveries signed with an endpoint's own secret, recorded and processed
 * like any event of the provider, except that no action and no switch
 * runs for them, so they never set an object's current state.
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
 * counted (SMOKE_HEADER): a smoke test from cron never hides, nor
 * raises, an alarm.  Nothing here allocates beyond the parse; no state
 * is kept.
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
 * The header idemhook smoke sends with each request: a refused one is
 * not counted for the bad-signature alarm (sigfail.h), whose purpose is
 * the provider's own deliveries, which never carry it.  Unsigned, it can
 * only take a request out of that count, never let one through.
 */
#define SMOKE_HEADER	"X-Idemhook-Smoke"

/*
 * Sets *yes to 1 when ev is a smoke event as above (0 for an event
 * without its payload).  Returns IH_OK, or IH_ENOMEM (*yes 0): the
 * caller then fails the attempt rather than run its actions.
 */
int	smoke_event(const struct event *ev, int *yes);

#endif
