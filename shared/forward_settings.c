/* forward_settings.c -- the settings of forwarding (forward.h). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "account.h"
#include "account_name.h"
#include "config_source.h"
#include "forward_http.h"
#include "forward_settings.h"
#include "forward_sign.h"
#include "ih.h"

/*
 * Looks up IDEMHOOK_<PROVIDER>_FORWARD_<key>, or with "@account" when
 * account is not NULL, naming it in name.
 */
static const char *
lookup(const struct config_source *src, size_t nsrc, const char *provider,
    const char *key, const char *account, char *name, size_t cap)
{
	if (!forward_setting_name(name, cap, provider, key, account))
		return NULL;
	return config_lookup(src, nsrc, name);
}

int
forward_setting_name(char *name, size_t cap, const char *provider,
    const char *key, const char *account)
{
	size_t i;
	int n;

	n = snprintf(name, cap, "IDEMHOOK_%s_FORWARD_%s%s%s", provider, key,
	    account != NULL ? "@" : "", account != NULL ? account : "");
	if (n < 0 || (size_t)n >= cap)
		return 0;
	for (i = 9; name[i] != '\0' && name[i] != '_'; i++)
		name[i] = (char)toupper((unsigned char)name[i]);
	return 1;
}

/*
 * A destination's setting: an account's own, else (the secret aside,
 * which never falls back, as an account's secrets do not) the
 * provider's.
 */
static const char *
lookup_dest(const struct config_source *src, size_t nsrc,
    const char *provider, const struct config_forward *fw, const char *key,
    char *name, size_t cap)
{
	const char *v;

	v = lookup(src, nsrc, provider, key, fw->account, name, cap);
	if (v == NULL && fw->account != NULL && strcmp(key, "SECRET") != 0)
		v = lookup(src, nsrc, provider, key, NULL, name, cap);
	if (v == NULL)
		lookup(src, nsrc, provider, key, fw->account, name, cap);
	return v;
}

/* Checks the secret against the scheme that will use it. */
static int
secret_check(const struct config_forward *fw, const char *provider,
    const char *name, char *err, size_t errlen)
{
	unsigned char key[FORWARD_SW_KEY_MAX];
	size_t keylen, i;
	int sw = fw->sign == FORWARD_SIGN_STANDARD ||
	    strcmp(provider, "standard") == 0;

	if (fw->sign == FORWARD_SIGN_AS_RECEIVED) {
		if (fw->secret == NULL)
			return IH_OK;
		snprintf(err, errlen, "%s is set, but the signing choice "
		    "is as-received, which signs nothing: remove one", name);
		return IH_ECONFIG;
	}
	if (fw->secret == NULL) {
		snprintf(err, errlen, "%s is not set: the application "
		    "verifies each forwarded event with it (or set "
		    "_FORWARD_SIGN=as-received)", name);
		return IH_ECONFIG;
	}
	if (sw && forward_sign_sw_key(fw->secret, fw->secret_len, key,
	    &keylen) != IH_OK) {
		snprintf(err, errlen, "%s must read whsec_ and base64 (a "
		    "Standard Webhooks secret)", name);
		return IH_ECONFIG;
	}
	OPENSSL_cleanse(key, sizeof(key));
	for (i = 0; i < fw->secret_len; i++)
		if ((unsigned char)fw->secret[i] <= 0x20 ||
		    fw->secret[i] == 0x7f) {
			snprintf(err, errlen, "%s holds a blank or a control "
			    "character", name);
			return IH_ECONFIG;
		}
	return IH_OK;
}

/* Reads a whole number from lo to hi, or says what it must be. */
static int
number(const char *v, const char *name, long long lo, long long hi,
    const char *what, long *out, char *err, size_t errlen)
{
	char *end;
	long long t;

	errno = 0;
	t = strtoll(v, &end, 10);
	if (errno != 0 || *end != '\0' || t < lo || t > hi) {
		snprintf(err, errlen, "%s must be %s", name, what);
		return IH_ECONFIG;
	}
	*out = (long)t;
	return IH_OK;
}

/*
 * Reads a rate of deliveries a second: digits with at most one point, a
 * number from 0.01 to FORWARD_RATE_MAX (no exponent, sign, unit or
 * "inf"), into fw->rate and fw->rate_ms (the time between two starts).
 */
static int
rate(const char *v, const char *name, struct config_forward *fw, char *err,
    size_t errlen)
{
	size_t i, points = 0;
	char *end;
	double r;

	for (i = 0; v[i] != '\0'; i++)
		if (v[i] == '.')
			points++;
		else if (v[i] < '0' || v[i] > '9')
			break;
	errno = 0;
	r = i > 0 && v[i] == '\0' && points <= 1 ? strtod(v, &end) : -1;
	if (errno != 0 || r < 0.01 || r > FORWARD_RATE_MAX) {
		snprintf(err, errlen, "%s must be deliveries a second, from "
		    "0.01 to %d (unset: no limit)", name, FORWARD_RATE_MAX);
		return IH_ECONFIG;
	}
	fw->rate = r;
	fw->rate_ms = (int64_t)(1000.0 / r + 0.5);
	if (fw->rate_ms < 1)
		fw->rate_ms = 1;
	return IH_OK;
}

/*
 * One destination, fw->account's (or the provider's), whose URL is url;
 * one delivery must end within the lease (lease_s, busy_ms).
 */
static int
load_dest(struct config_forward *fw, long lease_s, long busy_ms,
    const char *provider, const char *url, const struct config_source *src,
    size_t nsrc, char *err, size_t errlen)
{
	char name[160], why[256];
	const char *v;
	int rc;

	lookup(src, nsrc, provider, "URL", fw->account, name, sizeof(name));
	rc = forward_http_url_ok(url, why, sizeof(why));
	if (rc != IH_OK) {
		snprintf(err, errlen, "%s %s", name, why);
		return rc;
	}
	fw->url = strdup(url);
	if (fw->url == NULL)
		return IH_ENOMEM;
	fw->sign = FORWARD_SIGN_PROVIDER;
	v = lookup_dest(src, nsrc, provider, fw, "SIGN", name, sizeof(name));
	if (v != NULL && strcmp(v, "provider") == 0)
		fw->sign = FORWARD_SIGN_PROVIDER;
	else if (v != NULL && strcmp(v, "standard") == 0)
		fw->sign = FORWARD_SIGN_STANDARD;
	else if (v != NULL && strcmp(v, "as-received") == 0)
		fw->sign = FORWARD_SIGN_AS_RECEIVED;
	else if (v != NULL) {
		snprintf(err, errlen, "%s must be provider, standard or "
		    "as-received", name);
		return IH_ECONFIG;
	}
	if (fw->sign == FORWARD_SIGN_AS_RECEIVED &&
	    strcmp(provider, "asaas") == 0) {
		snprintf(err, errlen, "%s=as-received: Asaas's token is "
		    "never stored, so nothing would authenticate the event; "
		    "use provider with a FORWARD_SECRET", name);
		return IH_ECONFIG;
	}
	fw->timeout_s = FORWARD_DEFAULT_TIMEOUT;
	v = lookup_dest(src, nsrc, provider, fw, "TIMEOUT", name,
	    sizeof(name));
	if (v != NULL && number(v, name, 1, 300, "a whole number of seconds "
	    "from 1 to 300", &fw->timeout_s, err, errlen) != IH_OK)
		return IH_ECONFIG;
	if (lease_s * 1000 <= fw->timeout_s * 1000 + busy_ms) {
		snprintf(err, errlen, "IDEMHOOK_LEASE (%ld s) must be longer "
		    "than %s (%ld s) plus IDEMHOOK_BUSY_TIMEOUT_MS: one "
		    "delivery must end within the lease", lease_s, name,
		    fw->timeout_s);
		return IH_ECONFIG;
	}
	fw->concurrency = FORWARD_DEFAULT_CONCURRENCY;
	v = lookup_dest(src, nsrc, provider, fw, "CONCURRENCY", name,
	    sizeof(name));
	if (v != NULL && number(v, name, 1, FORWARD_CONCURRENCY_MAX, "a whole "
	    "number of deliveries in flight, from 1 to 256",
	    &fw->concurrency, err, errlen) != IH_OK)
		return IH_ECONFIG;
	v = lookup_dest(src, nsrc, provider, fw, "RATE", name, sizeof(name));
	if (v != NULL && rate(v, name, fw, err, errlen) != IH_OK)
		return IH_ECONFIG;
	v = lookup_dest(src, nsrc, provider, fw, "SECRET", name,
	    sizeof(name));
	if (v != NULL) {
		fw->secret = strdup(v);
		if (fw->secret == NULL)
			return IH_ENOMEM;
		fw->secret_len = strlen(v);
	}
	return secret_check(fw, provider, name, err, errlen);
}

/* The accounts named by IDEMHOOK_<PROVIDER>_FORWARD_<key>@account. */
struct acct_scan {
	char	prefix[64];
	char	names[FORWARD_ACCOUNTS_MAX][ACCOUNT_NAME_MAX + 1];
	size_t	n;
	int	rc;
	char	err[256];
};

static const char *const dest_keys[] = { "URL", "SIGN", "SECRET",
    "TIMEOUT", "CONCURRENCY", "RATE" };
#define NKEYS	(sizeof(dest_keys) / sizeof(dest_keys[0]))

static void
scan_name(void *arg, const char *name)
{
	struct acct_scan *sc = arg;
	const char *at, *key;
	size_t i, plen = strlen(sc->prefix);

	at = strchr(name, '@');
	if (sc->rc != IH_OK || at == NULL || strncmp(name, sc->prefix,
	    plen) != 0)
		return;
	key = name + plen;
	for (i = 0; i < NKEYS; i++)
		if (strlen(dest_keys[i]) == (size_t)(at - key) &&
		    strncmp(key, dest_keys[i], (size_t)(at - key)) == 0)
			break;
	if (i == NKEYS || !account_name_ok(at + 1) ||
	    strcmp(at + 1, ACCOUNT_DEFAULT) == 0) {
		snprintf(sc->err, sizeof(sc->err), "%.100s is not read: an "
		    "account (a-z, 0-9, _ and -, not \"default\") has its own "
		    "FORWARD_URL, _SIGN, _SECRET, _TIMEOUT, _CONCURRENCY and "
		    "_RATE only", name);
		sc->rc = IH_ECONFIG;
		return;
	}
	for (i = 0; i < sc->n; i++)
		if (strcmp(sc->names[i], at + 1) == 0)
			return;
	if (sc->n >= FORWARD_ACCOUNTS_MAX) {
		snprintf(sc->err, sizeof(sc->err), "more than %d accounts "
		    "have forwarding settings of their own",
		    FORWARD_ACCOUNTS_MAX);
		sc->rc = IH_ECONFIG;
		return;
	}
	snprintf(sc->names[sc->n++], sizeof(sc->names[0]), "%s", at + 1);
}

/* The accounts' destinations, after the provider's. */
static int
load_accounts(struct forward_settings *fs, long lease_s, long busy_ms,
    const char *provider, const struct config_source *src, size_t nsrc,
    char *err, size_t errlen)
{
	struct acct_scan *sc;
	struct config_forward *fw;
	char name[160], uname[160];
	const char *v;
	size_t i, k;
	int rc = IH_ENOMEM;

	sc = calloc(1, sizeof(*sc));
	if (sc == NULL)
		return IH_ENOMEM;
	lookup(src, nsrc, provider, "", NULL, sc->prefix, sizeof(sc->prefix));
	account_each_name(src, nsrc, scan_name, sc);
	rc = sc->rc;
	if (rc != IH_OK) {
		snprintf(err, errlen, "%s", sc->err);
		goto out;
	}
	rc = IH_ENOMEM;
	if (sc->n > 0)
		fs->acct = calloc(sc->n, sizeof(*fs->acct));
	if (sc->n > 0 && fs->acct == NULL)
		goto out;
	for (i = 0; i < sc->n; i++) {
		fw = &fs->acct[fs->nacct++];
		fw->account = strdup(sc->names[i]);
		if (fw->account == NULL) {
			rc = IH_ENOMEM;
			goto out;
		}
		v = lookup(src, nsrc, provider, "URL", fw->account, uname,
		    sizeof(uname));
		if (v == NULL) {
			snprintf(name, sizeof(name), "%s", uname);
			for (k = 1; k < NKEYS; k++)
				if (lookup(src, nsrc, provider, dest_keys[k],
				    fw->account, name, sizeof(name)) != NULL)
					break;
			snprintf(err, errlen, "%s is set but %s is not: "
			    "nothing is forwarded", name, uname);
			rc = IH_ECONFIG;
			goto out;
		}
		rc = load_dest(fw, lease_s, busy_ms, provider, v, src, nsrc,
		    err, errlen);
		if (rc != IH_OK)
			goto out;
	}
	rc = IH_OK;
out:
	free(sc);
	return rc;
}

int
forward_load(struct forward_settings *fs, long lease_s, long busy_timeout_ms,
    const char *provider, const struct config_source *src, size_t nsrc,
    char *err, size_t errlen)
{
	static const char *const others[] = { "SIGN", "SECRET", "TIMEOUT",
	    "PAUSE_AFTER", "CONCURRENCY", "RATE" };
	char name[160], uname[160];
	const char *v;
	size_t i;
	int rc;

	rc = load_accounts(fs, lease_s, busy_timeout_ms, provider, src, nsrc,
	    err, errlen);
	if (rc != IH_OK)
		return rc;
	v = lookup(src, nsrc, provider, "URL", NULL, uname, sizeof(uname));
	if (v != NULL) {
		rc = load_dest(&fs->dest, lease_s, busy_timeout_ms, provider,
		    v, src, nsrc, err, errlen);
		if (rc != IH_OK)
			return rc;
	}
	/*
	 * A setting that would do nothing is refused, not ignored: the
	 * accounts' destinations read the provider's _SIGN and _TIMEOUT.
	 */
	for (i = 0; v == NULL && i < sizeof(others) / sizeof(others[0]); i++)
		if ((fs->nacct == 0 || strcmp(others[i], "SECRET") ==
		    0) && lookup(src, nsrc, provider, others[i], NULL, name,
		    sizeof(name)) != NULL) {
			snprintf(err, errlen, "%s is set but %s is not: "
			    "nothing is forwarded", name, uname);
			return IH_ECONFIG;
		}
	fs->pause_after = FORWARD_DEFAULT_PAUSE_AFTER;
	v = lookup(src, nsrc, provider, "PAUSE_AFTER", NULL, name,
	    sizeof(name));
	if (v != NULL && number(v, name, 0, 1000, "a whole number from 0 "
	    "(never pause) to 1000", &fs->pause_after, err,
	    errlen) != IH_OK)
		return IH_ECONFIG;
	return IH_OK;
}

static void
dest_free(struct config_forward *fw)
{
	if (fw->secret != NULL)
		OPENSSL_cleanse(fw->secret, fw->secret_len);
	free(fw->secret);
	free(fw->url);
	free(fw->account);
	memset(fw, 0, sizeof(*fw));
}

void
forward_free(struct forward_settings *fs)
{
	size_t i;

	dest_free(&fs->dest);
	for (i = 0; i < fs->nacct; i++)
		dest_free(&fs->acct[i]);
	free(fs->acct);
	memset(fs, 0, sizeof(*fs));
}

const char *
forward_dest_name(const struct config_forward *fw)
{
	return fw->account != NULL ? fw->account : ACCOUNT_DEFAULT;
}

/* Owned copies of fw's strings; 0 (each one a copy or NULL) on failure. */
static int
dest_dup(struct config_forward *fw)
{
	char *url = fw->url, *acct = fw->account, *secret = fw->secret;

	fw->url = url != NULL ? strdup(url) : NULL;
	fw->account = acct != NULL ? strdup(acct) : NULL;
	fw->secret = NULL;
	if (secret != NULL) {
		fw->secret = malloc(fw->secret_len + 1);
		if (fw->secret != NULL)
			memcpy(fw->secret, secret, fw->secret_len + 1);
	}
	return (url == NULL || fw->url != NULL) &&
	    (acct == NULL || fw->account != NULL) &&
	    (secret == NULL || fw->secret != NULL);
}

int
forward_copy(struct forward_settings *dst,
    const struct forward_settings *src)
{
	size_t i;
	int ok;

	ok = dest_dup(&dst->dest);
	dst->acct = NULL;
	dst->nacct = 0;
	if (src->nacct == 0)
		return ok ? IH_OK : IH_ENOMEM;
	dst->acct = calloc(src->nacct, sizeof(*dst->acct));
	if (dst->acct == NULL)
		return IH_ENOMEM;
	dst->nacct = src->nacct;
	for (i = 0; i < src->nacct; i++) {
		dst->acct[i] = src->acct[i];
		ok &= dest_dup(&dst->acct[i]);
	}
	return ok ? IH_OK : IH_ENOMEM;
}
