/*
 * store_thin.h -- the store's side of Stripe's thin events (version 9).
 *
 * A thin notification carries an event's id and type, not its data; it
 * is recorded with needs_fetch set (struct event), and only a process
 * that can fetch the full event from the provider's API (idemhook work,
 * which holds the API key) may claim it.  Which events a store's claims
 * (store_claim(), store_due()) take is its fetch mode, STORE_FETCH_NONE
 * for every store that is opened: the receivers never take a thin event.
 * Once fetched, store_fetched() puts the full event in place of the
 * notification's payload and clears the mark, under the claim's lease.
 * Failures are IH_ESTORE with the cause in err.
 */
#ifndef IH_STORE_THIN_H
#define IH_STORE_THIN_H

#include <stddef.h>

#include "store.h"

enum store_fetch {
	STORE_FETCH_NONE = 0,	/* claims skip events that need a fetch */
	STORE_FETCH_ANY = 1,	/* claims take every due event */
	STORE_FETCH_ONLY = 2	/* only events that need a fetch */
};

/*
 * Whether this build's idemhook work can fetch a thin event: not in a
 * build without an HTTP client (NO_CURL=1, as the static build is; the
 * Makefile then defines IH_NO_HTTP_CLIENT), which never claims one.
 * STORE_THIN_NO_CLIENT says why it waits there, in idemhook work's line,
 * show and the console's event page.
 */
#ifdef IH_NO_HTTP_CLIENT
#define STORE_THIN_CAN_FETCH	0
#else
#define STORE_THIN_CAN_FETCH	1
#endif
#define STORE_THIN_NO_CLIENT	"this build has no HTTP client (made " \
	"without libcurl, as the static build is), so it cannot fetch " \
	"the event: it waits until the idemhook work of a dynamic build " \
	"runs on this store"

/* Sets the fetch mode of st's later claims and due checks. */
void	store_set_fetch(struct store *st, enum store_fetch mode);

/*
 * For a claimed job that needed a fetch: replaces its payload with the
 * len bytes at payload, its kept headers with headers, and clears its
 * mark, in one relaxed transaction of its own.  Returns IH_OK,
 * IH_ENOTFOUND when owner no longer holds the lease (nothing changes),
 * or IH_ESTORE.
 */
int	store_fetched(struct store *st, const struct store_job *job,
	    const char *owner, const unsigned char *payload, size_t len,
	    const char *headers, char *err, size_t errlen);

#endif
