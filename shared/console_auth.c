/* console_auth.c -- scrypt password hashes, a credential cache, CSRF. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "console_auth.h"
#include "ih.h"

#define SALT_LEN	16
#define DK_LEN		32
#define SCRYPT_MAXMEM	(1024UL * 1024 * 1024)

/* Standard base64 of n bytes into out (room for 4 * ((n + 2) / 3) + 1). */
static void
b64(const unsigned char *p, size_t n, char *out)
{
	EVP_EncodeBlock((unsigned char *)out, p, (int)n);
}

/* Decodes base64 s into out (cap bytes); returns the length or -1. */
static long
unb64(const char *s, size_t slen, unsigned char *out, size_t cap)
{
	unsigned char tmp[512];
	int n;
	size_t pad = 0;

	if (slen == 0 || slen % 4 != 0 || slen / 4 * 3 > sizeof(tmp))
		return -1;
	n = EVP_DecodeBlock(tmp, (const unsigned char *)s, (int)slen);
	if (n < 0)
		return -1;
	if (s[slen - 1] == '=')
		pad++;
	if (s[slen - 2] == '=')
		pad++;
	if ((size_t)n < pad || (size_t)n - pad > cap)
		return -1;
	n -= (int)pad;
	memcpy(out, tmp, (size_t)n);
	OPENSSL_cleanse(tmp, sizeof(tmp));
	return n;
}

static int
scrypt(const char *pw, size_t len, const unsigned char *salt,
    size_t saltlen, int ln, unsigned long r, unsigned long p,
    unsigned char *dk)
{
	return EVP_PBE_scrypt(pw, len, salt, saltlen, (uint64_t)1 << ln, r, p,
	    SCRYPT_MAXMEM, dk, DK_LEN) == 1 ? IH_OK : IH_EIO;
}

int
console_hash_password(const char *pw, size_t len, int ln, char *out,
    size_t outlen)
{
	unsigned char salt[SALT_LEN], dk[DK_LEN];
	char s64[32], d64[48];
	int n, rc;

	if (len == 0)
		return IH_EINVAL;
	if (ln < 10 || ln > CONSOLE_SCRYPT_LN_MAX)
		return IH_EINVAL;
	if (RAND_bytes(salt, sizeof(salt)) != 1)
		return IH_EIO;
	rc = scrypt(pw, len, salt, sizeof(salt), ln, 8, 1, dk);
	if (rc != IH_OK)
		return rc;
	b64(salt, sizeof(salt), s64);
	b64(dk, sizeof(dk), d64);
	OPENSSL_cleanse(dk, sizeof(dk));
	n = snprintf(out, outlen, "$scrypt$ln=%d,r=8,p=1$%s$%s", ln, s64, d64);
	return n > 0 && (size_t)n < outlen ? IH_OK : IH_ETOOBIG;
}

/* Reads a decimal number of at most 2 digits at *s, moving past it. */
static int
small_num(const char **s, unsigned long *v)
{
	unsigned long n = 0;
	int digits = 0;

	while (**s >= '0' && **s <= '9' && digits < 3) {
		n = n * 10 + (unsigned long)(**s - '0');
		(*s)++;
		digits++;
	}
	*v = n;
	return digits > 0 && digits <= 2;
}

int
console_verify_password(const char *hash, const char *pw, size_t len)
{
	unsigned char salt[64], want[DK_LEN], got[DK_LEN];
	unsigned long ln, r, p;
	const char *s = hash, *d;
	long saltlen;
	int rc;

	if (hash == NULL || strncmp(s, "$scrypt$ln=", 11) != 0)
		return IH_ECONFIG;
	s += 11;
	if (!small_num(&s, &ln) || strncmp(s, ",r=", 3) != 0)
		return IH_ECONFIG;
	s += 3;
	if (!small_num(&s, &r) || strncmp(s, ",p=", 3) != 0)
		return IH_ECONFIG;
	s += 3;
	if (!small_num(&s, &p) || *s != '$')
		return IH_ECONFIG;
	s++;
	if (ln < 1 || ln > CONSOLE_SCRYPT_LN_MAX || r < 1 || r > 16 ||
	    p < 1 || p > 4)
		return IH_ECONFIG;
	d = strchr(s, '$');
	if (d == NULL)
		return IH_ECONFIG;
	saltlen = unb64(s, (size_t)(d - s), salt, sizeof(salt));
	if (saltlen < 8 || unb64(d + 1, strlen(d + 1), want,
	    sizeof(want)) != DK_LEN)
		return IH_ECONFIG;
	rc = scrypt(pw, len, salt, (size_t)saltlen, (int)ln, r, p, got);
	if (rc == IH_OK)
		rc = CRYPTO_memcmp(got, want, DK_LEN) == 0 ? IH_OK : IH_EAUTH;
	OPENSSL_cleanse(got, sizeof(got));
	return rc;
}

static void
cache_mac(struct console_cache *c, const char *user, const char *pw,
    size_t pwlen, const char *hash, unsigned char mac[32])
{
	unsigned char msg[1024];
	unsigned int n = 32;
	size_t ul = strlen(user), hl = strlen(hash);

	memset(mac, 0, 32);
	if (!c->keyed) {
		if (RAND_bytes(c->key, sizeof(c->key)) != 1)
			return;
		c->keyed = 1;
	}
	if (ul + hl + pwlen + 2 > sizeof(msg))
		return;
	/* NULs between the parts: no two triples give the same input. */
	memcpy(msg, user, ul);
	msg[ul] = '\0';
	memcpy(msg + ul + 1, hash, hl);
	msg[ul + 1 + hl] = '\0';
	memcpy(msg + ul + hl + 2, pw, pwlen);
	if (HMAC(EVP_sha256(), c->key, sizeof(c->key), msg, ul + hl + pwlen + 2,
	    mac, &n) == NULL)
		memset(mac, 0, 32);
	OPENSSL_cleanse(msg, sizeof(msg));
}

int
console_cache_hit(struct console_cache *c, const char *user, const char *pw,
    size_t pwlen, const char *hash, time_t now)
{
	unsigned char mac[32];
	size_t i;
	int hit = 0;

	if (!c->keyed)
		return 0;
	cache_mac(c, user, pw, pwlen, hash, mac);
	for (i = 0; i < CONSOLE_CACHE_SLOTS; i++)
		if (c->slot[i].until > now &&
		    c->slot[i].until - now <= CONSOLE_CACHE_SECONDS &&
		    CRYPTO_memcmp(c->slot[i].mac, mac, 32) == 0)
			hit = 1;
	OPENSSL_cleanse(mac, sizeof(mac));
	return hit;
}

void
console_cache_put(struct console_cache *c, const char *user, const char *pw,
    size_t pwlen, const char *hash, time_t now)
{
	size_t i, old = 0;

	for (i = 1; i < CONSOLE_CACHE_SLOTS; i++)
		if (c->slot[i].until < c->slot[old].until)
			old = i;
	cache_mac(c, user, pw, pwlen, hash, c->slot[old].mac);
	c->slot[old].until = c->keyed ? now + CONSOLE_CACHE_SECONDS : 0;
}

void
console_cache_clear(struct console_cache *c)
{
	OPENSSL_cleanse(c, sizeof(*c));
}

int
console_basic_parse(const char *header, char *user, size_t ulen, char *pw,
    size_t plen, size_t *pwlen)
{
	unsigned char buf[384];
	const char *s;
	char *colon;
	long n;

	*pwlen = 0;
	if (header == NULL || strncasecmp(header, "Basic ", 6) != 0)
		return IH_EINVAL;
	for (s = header + 6; *s == ' '; s++)
		;
	n = unb64(s, strlen(s), buf, sizeof(buf) - 1);
	if (n < 0)
		return IH_EINVAL;
	buf[n] = '\0';
	colon = memchr(buf, ':', (size_t)n);
	if (colon == NULL || memchr(buf, '\0', (size_t)n) != NULL ||
	    (size_t)(colon - (char *)buf) >= ulen ||
	    (size_t)(n - (colon - (char *)buf) - 1) >= plen) {
		OPENSSL_cleanse(buf, sizeof(buf));
		return IH_EINVAL;
	}
	memcpy(user, buf, (size_t)(colon - (char *)buf));
	user[colon - (char *)buf] = '\0';
	*pwlen = (size_t)(n - (colon - (char *)buf) - 1);
	memcpy(pw, colon + 1, *pwlen);
	pw[*pwlen] = '\0';
	OPENSSL_cleanse(buf, sizeof(buf));
	return IH_OK;
}

void
console_key_derive(const char *secret, size_t len,
    unsigned char key[CONSOLE_KEY_LEN])
{
	static const char label[] = "idemhook console csrf key";
	unsigned int n = CONSOLE_KEY_LEN;

	if (HMAC(EVP_sha256(), secret, (int)len, (const unsigned char *)label,
	    sizeof(label) - 1, key, &n) == NULL)
		memset(key, 0, CONSOLE_KEY_LEN);
}

static void
token_for(const unsigned char key[CONSOLE_KEY_LEN], const char *user,
    long day, char out[CONSOLE_TOKEN_LEN + 1])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char mac[32];
	unsigned int n = sizeof(mac);
	char msg[320];
	int len, i;

	len = snprintf(msg, sizeof(msg), "csrf\n%ld\n%.256s", day, user);
	if (len < 0 || HMAC(EVP_sha256(), key, CONSOLE_KEY_LEN,
	    (const unsigned char *)msg, (size_t)len, mac, &n) == NULL)
		memset(mac, 0, sizeof(mac));
	for (i = 0; i < 32; i++) {
		out[2 * i] = hex[mac[i] >> 4];
		out[2 * i + 1] = hex[mac[i] & 15];
	}
	out[CONSOLE_TOKEN_LEN] = '\0';
}

void
console_csrf_token(const unsigned char key[CONSOLE_KEY_LEN],
    const char *user, time_t now, char out[CONSOLE_TOKEN_LEN + 1])
{
	token_for(key, user, (long)(now / 86400), out);
}

int
console_csrf_ok(const unsigned char key[CONSOLE_KEY_LEN], const char *user,
    const char *token, time_t now)
{
	char want[CONSOLE_TOKEN_LEN + 1];
	long day = (long)(now / 86400), d;
	int ok = 0;

	if (token == NULL || strlen(token) != CONSOLE_TOKEN_LEN)
		return 0;
	for (d = day - 1; d <= day; d++) {
		token_for(key, user, d, want);
		if (CRYPTO_memcmp(want, token, CONSOLE_TOKEN_LEN) == 0)
			ok = 1;
	}
	return ok;
}

int
console_over_tls(const char *https, int tls_proxy)
{
	return tls_proxy || (https != NULL && strcasecmp(https, "on") == 0);
}

int
console_transport_ok(const char *https, const char *remote_addr,
    int tls_proxy)
{
	struct in_addr a4;
	struct in6_addr a6;

	if (console_over_tls(https, tls_proxy))
		return 1;
	if (remote_addr == NULL)
		return 0;
	if (inet_pton(AF_INET, remote_addr, &a4) == 1)
		return (ntohl(a4.s_addr) >> 24) == 127;
	if (inet_pton(AF_INET6, remote_addr, &a6) != 1)
		return 0;
	if (IN6_IS_ADDR_LOOPBACK(&a6))
		return 1;
	return IN6_IS_ADDR_V4MAPPED(&a6) && a6.s6_addr[12] == 127;
}
