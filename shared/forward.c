/* forward.c -- the settings of forwarding, and one delivery. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "account.h"
#include "account_name.h"
#include "action.h"
#include "alert.h"
#include "clock.h"
#include "config.h"
#include "config_vars.h"
#include "dispatch.h"
#include "forward.h"
#include "forward_http.h"
#include "forward_sign.h"
#include "ih.h"
#include "log.h"
#include "object.h"
#include "provider.h"
#include "store.h"
#include "store_kept.h"

/*
 * Looks up IDEMHOOK_<PROVIDER>_FORWARD_<key>, or with "@account" when
 * account is not NULL, naming it in name.
 */
static const char *
lookup(const struct config_source *src, size_t nsrc, const char *provider,
    const char *key, const char *account, char *name, size_t cap)
{
	size_t i;
	int n;

	n = snprintf(name, cap, "IDEMHOOK_%s_FORWARD_%s%s%s", provider, key,
	    account != NULL ? "@" : "", account != NULL ? account : "");
	if (n < 0 || (size_t)n >= cap)
		return NULL;
	for (i = 9; name[i] != '\0' && name[i] != '_'; i++)
		name[i] = (char)toupper((unsigned char)name[i]);
	return config_lookup(src, nsrc, name);
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

/* One destination, fw->account's (or the provider's), whose URL is url. */
static int
load_dest(const struct config *cfg, struct config_forward *fw,
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
	if (cfg->lease_s * 1000 <= fw->timeout_s * 1000 +
	    cfg->busy_timeout_ms) {
		snprintf(err, errlen, "IDEMHOOK_LEASE (%ld s) must be longer "
		    "than %s (%ld s) plus IDEMHOOK_BUSY_TIMEOUT_MS: one "
		    "delivery must end within the lease", cfg->lease_s, name,
		    fw->timeout_s);
		return IH_ECONFIG;
	}
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
    "TIMEOUT" };
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
		    "FORWARD_URL, _SIGN, _SECRET and _TIMEOUT only", name);
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
load_accounts(struct config *cfg, const char *provider,
    const struct config_source *src, size_t nsrc, char *err, size_t errlen)
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
		cfg->forward_acct = calloc(sc->n, sizeof(*cfg->forward_acct));
	if (sc->n > 0 && cfg->forward_acct == NULL)
		goto out;
	for (i = 0; i < sc->n; i++) {
		fw = &cfg->forward_acct[cfg->nforward_acct++];
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
		rc = load_dest(cfg, fw, provider, v, src, nsrc, err, errlen);
		if (rc != IH_OK)
			goto out;
	}
	rc = IH_OK;
out:
	free(sc);
	return rc;
}

int
forward_load(struct config *cfg, const char *provider,
    const struct config_source *src, size_t nsrc, char *err, size_t errlen)
{
	static const char *const others[] = { "SIGN", "SECRET", "TIMEOUT",
	    "PAUSE_AFTER" };
	char name[160], uname[160];
	const char *v;
	size_t i;
	int rc;

	rc = load_accounts(cfg, provider, src, nsrc, err, errlen);
	if (rc != IH_OK)
		return rc;
	v = lookup(src, nsrc, provider, "URL", NULL, uname, sizeof(uname));
	if (v != NULL) {
		rc = load_dest(cfg, &cfg->forward, provider, v, src, nsrc, err,
		    errlen);
		if (rc != IH_OK)
			return rc;
	}
	/*
	 * A setting that would do nothing is refused, not ignored: the
	 * accounts' destinations read the provider's _SIGN and _TIMEOUT.
	 */
	for (i = 0; v == NULL && i < sizeof(others) / sizeof(others[0]); i++)
		if ((cfg->nforward_acct == 0 || strcmp(others[i], "SECRET") ==
		    0) && lookup(src, nsrc, provider, others[i], NULL, name,
		    sizeof(name)) != NULL) {
			snprintf(err, errlen, "%s is set but %s is not: "
			    "nothing is forwarded", name, uname);
			return IH_ECONFIG;
		}
	cfg->forward_pause_after = FORWARD_DEFAULT_PAUSE_AFTER;
	v = lookup(src, nsrc, provider, "PAUSE_AFTER", NULL, name,
	    sizeof(name));
	if (v != NULL && number(v, name, 0, 1000, "a whole number from 0 "
	    "(never pause) to 1000", &cfg->forward_pause_after, err,
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
forward_free(struct config *cfg)
{
	size_t i;

	dest_free(&cfg->forward);
	for (i = 0; i < cfg->nforward_acct; i++)
		dest_free(&cfg->forward_acct[i]);
	free(cfg->forward_acct);
	cfg->forward_acct = NULL;
	cfg->nforward_acct = 0;
}

const struct config_forward *
forward_dest(const struct config *cfg, const char *account)
{
	size_t i;

	for (i = 0; account != NULL && i < cfg->nforward_acct; i++)
		if (strcmp(cfg->forward_acct[i].account, account) == 0)
			return &cfg->forward_acct[i];
	return cfg->forward.url != NULL ? &cfg->forward : NULL;
}

int
forward_any(const struct config *cfg)
{
	return cfg->forward.url != NULL || cfg->nforward_acct > 0;
}

int
forward_order_key(const struct config *cfg, const struct provider *p,
    const struct event *ev, char *out, size_t outlen)
{
	struct object_found f;
	int n, rc = 0;

	out[0] = '\0';
	if (ev->order_key != NULL || ev->needs_fetch || ev->payload == NULL ||
	    p->map_object == NULL || forward_dest(cfg, ev->account) == NULL)
		return 0;
	memset(&f, 0, sizeof(f));
	if (p->map_object(ev, &f) == IH_OK && f.mapped && f.object_id != NULL) {
		n = snprintf(out, outlen, "%s:%s", f.kind, f.object_id);
		rc = n > 0 && (size_t)n < outlen;
		if (!rc)
			out[0] = '\0';
	}
	object_found_free(&f);
	return rc;
}

/*
 * The answer's first bytes for the attempt's error: printable ASCII as
 * it is, anything else (and the quote and backslash) as \xNN, and the
 * re-signing secret, should the application echo it, masked.
 */
static void
escape_answer(const struct config_forward *fw, const char *a, size_t len,
    char *out, size_t cap)
{
	const char *s = fw->secret;
	size_t i, n, o = 0, sl = fw->secret_len;

	out[0] = '\0';
	for (i = 0; i < len && o + 5 < cap; i++) {
		/* The secret, or its start where the kept bytes end. */
		n = len - i < sl ? len - i : sl;
		if (s != NULL && sl >= 4 && n >= 4 &&
		    memcmp(a + i, s, n) == 0) {
			memcpy(out + o, "***", 3);
			o += 3;
			i += n - 1;
			continue;
		}
		if (a[i] >= 0x20 && a[i] < 0x7f && a[i] != '"' &&
		    a[i] != '\\')
			out[o++] = a[i];
		else
			o += (size_t)snprintf(out + o, cap - o, "\\x%02x",
			    (unsigned char)a[i]);
	}
	out[o] = '\0';
}

/* Sorts an answer: permanent, or worth a retry (how long after). */
static int
judge(const struct dispatch *d, const struct forward_http_resp *r,
    struct forward_result *fr)
{
	if (r->status >= 200 && r->status <= 299)
		return IH_OK;
	fr->permanent = !(r->status >= 500 || r->status == 408 ||
	    r->status == 429);
	if (!fr->permanent && r->retry_after_s > 0) {
		fr->retry_after_ms = (int64_t)r->retry_after_s * 1000;
		if (fr->retry_after_ms > (int64_t)d->cfg->retry_max_s * 1000)
			fr->retry_after_ms = (int64_t)d->cfg->retry_max_s *
			    1000;
	}
	return IH_EIO;
}

int
forward_deliver(const struct dispatch *d, const struct store_job *job,
    struct forward_result *fr, char *why, size_t whylen)
{
	const struct event *ev = &job->ev;
	const struct config_forward *fw = forward_dest(d->cfg, ev->account);
	struct forward_sign_in in;
	struct forward_http_req req;
	struct forward_http_resp r;
	char key[ACTION_KEY_LEN], scope[160], err[STORE_ERR_MAX];
	char shown[4 * sizeof(r.answer) + 8], cid[LOG_CLEAN_SIZE];
	char *kept = NULL, *hdrs = NULL;
	int64_t t0;
	int rc;

	memset(fr, 0, sizeof(*fr));
	if (fw == NULL) {
		snprintf(why, whylen, "forward: no destination");
		return IH_OK;
	}
	if (ev->payload == NULL) {
		fr->permanent = 1;
		snprintf(why, whylen, "forward: the payload is purged");
		return IH_EIO;
	}
	/* The kept headers are not in the claim: read alone, when any. */
	if (d->p->kept_headers != NULL && d->p->kept_headers[0] != NULL)
		rc = store_kept_headers(d->st, ev->rowid, &kept, err,
		    sizeof(err));
	else
		rc = IH_OK;
	if (rc != IH_OK) {
		snprintf(why, whylen, "forward: cannot read the event's "
		    "headers: %s", err);
		rc = rc == IH_ESTORE ? IH_ESTORE : IH_EIO;
		goto out;
	}
	/* The key of an action named "forward": one per event, stable. */
	snprintf(scope, sizeof(scope), "%s%s%s", ev->provider,
	    strcmp(account_or_default(ev->account), ACCOUNT_DEFAULT) != 0 ?
	    "@" : "", strcmp(account_or_default(ev->account),
	    ACCOUNT_DEFAULT) != 0 ? ev->account : "");
	hdrs = malloc(FORWARD_SIGN_MAX);
	rc = IH_ENOMEM;
	if (hdrs == NULL || action_key(scope, ev->event_id, "forward",
	    key) != IH_OK)
		goto out;
	memset(&in, 0, sizeof(in));
	in.provider = ev->provider;
	in.mode = fw->sign;
	in.secret = fw->secret;
	in.secret_len = fw->secret_len;
	in.event_id = ev->event_id;
	in.body = ev->payload;
	in.body_len = ev->payload_len;
	in.kept = kept;
	in.now = clock_wall_s();
	in.key = key;
	rc = forward_sign_headers(&in, hdrs, FORWARD_SIGN_MAX);
	if (rc != IH_OK) {
		fr->permanent = 1;
		snprintf(why, whylen, "forward: cannot sign: %s",
		    ih_strerror(rc));
		rc = IH_EIO;
		goto out;
	}
	req.url = fw->url;
	req.headers = hdrs;
	req.body = ev->payload;
	req.body_len = ev->payload_len;
	req.timeout_s = fw->timeout_s;
	t0 = clock_mono_ms();
	rc = forward_http_post(&req, &r, err, sizeof(err));
	fr->ms = clock_mono_ms() - t0;
	fr->status = r.status;
	fr->failed = rc != IH_OK || r.status < 200 || r.status > 299;
	if (rc != IH_OK) {
		snprintf(why, whylen, "forward: no answer after %lld ms: %s",
		    (long long)fr->ms, err);
		rc = IH_EIO;
		goto out;
	}
	rc = judge(d, &r, fr);
	escape_answer(fw, r.answer, r.answer_len, shown, sizeof(shown));
	snprintf(why, whylen, "forward: HTTP %ld in %lld ms%s: \"%.*s\"",
	    r.status, (long long)fr->ms, fr->permanent ? ", not retried" :
	    "", FORWARD_ANSWER_SHOW, shown);
	log_clean(cid, ev->event_id, (size_t)-1);
	if (rc == IH_OK)
		log_emit(d->log, "provider=%s event=%s forward=delivered "
		    "status=%ld ms=%lld attempt=%ld", ev->provider, cid,
		    r.status, (long long)fr->ms, ev->attempt);
out:
	if (rc == IH_ENOMEM)
		snprintf(why, whylen, "forward: out of memory");
	free(kept);
	free(hdrs);
	return rc;
}

int
forward_pause_gate(const struct forward_pause *fp, int64_t now_ms,
    int64_t *probe)
{
	*probe = 0;
	if (!fp->paused)
		return 1;
	if (now_ms < fp->until_ms)
		return 0;
	*probe = fp->probe;
	return 1;
}

void
forward_pause_end(struct forward_pause *fp)
{
	memset(fp, 0, sizeof(*fp));
}

void
forward_pause_note(const struct dispatch *d, const struct store_job *job,
    int delivered, const struct forward_result *fr, int64_t next_ms)
{
	struct forward_pause *fp = d->pause;
	char cid[LOG_CLEAN_SIZE], text[256];
	const char *p = job->ev.provider;

	if (fp == NULL || forward_dest(d->cfg, job->ev.account) == NULL)
		return;
	if (delivered) {
		if (fp->paused)
			log_emit(d->log, "provider=%s forward=resumed after "
			    "failures=%ld", p, fp->failures);
		forward_pause_end(fp);
		return;
	}
	/* An answer no retry cures says nothing of the application's health. */
	if (fr == NULL || !fr->failed || fr->permanent)
		return;
	fp->failures++;
	if (d->cfg->forward_pause_after <= 0 ||
	    fp->failures < d->cfg->forward_pause_after)
		return;
	fp->until_ms = next_ms;
	fp->probe = job->ev.rowid;
	if (fp->paused)
		return;
	fp->paused = 1;
	log_clean(cid, job->ev.event_id, (size_t)-1);
	log_emit(d->log, "provider=%s forward=paused failures=%ld probe=%s",
	    p, fp->failures, cid);
	snprintf(text, sizeof(text), "forwarding of %s is paused after %ld "
	    "failed deliveries in a row; event %s is retried alone until the "
	    "application answers\n", p, fp->failures, cid);
	alert_text(d->cfg, p, "forward_paused", text, d->log);
}
