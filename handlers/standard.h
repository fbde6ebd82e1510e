/*
 * standard.h -- the Standard Webhooks scheme's parts, exposed for the
 * unit tests and the fuzz harness.  See standard.c for the scheme.
 */
#ifndef IH_STANDARD_H
#define IH_STANDARD_H

#include <stddef.h>
#include <time.h>

#include "provider.h"
#include "verify.h"

#define STANDARD_MAX_V1		8	/* more v1 entries are refused */
#define STANDARD_KEY_MAX	512	/* longest decoded secret, bytes */
#define STANDARD_ID_MAX		256	/* longest webhook-id accepted */

struct standard_sig {
	size_t			 nv1;
	struct verify_mac	 v1[STANDARD_MAX_V1];
};

/*
 * Splits a webhook-signature value on spaces and each entry on its first
 * ','.  Keeps every v1 whose base64 decodes to 32 bytes; skips other
 * versions (v1a is ed25519) and malformed entries.  Returns IH_OK, or
 * IH_EINVAL for more than STANDARD_MAX_V1 v1 entries.
 */
int	standard_parse_header(const char *h, size_t len,
	    struct standard_sig *sig);

/*
 * Decodes a secret, "whsec_" and base64 or the base64 alone, into the
 * HMAC key in out (capacity cap).  Returns IH_OK with *outlen set,
 * IH_EINVAL when it is not base64, IH_ETOOBIG when it does not fit.
 */
int	standard_decode_secret(const char *s, size_t len, unsigned char *out,
	    size_t cap, size_t *outlen);

/*
 * Verifies the three headers (each NULL when absent) over body with the
 * key decoded from each of the secrets.  Returns IH_OK, IH_EAUTH, or
 * IH_ESTALE when a signature matches but the timestamp lies outside
 * tolerance in either direction (only when check_time is set).  *why
 * gets a static reason that holds no secret.
 */
int	standard_verify_headers(const char *id, const char *ts,
	    const char *sigs, const void *body, size_t len,
	    char *const *secrets, const size_t *secret_len, size_t nsecrets,
	    time_t now, long tolerance, int check_time, const char **why);

extern const struct provider standard_provider;

#endif
