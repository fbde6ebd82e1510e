/* forward.c -- one delivery of an event to the application. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "account_name.h"
#include "action.h"
#include "alert.h"
#include "clock.h"
#include "config.h"
#include "forward.h"
#include "forward_http.h"
#include "forward_sign.h"
#include "ih.h"
#include "log.h"
#include "object.h"
#include "provider.h"
#include "store.h"
#include "store_dest.h"
#include "store_kept.h"

const struct config_forward *
forward_dest(const struct config *cfg, const char *account)
{
	const struct forward_settings *fs = &cfg->forward;
	size_t i;

	for (i = 0; account != NULL && i < fs->nacct; i++)
		if (strcmp(fs->acct[i].account, account) == 0)
			return &fs->acct[i];
	return fs->dest.url != NULL ? &fs->dest : NULL;
}

int
forward_any(const struct config *cfg)
{
	return cfg->forward.dest.url != NULL || cfg->forward.nacct > 0;
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
judge(const struct config *cfg, const struct forward_http_resp *r,
    struct forward_result *fr)
{
	if (r->status >= 200 && r->status <= 299)
		return IH_OK;
	fr->permanent = !(r->status >= 500 || r->status == 408 ||
	    r->status == 429);
	if (!fr->permanent && r->retry_after_s > 0) {
		fr->retry_after_ms = (int64_t)r->retry_after_s * 1000;
		if (fr->retry_after_ms > (int64_t)cfg->retry_max_s * 1000)
			fr->retry_after_ms = (int64_t)cfg->retry_max_s * 1000;
	}
	return IH_EIO;
}

int
forward_deliver(struct store *st, const struct provider *p,
    const struct config *cfg, const struct log_sink *log,
    const struct store_job *job, struct forward_result *fr, char *why,
    size_t whylen)
{
	const struct event *ev = &job->ev;
	const struct config_forward *fw = forward_dest(cfg, ev->account);
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
	if (p->kept_headers != NULL && p->kept_headers[0] != NULL)
		rc = store_kept_headers(st, ev->rowid, &kept, err,
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
	rc = judge(cfg, &r, fr);
	escape_answer(fw, r.answer, r.answer_len, shown, sizeof(shown));
	snprintf(why, whylen, "forward: HTTP %ld in %lld ms%s: \"%.*s\"",
	    r.status, (long long)fr->ms, fr->permanent ? ", not retried" :
	    "", FORWARD_ANSWER_SHOW, shown);
	log_clean(cid, ev->event_id, (size_t)-1);
	if (rc == IH_OK)
		log_emit(log, "provider=%s event=%s forward=delivered "
		    "status=%ld ms=%lld attempt=%ld", ev->provider, cid,
		    r.status, (long long)fr->ms, ev->attempt);
out:
	if (rc == IH_ENOMEM)
		snprintf(why, whylen, "forward: out of memory");
	free(kept);
	free(hdrs);
	return rc;
}

/* The store's destinations as cfg's settings give them; returns n. */
static size_t
dests_of(const struct config *cfg, struct store_dest *out, size_t cap)
{
	const struct config_forward *fw;
	size_t i, n = 0;

	for (i = 0; i <= cfg->forward.nacct && n < cap; i++) {
		fw = i == 0 ? &cfg->forward.dest : &cfg->forward.acct[i - 1];
		if (fw->url == NULL)
			continue;
		out[n].account = forward_dest_name(fw);
		out[n].concurrency = fw->concurrency;
		out[n].rate_ms = fw->rate_ms;
		/* The provider's, for each of its destinations. */
		out[n].pause_after = cfg->forward.pause_after;
		n++;
	}
	return n;
}

/*
 * One setting's part of a limits line: " NAME old -> new", or "".
 * account NULL: a setting of the provider's only (_PAUSE_AFTER).
 */
static void
said_part(char *out, size_t len, const char *provider, const char *account,
    const char *key, int64_t was, int64_t now, const char *unit)
{
	char name[128];

	out[0] = '\0';
	if (was == now || !forward_setting_name(name, sizeof(name), provider,
	    key, account == NULL || strcmp(account, "default") == 0 ? NULL :
	    account))
		return;
	snprintf(out, len, " %s %lld%s -> %lld%s", name, (long long)was, unit,
	    (long long)now, unit);
}

/*
 * Logs the rows whose limits another process (or an earlier start) wrote
 * otherwise, once per destination per FORWARD_SAID_MS.
 */
static void
said_limits(struct forward_pause *fp, const struct log_sink *log,
    const char *provider, const struct store_dest *dests,
    const struct store_dest_was *was, size_t n)
{
	char conc[160], rate[160], pause[160];
	int64_t last, now = clock_mono_ms();
	size_t i;

	for (i = 0; i < n; i++) {
		if (!was[i].changed)
			continue;
		/* The process's threads share fp: one of them says it. */
		last = __atomic_load_n(&fp->said_ms[i], __ATOMIC_RELAXED);
		if ((last != 0 && now - last < FORWARD_SAID_MS) ||
		    !__atomic_compare_exchange_n(&fp->said_ms[i], &last, now, 0,
		    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
			continue;
		said_part(conc, sizeof(conc), provider, dests[i].account,
		    "CONCURRENCY", was[i].concurrency, dests[i].concurrency,
		    "");
		said_part(rate, sizeof(rate), provider, dests[i].account,
		    "RATE", was[i].rate_ms, dests[i].rate_ms,
		    " ms between starts");
		said_part(pause, sizeof(pause), provider, NULL, "PAUSE_AFTER",
		    was[i].pause_after, dests[i].pause_after, " failures");
		log_emit(log, "provider=%s forward=limits-replaced "
		    "destination=%s:%s%s%s: another process runs, or ran, with "
		    "other settings, and processes take turns at writing "
		    "theirs: give every process the same settings file",
		    provider, dests[i].account, conc, rate, pause);
	}
}

int
forward_sync(struct store *st, struct store_txn *tx,
    const struct config *cfg, const char *provider, struct forward_pause *fp,
    const struct log_sink *log, char *err, size_t errlen)
{
	struct store_dest dests[FORWARD_ACCOUNTS_MAX + 1];
	struct store_dest_was was[FORWARD_ACCOUNTS_MAX + 1];
	size_t n;
	int rc = IH_OK;

	n = dests_of(cfg, dests, FORWARD_ACCOUNTS_MAX + 1);
	/* Without forwarding, a process prunes stale rows once. */
	if (n > 0 || (fp != NULL && !__atomic_load_n(&fp->pruned,
	    __ATOMIC_RELAXED)))
		rc = store_dest_sync(st, tx, provider, dests, n, 1, was, err,
		    errlen);
	if (rc == IH_OK && n == 0 && fp != NULL)
		__atomic_store_n(&fp->pruned, 1, __ATOMIC_RELAXED);
	if (rc == IH_OK && n > 0 && fp != NULL && log != NULL)
		said_limits(fp, log, provider, dests, was, n);
	return rc;
}

/* Inside tx: the claim itself, after the destinations' limits. */
static int
claim_in(struct store *st, struct store_txn *tx, const struct config *cfg,
    const char *provider, struct forward_pause *fp,
    const struct log_sink *log, int64_t rowid, int fresh, const char *owner,
    struct store_job *job, int *found, char *err, size_t errlen)
{
	const struct config_forward *fw;
	int64_t now = clock_wall_ms(), lease = (int64_t)cfg->lease_s * 1000;
	int rc;

	rc = forward_sync(st, tx, cfg, provider, fp, log, err, errlen);
	if (rc == IH_OK && fresh)
		rc = store_claim_fresh(st, tx, provider, rowid, owner, now,
		    lease, job, found, err, errlen);
	else if (rc == IH_OK)
		rc = store_claim(st, tx, provider, rowid, owner, now, lease,
		    job, found, err, errlen);
	if (rc != IH_OK || !*found)
		return rc;
	fw = forward_dest(cfg, job->ev.account);
	if (fw != NULL && fw->rate_ms > 0)
		rc = store_dest_claimed(st, tx, provider, forward_dest_name(fw),
		    now, err, errlen);
	if (rc != IH_OK) {
		*found = 0;
		store_job_free(job);
	}
	return rc;
}

int
forward_claim(struct store *st, struct store_txn *tx,
    const struct config *cfg, const char *provider, struct forward_pause *fp,
    const struct log_sink *log, int64_t rowid, int fresh, const char *owner,
    struct store_job *job, int *found, char *err, size_t errlen)
{
	struct store_txn *own = NULL;
	int rc;

	*found = 0;
	/* The common case, no destination and nothing to prune: no wrapper. */
	if (!forward_any(cfg) && (fp == NULL || __atomic_load_n(&fp->pruned,
	    __ATOMIC_RELAXED)) && tx == NULL)
		return store_claim(st, tx, provider, rowid, owner,
		    clock_wall_ms(), (int64_t)cfg->lease_s * 1000, job, found,
		    err, errlen);
	if (tx == NULL) {
		rc = store_begin(st, STORE_RELAXED, &own, err, errlen);
		if (rc != IH_OK)
			return rc;
		tx = own;
	}
	rc = claim_in(st, tx, cfg, provider, fp, log, rowid, fresh, owner,
	    job, found, err, errlen);
	if (own != NULL && rc == IH_OK)
		rc = store_commit(own, err, errlen);
	else if (own != NULL)
		store_rollback(own);
	if (rc != IH_OK && *found) {
		*found = 0;
		store_job_free(job);
	}
	return rc;
}

void
forward_pause_note(struct store *st, const struct config *cfg,
    const struct log_sink *log, const struct store_job *job, int delivered,
    const struct forward_result *fr)
{
	const struct config_forward *fw = forward_dest(cfg, job->ev.account);
	char cid[LOG_CLEAN_SIZE], text[320], err[STORE_ERR_MAX], at[80];
	const char *p = job->ev.provider, *acct;
	long failures = 0;
	int changed = 0, rc;

	if (fw == NULL)
		return;
	acct = forward_dest_name(fw);
	/* The provider's destination keeps its log line as it was. */
	at[0] = '\0';
	if (fw->account != NULL)
		snprintf(at, sizeof(at), " destination=%s", acct);
	if (delivered) {
		rc = store_dest_ok(st, p, acct, &changed, &failures, err,
		    sizeof(err));
		if (rc == IH_OK && changed)
			log_emit(log, "provider=%s forward=resumed after "
			    "failures=%ld%s", p, failures, at);
		goto out;
	}
	/* An answer no retry cures says nothing of the application's health. */
	if (fr == NULL || !fr->failed || fr->permanent)
		return;
	rc = store_dest_failed(st, p, acct, job->ev.rowid, clock_wall_ms(),
	    &failures, &changed, err, sizeof(err));
	if (rc != IH_OK || !changed)
		goto out;
	log_clean(cid, job->ev.event_id, (size_t)-1);
	log_emit(log, "provider=%s forward=paused failures=%ld probe=%s%s",
	    p, failures, cid, at);
	snprintf(text, sizeof(text), "forwarding of %s%s%s is paused after "
	    "%ld failed deliveries in a row; event %s is retried alone until "
	    "the application answers\n", p, fw->account != NULL ? "@" : "",
	    fw->account != NULL ? acct : "", failures, cid);
	alert_text(cfg, p, "forward_paused", text, log);
out:
	if (rc != IH_OK)
		log_emit(log, "provider=%s forward=state_unknown%s "
		    "detail=%s", p, at, err);
}
