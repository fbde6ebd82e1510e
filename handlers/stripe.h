/*
 * stripe.h -- the Stripe scheme's parts, exposed for the unit tests and
 * the fuzz harness.  See stripe.c for the scheme.
 */
#ifndef IH_STRIPE_H
#define IH_STRIPE_H

#include <stddef.h>
#include <time.h>

#include "provider.h"
#include "verify.h"

#define STRIPE_MAX_V1	8	/* more v1 entries than this are refused */

struct stripe_sig {
	const char		*t;	/* points into the header */
	size_t			 tlen;
	size_t			 nv1;
	struct verify_mac	 v1[STRIPE_MAX_V1];
};

/*
 * Splits a Stripe-Signature header on ',' and each item on its first
 * '='.  Keeps t and every well-formed v1; ignores v0 and other schemes.
 * Returns IH_OK, or IH_EINVAL for no t, two t items, or too many v1.
 */
int	stripe_parse_header(const char *h, size_t len, struct stripe_sig *sig);

/*
 * Verifies header (NULL when absent) over body with any of the secrets.
 * Returns IH_OK, IH_EAUTH, or IH_ESTALE when the signature matches but
 * the timestamp lies outside tolerance (only when check_time is set).
 * *why gets a static reason that holds no secret.
 */
int	stripe_verify_header(const char *header, const void *body, size_t len,
	    char *const *secrets, const size_t *secret_len, size_t nsecrets,
	    time_t now, long tolerance, int check_time, const char **why);

/*
 * A thin event (Stripe's event destinations, "object": "v2.core.event")
 * once idemhook work has fetched it (handlers/cli/thin_fetch.c) is kept
 * as an object of this idemhook's own shape, which starts with these
 * bytes: {"object": "idemhook.fetched_event", "fetched_at": ISO time,
 * "event": the full v2 event as GET /v2/core/events/{id} returns it,
 * "related_object": the related object as GET <related_object.url>
 * returns it, or null}.
 */
#define STRIPE_THIN_OBJECT	"v2.core.event"
#define STRIPE_FETCHED_PREFIX	"{\"object\":\"idemhook.fetched_event\","

/*
 * The Stripe-Version of the command's calls to the v2 API (the fetch of
 * thin events, the event destinations' health): v2 is documented from
 * this version on, and Stripe's SDKs always send one.
 */
#define STRIPE_V2_VERSION	"2025-09-30.clover"

extern const struct provider stripe_provider;

#endif
