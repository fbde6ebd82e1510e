/* forward.c -- one delivery of an event to the application. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "account_name.h"
#include "action.h"
#include "alert.h"
#include "clock.h"
#include "config.h"
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
