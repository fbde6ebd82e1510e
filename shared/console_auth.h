/*
 * console_auth.h -- the console's sign-in and CSRF tokens.
 *
 * Passwords are kept as a salted scrypt hash whose parameters travel in
 * the string: "$scrypt$ln=15,r=8,p=1$<salt>$<hash>" (standard base64, 16
 * bytes of salt, 32 of hash), made by `idemhook console-password`.  A
 * verified credential is remembered in the process (struct console_cache)
 * for CONSOLE_CACHE_SECONDS, as a keyed MAC of the user, the password and
 * the hash string, never as the password itself, so that each page view
 * does not cost a slow hash.
 *
 * A CSRF token is the hex HMAC-SHA256, under the install's key, of the
 * user and the day; the day before is also accepted.
 */
#ifndef IH_CONSOLE_AUTH_H
#define IH_CONSOLE_AUTH_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define CONSOLE_HASH_MAX	160
#define CONSOLE_CACHE_SLOTS	8
#define CONSOLE_CACHE_SECONDS	300
#define CONSOLE_TOKEN_LEN	64	/* hex characters */
#define CONSOLE_KEY_LEN		32
/* Most scrypt cost a hash string may ask for (2^ln, r, p). */
#define CONSOLE_SCRYPT_LN_MAX	18
#define CONSOLE_SCRYPT_LN	15

/*
 * Hashes the password pw (len bytes) with a fresh random salt into out
 * (CONSOLE_HASH_MAX bytes).  Returns IH_OK, IH_EINVAL for an empty
 * password or IH_EIO when OpenSSL fails.
 */
int	console_hash_password(const char *pw, size_t len, int ln, char *out,
	    size_t outlen);

/*
 * Checks pw against hash.  Returns IH_OK when it matches, IH_EAUTH when
 * not, IH_ECONFIG when hash is not a string console_hash_password() makes
 * (or asks for more than the maximum cost).
 */
int	console_verify_password(const char *hash, const char *pw, size_t len);

struct console_cache {
	unsigned char	key[CONSOLE_KEY_LEN];	/* random, per process */
	int		keyed;
	struct {
		unsigned char	mac[32];
		time_t		until;
	} slot[CONSOLE_CACHE_SLOTS];
};

/* Returns 1 when (user, pw, hash) was verified less than the time ago. */
int	console_cache_hit(struct console_cache *c, const char *user,
	    const char *pw, size_t pwlen, const char *hash, time_t now);
/* Remembers a verified (user, pw, hash), replacing the oldest slot. */
void	console_cache_put(struct console_cache *c, const char *user,
	    const char *pw, size_t pwlen, const char *hash, time_t now);
/* Wipes every slot and the key. */
void	console_cache_clear(struct console_cache *c);

/*
 * Splits an Authorization header "Basic <base64 user:password>" into
 * user and pw (both NUL-terminated, of sizes ulen and plen).  Returns
 * IH_OK or IH_EINVAL.  The caller wipes pw after use.
 */
int	console_basic_parse(const char *header, char *user, size_t ulen,
	    char *pw, size_t plen, size_t *pwlen);

/* Derives the install's CSRF key from a secret string (the hash). */
void	console_key_derive(const char *secret, size_t len,
	    unsigned char key[CONSOLE_KEY_LEN]);

/* The token of user for the day containing now, into out (65 bytes). */
void	console_csrf_token(const unsigned char key[CONSOLE_KEY_LEN],
	    const char *user, time_t now, char out[CONSOLE_TOKEN_LEN + 1]);

/* Returns 1 when token is user's for today or yesterday. */
int	console_csrf_ok(const unsigned char key[CONSOLE_KEY_LEN],
	    const char *user, const char *token, time_t now);

/*
 * Whether Basic credentials may travel on this request: it came over
 * TLS (console_over_tls()), or from a loopback address (127.0.0.0/8,
 * ::1, or either mapped), where nothing crosses a network.
 */
int	console_transport_ok(const char *https, const char *remote_addr,
	    int tls_proxy);

/*
 * Whether the browser reached the console over TLS: the web server's
 * HTTPS parameter is "on", or tls_proxy (IDEMHOOK_CONSOLE_TLS_PROXY=1:
 * a proxy in front terminates TLS) is set.
 */
int	console_over_tls(const char *https, int tls_proxy);

#endif
