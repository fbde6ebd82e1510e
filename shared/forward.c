/* forward.c -- the settings of forwarding, and one delivery. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

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
#include "provider.h"
#include "store.h"
#include "store_kept.h"

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

/*
 * The answer's first bytes for the attempt's error: printable ASCII as
 * it is, anything else (and the quote and backslash) as \xNN, and the
 * re-signing secret, should the application echo it, masked.
 */
static void
escape_answer(const struct config *cfg, const char *a, size_t len,
    char *out, size_t cap)
{
	const char *s = cfg->forward_secret;
	size_t i, n, o = 0, sl = cfg->forward_secret_len;

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
	const struct config *cfg = d->cfg;
	struct forward_sign_in in;
	struct forward_http_req req;
	struct forward_http_resp r;
	char key[ACTION_KEY_LEN], scope[160], err[STORE_ERR_MAX];
	char shown[4 * sizeof(r.answer) + 8], cid[LOG_CLEAN_SIZE];
	char *kept = NULL, *hdrs = NULL;
	int64_t t0;
	int rc;

	memset(fr, 0, sizeof(*fr));
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
	in.mode = cfg->forward_sign;
	in.secret = cfg->forward_secret;
	in.secret_len = cfg->forward_secret_len;
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
	req.url = cfg->forward_url;
	req.headers = hdrs;
	req.body = ev->payload;
	req.body_len = ev->payload_len;
	req.timeout_s = cfg->forward_timeout_s;
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
	escape_answer(cfg, r.answer, r.answer_len, shown, sizeof(shown));
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

	if (fp == NULL || d->cfg->forward_url == NULL)
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
