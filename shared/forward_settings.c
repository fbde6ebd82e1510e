/* forward_settings.c -- the settings of forwarding (forward.h). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "config.h"
#include "forward_http.h"
#include "forward_settings.h"
#include "forward_sign.h"
#include "ih.h"

/* Looks up IDEMHOOK_<PROVIDER>_FORWARD_<key>, naming it in name. */
static const char *
lookup(const struct config_source *src, size_t nsrc, const char *provider,
    const char *key, char *name, size_t cap)
{
	size_t i;
	int n;

	n = snprintf(name, cap, "IDEMHOOK_%s_FORWARD_%s", provider, key);
	if (n < 0 || (size_t)n >= cap)
		return NULL;
	for (i = 9; name[i] != '\0' && name[i] != '_'; i++)
		name[i] = (char)toupper((unsigned char)name[i]);
	return config_lookup(src, nsrc, name);
}

/* Checks the secret against the scheme that will use it. */
static int
secret_check(const struct config *cfg, const char *provider,
    const char *name, char *err, size_t errlen)
{
	unsigned char key[FORWARD_SW_KEY_MAX];
	size_t keylen, i;
	int sw = cfg->forward_sign == FORWARD_SIGN_STANDARD ||
	    strcmp(provider, "standard") == 0;

	if (cfg->forward_sign == FORWARD_SIGN_AS_RECEIVED) {
		if (cfg->forward_secret == NULL)
			return IH_OK;
		snprintf(err, errlen, "%s is set, but the signing choice "
		    "is as-received, which signs nothing: remove one", name);
		return IH_ECONFIG;
	}
	if (cfg->forward_secret == NULL) {
		snprintf(err, errlen, "%s is not set: the application "
		    "verifies each forwarded event with it (or set "
		    "_FORWARD_SIGN=as-received)", name);
		return IH_ECONFIG;
	}
	if (sw && forward_sign_sw_key(cfg->forward_secret,
	    cfg->forward_secret_len, key, &keylen) != IH_OK) {
		snprintf(err, errlen, "%s must read whsec_ and base64 (a "
		    "Standard Webhooks secret)", name);
		return IH_ECONFIG;
	}
	OPENSSL_cleanse(key, sizeof(key));
	for (i = 0; i < cfg->forward_secret_len; i++)
		if ((unsigned char)cfg->forward_secret[i] <= 0x20 ||
		    cfg->forward_secret[i] == 0x7f) {
			snprintf(err, errlen, "%s holds a blank or a control "
			    "character", name);
			return IH_ECONFIG;
		}
	return IH_OK;
}

/* The signing choice and the timeout; the URL is set. */
static int
load_rest(struct config *cfg, const char *provider,
    const struct config_source *src, size_t nsrc, char *err, size_t errlen)
{
	char name[128], *end;
	const char *v;
	long long t;

	cfg->forward_sign = FORWARD_SIGN_PROVIDER;
	v = lookup(src, nsrc, provider, "SIGN", name, sizeof(name));
	if (v != NULL && strcmp(v, "provider") == 0)
		cfg->forward_sign = FORWARD_SIGN_PROVIDER;
	else if (v != NULL && strcmp(v, "standard") == 0)
		cfg->forward_sign = FORWARD_SIGN_STANDARD;
	else if (v != NULL && strcmp(v, "as-received") == 0)
		cfg->forward_sign = FORWARD_SIGN_AS_RECEIVED;
	else if (v != NULL) {
		snprintf(err, errlen, "%s must be provider, standard or "
		    "as-received", name);
		return IH_ECONFIG;
	}
	if (cfg->forward_sign == FORWARD_SIGN_AS_RECEIVED &&
	    strcmp(provider, "asaas") == 0) {
		snprintf(err, errlen, "%s=as-received: Asaas's token is "
		    "never stored, so nothing would authenticate the event; "
		    "use provider with a FORWARD_SECRET", name);
		return IH_ECONFIG;
	}
	cfg->forward_timeout_s = FORWARD_DEFAULT_TIMEOUT;
	v = lookup(src, nsrc, provider, "TIMEOUT", name, sizeof(name));
	if (v != NULL) {
		errno = 0;
		t = strtoll(v, &end, 10);
		if (errno != 0 || *end != '\0' || t < 1 || t > 300) {
			snprintf(err, errlen, "%s must be a whole number of "
			    "seconds from 1 to 300", name);
			return IH_ECONFIG;
		}
		cfg->forward_timeout_s = (long)t;
	}
	cfg->forward_pause_after = FORWARD_DEFAULT_PAUSE_AFTER;
	v = lookup(src, nsrc, provider, "PAUSE_AFTER", name, sizeof(name));
	if (v != NULL) {
		errno = 0;
		t = strtoll(v, &end, 10);
		if (errno != 0 || *end != '\0' || t < 0 || t > 1000) {
			snprintf(err, errlen, "%s must be a whole number "
			    "from 0 (never pause) to 1000", name);
			return IH_ECONFIG;
		}
		cfg->forward_pause_after = (long)t;
	}
	if (cfg->lease_s * 1000 <= cfg->forward_timeout_s * 1000 +
	    cfg->busy_timeout_ms) {
		snprintf(err, errlen, "IDEMHOOK_LEASE (%ld s) must be longer "
		    "than %s (%ld s) plus IDEMHOOK_BUSY_TIMEOUT_MS: one "
		    "delivery must end within the lease", cfg->lease_s, name,
		    cfg->forward_timeout_s);
		return IH_ECONFIG;
	}
	v = lookup(src, nsrc, provider, "SECRET", name, sizeof(name));
	if (v != NULL) {
		cfg->forward_secret = strdup(v);
		if (cfg->forward_secret == NULL)
			return IH_ENOMEM;
		cfg->forward_secret_len = strlen(v);
	}
	return secret_check(cfg, provider, name, err, errlen);
}

int
forward_load(struct config *cfg, const char *provider,
    const struct config_source *src, size_t nsrc, char *err, size_t errlen)
{
	static const char *const others[] = { "SIGN", "SECRET", "TIMEOUT",
	    "PAUSE_AFTER" };
	char name[128], uname[128], why[256];
	const char *v;
	size_t i;
	int rc;

	v = lookup(src, nsrc, provider, "URL", uname, sizeof(uname));
	if (v == NULL) {
		/* A setting that would do nothing is refused, not ignored. */
		for (i = 0; i < sizeof(others) / sizeof(others[0]); i++)
			if (lookup(src, nsrc, provider, others[i], name,
			    sizeof(name)) != NULL) {
				snprintf(err, errlen, "%s is set but %s is "
				    "not: nothing is forwarded", name, uname);
				return IH_ECONFIG;
			}
		return IH_OK;
	}
	rc = forward_http_url_ok(v, why, sizeof(why));
	if (rc != IH_OK) {
		snprintf(err, errlen, "%s %s", uname, why);
		return rc;
	}
	cfg->forward_url = strdup(v);
	if (cfg->forward_url == NULL)
		return IH_ENOMEM;
	return load_rest(cfg, provider, src, nsrc, err, errlen);
}

void
forward_free(struct config *cfg)
{
	if (cfg->forward_secret != NULL)
		OPENSSL_cleanse(cfg->forward_secret, cfg->forward_secret_len);
	free(cfg->forward_secret);
	free(cfg->forward_url);
	cfg->forward_secret = NULL;
	cfg->forward_url = NULL;
}
