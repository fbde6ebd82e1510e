/*
 * forward_sign.h -- the headers of a forwarded event (forward.h): the
 * signature the application's own provider library verifies, made afresh
 * for each attempt, and the headers that name the event.
 *
 * Pure: it reads its input and writes "Name: value\n" lines into the
 * caller's buffer, so that the unit tests check each scheme against the
 * providers' documented examples.  The secret is used byte for byte
 * (Standard Webhooks: "whsec_" and base64, decoded); it is written into
 * the output only where the scheme sends it as it is (Asaas's token).
 */
#ifndef IH_FORWARD_SIGN_H
#define IH_FORWARD_SIGN_H

#include <stddef.h>
#include <time.h>

enum forward_sign {
	FORWARD_SIGN_PROVIDER = 1,	/* the provider's own scheme */
	FORWARD_SIGN_STANDARD,		/* Standard Webhooks */
	FORWARD_SIGN_AS_RECEIVED	/* the original headers untouched */
};

#define FORWARD_SIGN_MAX	8192	/* every header line, at most */
#define FORWARD_SW_KEY_MAX	256	/* a Standard Webhooks key's bytes */

struct forward_sign_in {
	const char		*provider;	/* "stripe" */
	int			 mode;		/* enum forward_sign */
	const char		*secret;	/* NULL for as-received */
	size_t			 secret_len;
	const char		*event_id;	/* Standard Webhooks' id */
	const unsigned char	*body;
	size_t			 body_len;
	const char		*kept;	/* the stored headers, or NULL */
	time_t			 now;	/* the signature's timestamp */
	const char		*key;	/* the idempotency key */
};

/*
 * Writes the request's headers into out (cap bytes): Content-Type, the
 * idempotency key (Idempotency-Key), the kept headers but the original
 * signature's (all of them, untouched, for as-received), and the new
 * signature.  Returns IH_OK; IH_EINVAL for a secret the scheme cannot
 * use or a kept header that is not one line; IH_ETOOBIG when out is too
 * small.
 */
int	forward_sign_headers(const struct forward_sign_in *in, char *out,
	    size_t cap);

/*
 * Decodes a Standard Webhooks secret ("whsec_" and base64) into key (of
 * FORWARD_SW_KEY_MAX bytes).  Returns IH_OK with *keylen set, or
 * IH_EINVAL.
 */
int	forward_sign_sw_key(const char *secret, size_t len,
	    unsigned char *key, size_t *keylen);

/*
 * Is name (case-insensitive) a header that carries a signature or a
 * token, which only as-received passes on and nothing ever logs?
 */
int	forward_sign_is_secret_header(const char *name, size_t len);

#endif
