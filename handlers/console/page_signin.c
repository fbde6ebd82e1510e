/*
 * page_signin.c -- who is asking: HTTP Basic against the configured
 * user and hash (over TLS or loopback only), or the web server's
 * REMOTE_USER, with the failed sign-in budget kept in the store.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>

#include "config.h"
#include "console_int.h"
#include "console_auth.h"
#include "console_proxy.h"
#include "console_throttle.h"
#include "ih.h"
#include "log.h"
#include "store.h"

#define PASS_MAX		256

/*
 * Signs the request in.  Returns 1 with pg->user set, or 0 with the
 * refusal written into the page.
 */
int
console_sign_in(struct page *pg, const struct config_source *src, size_t nsrc)
{
	struct console *c = pg->c;
	const char *mode = config_lookup(src, nsrc, "IDEMHOOK_CONSOLE_AUTH");
	const char *user = config_lookup(src, nsrc, "IDEMHOOK_CONSOLE_USER");
	const char *hash = config_lookup(src, nsrc,
	    "IDEMHOOK_CONSOLE_PASSWORD_HASH");
	const char *key = config_lookup(src, nsrc, "IDEMHOOK_CONSOLE_KEY");
	const char *ru, *hdr, *ra = console_param(pg, "REMOTE_ADDR");
	const char *proxy = config_lookup(src, nsrc,
	    "IDEMHOOK_CONSOLE_TRUSTED_PROXY");
	char ca[CONSOLE_ADDR_MAX];
	char u[USER_MAX], pw[PASS_MAX], cu[LOG_CLEAN_SIZE];
	char cra[LOG_CLEAN_SIZE], err[STORE_ERR_MAX];
	size_t pwlen = 0;
	time_t now = (time_t)(pg->now_ms / 1000);
	enum console_verdict v = CONSOLE_WRONG;
	long retry = 0;
	int rc, known, ok = 0;

	if (mode != NULL && strcmp(mode, "server") == 0) {
		ru = console_param(pg, "REMOTE_USER");
		if (key == NULL) {
			log_emit(&pg->sink, "console not_configured: with "
			    "IDEMHOOK_CONSOLE_AUTH=server set "
			    "IDEMHOOK_CONSOLE_KEY (random, 32+ characters) "
			    "for the CSRF tokens");
			console_error_page(pg, 500, "not_configured",
			    "the console's settings are incomplete (see the "
			    "error log)");
			return 0;
		}
		if (ru == NULL || *ru == '\0' ||
		    strlen(ru) >= sizeof(pg->user)) {
			console_error_page(pg, 401, "no_remote_user",
			    "the web server did not authenticate this request");
			return 0;
		}
		snprintf(pg->user, sizeof(pg->user), "%s", ru);
		console_key_derive(key, strlen(key), pg->key);
		return 1;
	}
	if ((mode != NULL && strcmp(mode, "basic") != 0) || user == NULL ||
	    hash == NULL) {
		log_emit(&pg->sink, "console not_configured: set "
		    "IDEMHOOK_CONSOLE_USER and IDEMHOOK_CONSOLE_PASSWORD_HASH "
		    "(from: idemhook console-password), or "
		    "IDEMHOOK_CONSOLE_AUTH=server behind the web server's own "
		    "authentication");
		console_error_page(pg, 500, "not_configured",
		    "the console is not configured (see the error log)");
		return 0;
	}
	/* Budgets per client, also behind one proxy (console_proxy.h). */
	if (console_client_addr(ra, console_param(pg, "HTTP_X_FORWARDED_FOR"),
	    proxy, ca, sizeof(ca), err, sizeof(err)) != IH_OK) {
		log_emit(&pg->sink, "console not_configured: %s", err);
		console_error_page(pg, 500, "not_configured",
		    "the console's settings are wrong (see the error log)");
		return 0;
	}
	log_clean(cra, ca, (size_t)-1);
	if (!console_transport_ok(console_param(pg, "HTTPS"), ra,
	    pg->tls_proxy)) {
		log_emit(&pg->sink, "console refused=plain_http remote=%s: "
		    "Basic sign-in needs HTTPS, a loopback client, or "
		    "IDEMHOOK_CONSOLE_TLS_PROXY=1 behind a proxy that "
		    "terminates TLS", cra);
		console_error_page(pg, 403, "https_required",
		    "sign in over HTTPS: this console does not take a password "
		    "over plain HTTP");
		return 0;
	}
	hdr = console_param(pg, "HTTP_AUTHORIZATION");
	if (hdr == NULL || *hdr == '\0') {
		pg->ask_auth = 1;
		console_error_page(pg, 401, "unauthorized", "sign in");
		return 0;
	}
	rc = console_basic_parse(hdr, u, sizeof(u), pw, sizeof(pw), &pwlen);
	known = rc == IH_OK && strlen(u) == strlen(user) &&
	    CRYPTO_memcmp(u, user, strlen(user)) == 0;
	/* A credential verified lately costs no budget and no scrypt. */
	if (known && console_cache_hit(&c->cache, u, pw, pwlen, hash, now))
		ok = 1;
	else if (rc == IH_OK) {
		rc = console_throttle_signin(c->store.st, ca, u,
		    known ? hash : NULL, pw, pwlen, pg->now_ms, &v, &retry,
		    err, sizeof(err));
		ok = rc == IH_OK && v == CONSOLE_SIGNED_IN;
		if (ok)
			console_cache_put(&c->cache, u, pw, pwlen, hash, now);
	}
	OPENSSL_cleanse(pw, sizeof(pw));
	if (rc == IH_ECONFIG) {
		log_emit(&pg->sink, "console not_configured: "
		    "IDEMHOOK_CONSOLE_PASSWORD_HASH is not a hash from "
		    "idemhook console-password");
		console_error_page(pg, 500, "not_configured",
		    "the console's password hash is malformed");
		return 0;
	}
	if (rc == IH_ESTORE) {
		console_store_error(pg, err, "be used");
		pg->retry_after = 5;
		return 0;
	}
	if (!ok) {
		log_clean(cu, rc == IH_OK ? u : "-", (size_t)-1);
		if (v == CONSOLE_WAIT) {
			log_emit(&pg->sink, "console auth=throttled user=%s "
			    "remote=%s retry_after=%ld", cu, cra, retry);
			pg->retry_after = retry;
			console_error_page(pg, 429, "too_many_attempts",
			    "too many failed sign-ins; wait before trying "
			    "again");
			return 0;
		}
		log_emit(&pg->sink, "console auth=failed user=%s remote=%s",
		    cu, cra);
		pg->ask_auth = 1;
		console_error_page(pg, 401, "unauthorized", "wrong user or "
		    "password");
		return 0;
	}
	snprintf(pg->user, sizeof(pg->user), "%s", u);
	console_key_derive(key != NULL ? key : hash, strlen(key != NULL ? key :
	    hash), pg->key);
	return 1;
}
