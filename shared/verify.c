/* verify.c -- HMAC, decoding and comparison, all through OpenSSL. */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/params.h>

#include "hmac_direct.h"
#include "ih.h"
#include "verify.h"

static int	one_shot;
/* The one request's HMAC without the provider fetch (hmac_direct.h). */
static int	direct;

/*
 * HMAC's implementation, fetched once for the process: a fetch per
 * request looked it up by name under the library's locks (about 2,400
 * instructions; make bench-pages).  Kept to the end of the process; a
 * failed fetch is tried again next time.
 */
static pthread_mutex_t	 hmac_mu = PTHREAD_MUTEX_INITIALIZER;
static EVP_MAC		*hmac_mac;

static EVP_MAC *
hmac_impl(void)
{
	EVP_MAC *mac;

	pthread_mutex_lock(&hmac_mu);
	if (hmac_mac == NULL)
		hmac_mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
	mac = hmac_mac;
	pthread_mutex_unlock(&hmac_mu);
	return mac;
}

/*
 * make static under plain CGI: the openssl.cnf path built into the
 * program is the build machine's, which means nothing on the host that
 * runs it, so the file is read only when OPENSSL_CONF names one (0.77M of
 * a static delivery's 4.8M instructions, bench-cgi).  The dynamic build
 * reads the system's file, as OpenSSL does by default.
 */
static uint64_t
config_flag(void)
{
#ifdef IH_STATIC
	if (getenv("OPENSSL_CONF") == NULL)
		return OPENSSL_INIT_NO_LOAD_CONFIG;
#endif
	return 0;
}

void
verify_one_shot(void)
{
	one_shot = 1;
}

void
verify_first_use(const char *db)
{
	if (!one_shot)
		return;
	one_shot = 0;
	if (db != NULL && (strncasecmp(db, "postgresql:", 11) == 0 ||
	    strncasecmp(db, "postgres:", 9) == 0))
		return;
	/* Worth 4.5M of a CGI delivery's 18M instructions (bench-cgi). */
	(void)OPENSSL_init_crypto(OPENSSL_INIT_NO_ADD_ALL_CIPHERS |
	    OPENSSL_INIT_NO_ADD_ALL_DIGESTS |
	    OPENSSL_INIT_NO_LOAD_CRYPTO_STRINGS | OPENSSL_INIT_NO_ATEXIT |
	    config_flag(), NULL);
	direct = config_flag() != 0;
}

/*
 * Each thread's HMAC context, keyed with the last key it used: keying
 * hashes the key's two padded blocks and sets the digest up again
 * (EVP_MAC_init with a key, about 12,000 instructions with the
 * context's allocation, make bench-pages), while the same key again
 * only copies the keyed inner state back (a NULL key).  The key's copy
 * tells the same key from another (CRYPTO_memcmp); it is cleansed with
 * the context when the thread ends.  A longer key is keyed each time.
 */
#define HMAC_KEEP_KEY	256	/* longest key whose context is kept */

struct hmac_kept {
	EVP_MAC_CTX	*ctx;
	int		 keyed;		/* ctx is keyed with key[0..keylen) */
	size_t		 keylen;
	unsigned char	 key[HMAC_KEEP_KEY];
};

static pthread_once_t	 hmac_once = PTHREAD_ONCE_INIT;
static pthread_key_t	 hmac_tls;
static int		 hmac_tls_ok;

static void
hmac_kept_free(void *p)
{
	struct hmac_kept *k = p;

	if (k == NULL)
		return;
	EVP_MAC_CTX_free(k->ctx);
	OPENSSL_cleanse(k, sizeof(*k));
	free(k);
}

static void
hmac_tls_make(void)
{
	hmac_tls_ok = pthread_key_create(&hmac_tls, hmac_kept_free) == 0;
}

/* The calling thread's kept context, made on first use; NULL if none. */
static struct hmac_kept *
hmac_kept(EVP_MAC *mac)
{
	struct hmac_kept *k;

	if (pthread_once(&hmac_once, hmac_tls_make) != 0 || !hmac_tls_ok)
		return NULL;
	k = pthread_getspecific(hmac_tls);
	if (k != NULL)
		return k;
	k = calloc(1, sizeof(*k));
	if (k == NULL)
		return NULL;
	k->ctx = EVP_MAC_CTX_new(mac);
	if (k->ctx == NULL || pthread_setspecific(hmac_tls, k) != 0) {
		hmac_kept_free(k);
		return NULL;
	}
	return k;
}

int
verify_hmac_sha256(const void *key, size_t keylen,
    const struct verify_part *parts, size_t nparts,
    unsigned char out[VERIFY_SHA256_LEN])
{
	EVP_MAC *mac;
	EVP_MAC_CTX *ctx, *own = NULL;
	struct hmac_kept *k;
	OSSL_PARAM params[2];
	size_t i, outlen = 0;
	int rc = IH_EINVAL;
	static const unsigned char empty[1];

	if (direct) {
		rc = hmac_direct_sha256(key, keylen, parts, nparts, out);
		if (rc != IH_ENOTFOUND)
			return rc;
		rc = IH_EINVAL;
	}
	mac = hmac_impl();
	if (mac == NULL)
		return IH_EINVAL;
	k = hmac_kept(mac);
	if (k == NULL) {
		own = EVP_MAC_CTX_new(mac);
		if (own == NULL)
			goto out;
	}
	ctx = k != NULL ? k->ctx : own;
	if (k != NULL && k->keyed && k->keylen == keylen &&
	    CRYPTO_memcmp(k->key, keylen ? key : empty, keylen) == 0) {
		/* The same key: its keyed state, copied back. */
		if (EVP_MAC_init(ctx, NULL, 0, NULL) != 1)
			goto out;
	} else {
		if (k != NULL)
			k->keyed = 0;
		params[0] = OSSL_PARAM_construct_utf8_string("digest",
		    "SHA256", 0);
		params[1] = OSSL_PARAM_construct_end();
		/* OpenSSL refuses a NULL key pointer even with length 0. */
		if (EVP_MAC_init(ctx, keylen ? key : empty, keylen, params) !=
		    1)
			goto out;
		if (k != NULL && keylen <= sizeof(k->key)) {
			if (keylen > 0)
				memcpy(k->key, key, keylen);
			k->keylen = keylen;
			k->keyed = 1;
		}
	}
	for (i = 0; i < nparts; i++)
		if (parts[i].len > 0 &&
		    EVP_MAC_update(ctx, parts[i].p, parts[i].len) != 1)
			goto out;
	if (EVP_MAC_final(ctx, out, &outlen, VERIFY_SHA256_LEN) != 1 ||
	    outlen != VERIFY_SHA256_LEN)
		goto out;
	rc = IH_OK;
out:
	/* A context that failed midway is keyed afresh next time. */
	if (rc != IH_OK && k != NULL)
		k->keyed = 0;
	EVP_MAC_CTX_free(own);
	return rc;
}

int
verify_hex_decode(const char *hex, size_t len, unsigned char *out,
    size_t cap, size_t *outlen)
{
	size_t i;
	int hi, lo;

	if (len % 2 != 0)
		return IH_EINVAL;
	if (len / 2 > cap)
		return IH_ETOOBIG;
	for (i = 0; i < len; i += 2) {
		hi = OPENSSL_hexchar2int((unsigned char)hex[i]);
		lo = OPENSSL_hexchar2int((unsigned char)hex[i + 1]);
		if (hi < 0 || lo < 0)
			return IH_EINVAL;
		out[i / 2] = (unsigned char)(hi << 4 | lo);
	}
	*outlen = len / 2;
	return IH_OK;
}

static int
is_b64(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	    (c >= '0' && c <= '9') || c == '+' || c == '/';
}

int
verify_b64_decode(const char *b64, size_t len, unsigned char *out,
    size_t cap, size_t *outlen)
{
	unsigned char *tmp = NULL;
	size_t i, pad = 0, n;
	int got, rc = IH_EINVAL;

	/*
	 * EVP_DecodeBlock skips blanks and reports padding as zero bytes,
	 * so the shape is checked here and the padding subtracted after.
	 */
	if (len == 0 || len % 4 != 0 || len > INT_MAX)
		goto out;
	if (b64[len - 1] == '=')
		pad++;
	if (b64[len - 2] == '=')
		pad++;
	for (i = 0; i < len - pad; i++)
		if (!is_b64((unsigned char)b64[i]))
			goto out;
	n = len / 4 * 3;
	if (n - pad > cap) {
		rc = IH_ETOOBIG;
		goto out;
	}
	tmp = malloc(n);
	if (tmp == NULL) {
		rc = IH_ENOMEM;
		goto out;
	}
	got = EVP_DecodeBlock(tmp, (const unsigned char *)b64, (int)len);
	if (got < 0 || (size_t)got != n)
		goto out;
	memcpy(out, tmp, n - pad);
	*outlen = n - pad;
	rc = IH_OK;
out:
	free(tmp);
	return rc;
}

int
verify_equal(const void *a, size_t alen, const void *b, size_t blen)
{
	if (alen != blen)
		return 0;
	return CRYPTO_memcmp(a, b, alen) == 0;
}

int
verify_timestamp(const char *s, size_t len, time_t now, long tolerance,
    long long *ts)
{
	long long v = 0;
	size_t i;

	if (len == 0 || len > 18)
		return IH_EINVAL;
	for (i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return IH_EINVAL;
		v = v * 10 + (s[i] - '0');
	}
	if (tolerance < 1)
		tolerance = 1;
	*ts = v;
	if (v > (long long)now + tolerance || v < (long long)now - tolerance)
		return IH_ESTALE;
	return IH_OK;
}

void
verify_hex_encode(const unsigned char *in, size_t len, char *out)
{
	static const char hex[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < len; i++) {
		out[2 * i] = hex[in[i] >> 4];
		out[2 * i + 1] = hex[in[i] & 0xf];
	}
	out[2 * len] = '\0';
}

int
verify_sha256_hex(const void *p, size_t len, char out[VERIFY_SHA256_HEX])
{
	unsigned char md[VERIFY_SHA256_LEN];
	unsigned int mdlen = 0;

	if (EVP_Digest(p, len, md, &mdlen, EVP_sha256(), NULL) != 1 ||
	    mdlen != VERIFY_SHA256_LEN)
		return IH_EINVAL;
	verify_hex_encode(md, sizeof(md), out);
	return IH_OK;
}

int
verify_any(char *const *secrets, const size_t *secret_len, size_t nsecrets,
    const struct verify_part *parts, size_t nparts,
    const struct verify_mac *macs, size_t nmacs)
{
	unsigned char want[VERIFY_SHA256_LEN];
	size_t i, j;
	int match = 0;

	for (i = 0; i < nsecrets; i++) {
		if (verify_hmac_sha256(secrets[i], secret_len[i], parts,
		    nparts, want) != IH_OK)
			continue;
		for (j = 0; j < nmacs; j++)
			match |= verify_equal(want, sizeof(want), macs[j].mac,
			    macs[j].len);
	}
	OPENSSL_cleanse(want, sizeof(want));
	return match ? IH_OK : IH_EAUTH;
}

int
verify_body_mac(const char *header, verify_parse_fn parse, const void *body,
    size_t len, char *const *secrets, const size_t *secret_len,
    size_t nsecrets, const char **why)
{
	struct verify_mac mac;
	struct verify_part part;

	if (header == NULL) {
		*why = "missing signature header";
		return IH_EAUTH;
	}
	if (parse(header, strlen(header), &mac) != IH_OK) {
		*why = "malformed signature header";
		return IH_EAUTH;
	}
	part.p = body;
	part.len = len;
	if (verify_any(secrets, secret_len, nsecrets, &part, 1, &mac, 1) !=
	    IH_OK) {
		*why = "signature matches no configured secret";
		return IH_EAUTH;
	}
	return IH_OK;
}
