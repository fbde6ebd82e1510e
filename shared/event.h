/*
 * event.h -- one event as the receive and process path reads it: a
 * borrowed view, defined once.  Whoever fills it owns the bytes it
 * points at and keeps them alive while the view is used: ingest.c (the
 * request's buffers, for one delivery), or a struct store_job (its own
 * copies, for one claim; store.h).  The store, the provider's switch and
 * mapping, and the actions read it and keep no pointer past their call.
 * Each reader tolerates NULL or 0 in the fields it does not use.
 */
#ifndef IH_EVENT_H
#define IH_EVENT_H

#include <stddef.h>
#include <stdint.h>

struct object_found;

struct event {
	/* Always set. */
	const char		*provider;
	const char		*event_id;
	const char		*event_type;
	const char		*subtype;	/* or NULL */
	const char		*account;	/* NULL: "default" */
	const unsigned char	*payload;	/* or NULL once purged */
	size_t			 payload_len;
	/* Set on receipt (ingest.c); NULL once read back from the store. */
	const char		*order_key;	/* or NULL */
	const char		*headers;	/* "name: value\n" lines */
	const char		*fingerprint;	/* payload's SHA-256 hex */
	const char		*status;	/* NULL, quarantined, held */
	/* Or NULL: why it is held, recorded as its last_error. */
	const char		*held_why;
	const char		*api_version;	/* or NULL (version 7) */
	/* Stripe Connect's "account" of the signed body, or NULL (v. 11). */
	const char		*source_account;
	/*
	 * Set when the event is of a version the settings expect and its
	 * version is signed: a held event of the same id (another version)
	 * is deleted in the same transaction, and this one recorded in its
	 * place.
	 */
	int			 replaces_held;
	/*
	 * Set for a thin event (Stripe's v2 notification, version 9): it is
	 * recorded unclaimed, and only a processor with a fetch hook
	 * (dispatch.h; idemhook work) claims it and fetches the full event.
	 */
	int			 needs_fetch;
	/* Set once the event has a row: a claim, or a record that claims. */
	int64_t			 rowid;
	long			 attempt;	/* 1: the first since queued */
	int64_t			 received_at;	/* Unix ms */
	/*
	 * Or NULL: what the provider's mapping finds in this payload, as the
	 * receipt's parse read it (provider.h, provider_memo_found()), used
	 * by dispatch_object() in place of a second parse.  Set only while
	 * the payload is the request's own (ingest.c).
	 */
	const struct object_found *found;
};

#endif
