/*
 * verify.h -- the cryptographic checks every provider's scheme is built
 * from: HMAC-SHA256 over several byte ranges, hex and base64 decoding,
 * constant-time comparison, and the signed-timestamp window.
 *
 * All of it is OpenSSL underneath; nothing here is hand-written crypto.
 * Inputs are pointer plus length and may hold any bytes.  Outputs go to
 * caller buffers whose capacity is checked before anything is written.
 */
#ifndef IH_VERIFY_H
#define IH_VERIFY_H

#include <stddef.h>
#include <time.h>

#include "verify_part.h"

/*
 * Plain CGI start-up (issue 27): a process that verifies one delivery
 * and records it in a SQLite store skips OpenSSL's legacy name tables
 * (every cipher and digest by name, which libpq's TLS needs but nothing
 * here uses: the HMAC and digests are fetched from the provider), its
 * error strings and its clean-up at exit.  verify_one_shot() says the
 * process serves one request (serve.c, under CGI); verify_first_use()
 * then, before the first HMAC, initialises OpenSSL so when db (the
 * request's store) is not a PostgreSQL URI, and otherwise does nothing.
 * The configuration file and providers are loaded as always, but by
 * make static's programs (IH_STATIC), which then read a configuration
 * file only when OPENSSL_CONF names one, and without one compute the
 * request's HMAC without fetching it from a provider (hmac_direct.h).
 */
void	verify_one_shot(void);
void	verify_first_use(const char *db);

/*
 * Computes HMAC-SHA256 keyed with key over the concatenation of parts.
 * Returns IH_OK, or IH_EINVAL if OpenSSL fails.  Each thread keeps its
 * context keyed with the last key it used (up to 256 bytes), with a
 * copy of that key to know it again, both cleansed and freed when the
 * thread ends: the same key again is not keyed anew.
 */
int	verify_hmac_sha256(const void *key, size_t keylen,
	    const struct verify_part *parts, size_t nparts,
	    unsigned char out[VERIFY_SHA256_LEN]);

/*
 * Decodes len hex digits (either case) into out, of capacity cap.
 * Returns IH_OK with *outlen set, IH_EINVAL for an odd length or a
 * non-hex digit, IH_ETOOBIG when out is too small.
 */
int	verify_hex_decode(const char *hex, size_t len, unsigned char *out,
	    size_t cap, size_t *outlen);

/*
 * Decodes standard, padded base64 into out, of capacity cap.  Returns
 * IH_OK with *outlen set to the exact decoded length, IH_EINVAL for
 * anything that is not canonical base64, IH_ETOOBIG when out is too small.
 */
int	verify_b64_decode(const char *b64, size_t len, unsigned char *out,
	    size_t cap, size_t *outlen);

/*
 * Compares a and b in time that depends only on their lengths.  Returns 1
 * when both lengths and bytes match, else 0.
 */
int	verify_equal(const void *a, size_t alen, const void *b, size_t blen);

/*
 * Parses a decimal Unix timestamp of len bytes and checks it lies within
 * tolerance seconds of now, in either direction.  Returns IH_OK with *ts
 * set, IH_EINVAL when it does not parse, IH_ESTALE when outside.  A
 * tolerance below 1 is treated as 1: the check is never disabled.
 */
int	verify_timestamp(const char *s, size_t len, time_t now, long tolerance,
	    long long *ts);

/*
 * Writes the len bytes at in as 2 * len lowercase hex digits and a NUL
 * into out, which has room for 2 * len + 1 bytes.
 */
void	verify_hex_encode(const unsigned char *in, size_t len, char *out);

/*
 * Writes the lowercase hex SHA-256 of the len bytes at p, and a NUL,
 * into out.  Returns IH_OK or IH_EINVAL when OpenSSL fails.
 */
#define VERIFY_SHA256_HEX	(2 * VERIFY_SHA256_LEN + 1)
int	verify_sha256_hex(const void *p, size_t len,
	    char out[VERIFY_SHA256_HEX]);

/*
 * The common tail of every HMAC scheme: for each secret and each
 * candidate MAC, compute the HMAC over parts and compare.  Returns IH_OK
 * when any pair matches, IH_EAUTH when none does or nothing was given.
 * Every pair is tried, so timing says nothing about which one matched.
 */
struct verify_mac {
	unsigned char	 mac[VERIFY_SHA256_LEN];
	size_t		 len;
};
int	verify_any(char *const *secrets, const size_t *secret_len,
	    size_t nsecrets, const struct verify_part *parts, size_t nparts,
	    const struct verify_mac *macs, size_t nmacs);

/*
 * The scheme GitHub and Shopify share: one MAC, in one header (NULL when
 * absent), over the raw body.  parse turns the header's value into the
 * MAC.  Returns IH_OK, or IH_EAUTH with a static *why that names no
 * secret.
 */
typedef int (*verify_parse_fn)(const char *h, size_t len,
    struct verify_mac *mac);
int	verify_body_mac(const char *header, verify_parse_fn parse,
	    const void *body, size_t len, char *const *secrets,
	    const size_t *secret_len, size_t nsecrets, const char **why);

#endif
