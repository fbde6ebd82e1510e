/*
 * hmac_direct.h -- HMAC-SHA256 for a process that verifies one request
 * and reads no OpenSSL configuration (make static under plain CGI),
 * without OpenSSL 3's fetch from its default provider.
 *
 * The first fetch of HMAC and of SHA-256 builds every MAC and every
 * digest method the default provider offers, 31 of them, to find one:
 * 0.82M of a static CGI delivery's 3.0M instructions (make bench-cgi).
 * Here OpenSSL's own HMAC (HMAC_CTX) runs over OpenSSL's own SHA-256
 * functions (SHA256_Init/Update/Final), the very code the default
 * provider's "SHA256" calls, wrapped in a digest method made for the
 * call.  Nothing of the construction is written here.  Only when no
 * configuration was read: a configuration may choose other providers
 * (FIPS), which only the fetch honours (verify.c decides).
 *
 * Same contract as verify_hmac_sha256() (verify.h), but nothing is kept
 * between calls: the context is cleansed and freed before returning.
 * Returns IH_OK, IH_EINVAL if OpenSSL fails or the key is longer than
 * INT_MAX, or IH_ENOTFOUND when this OpenSSL was built without the
 * interfaces (no-deprecated): the caller then fetches as usual.
 */
#ifndef IH_HMAC_DIRECT_H
#define IH_HMAC_DIRECT_H

#include <stddef.h>

#include "verify_part.h"

int	hmac_direct_sha256(const void *key, size_t keylen,
	    const struct verify_part *parts, size_t nparts,
	    unsigned char out[VERIFY_SHA256_LEN]);

#endif
