/* alert.c -- the alert command, on dead events and silent providers. */
#include <stdio.h>
#include <string.h>

#include "account.h"
#include "action.h"
#include "alert.h"
#include "config.h"
#include "ih.h"
#include "log.h"
#include "sigfail.h"
#include "store.h"
#include "store_console.h"

#define SILENCE_CHECK_MS	60000
#define BADSIG_CHECK_MS		10000

static void
run(const struct config *cfg, const struct event *ev, const char *reason,
    const struct log_sink *log)
{
	char err[256], cid[LOG_CLEAN_SIZE], cerr[LOG_CLEAN_SIZE];
	int rc, named;

	rc = action_run(cfg->alert_action, ev, reason, cfg->action_passenv,
	    cfg->action_timeout_s, err, sizeof(err));
	log_clean(cid, ev->event_id, (size_t)-1);
	log_clean(cerr, rc == IH_OK ? "" : err, (size_t)-1);
	named = ev->account != NULL && strcmp(ev->account,
	    ACCOUNT_DEFAULT) != 0;
	log_emit(log, "provider=%s%s%s event=%s alert=%s outcome=%s%s%s",
	    ev->provider, named ? " account=" : "", named ? ev->account : "",
	    cid, reason,
	    rc == IH_OK ? "sent" :
	    "failed", rc == IH_OK ? "" : " detail=", rc == IH_OK ? "" : cerr);
}

/* An alert about a provider, not an event: the text is its input. */
static void
run_text(const struct config *cfg, const char *provider, const char *reason,
    const char *text, size_t len, const struct log_sink *log)
{
	struct event ev;

	memset(&ev, 0, sizeof(ev));
	ev.provider = provider;
	ev.event_id = "-";
	ev.event_type = "-";
	ev.payload = (const unsigned char *)text;
	ev.payload_len = len;
	run(cfg, &ev, reason, log);
}

void
alert_dead(const struct config *cfg, const struct store_job *job,
    const char *why, const struct log_sink *log)
{
	(void)why;
	if (cfg->alert_action == NULL || *cfg->alert_action == '\0')
		return;
	run(cfg, &job->ev, "dead", log);
}

int
alert_due(int64_t *checked_at, size_t i, int64_t now_ms, int64_t every_ms)
{
	if (i >= ALERT_MAX_PROVIDERS || (checked_at[i] != 0 &&
	    now_ms - checked_at[i] < every_ms))
		return 0;
	checked_at[i] = now_ms;
	return 1;
}

int
alert_silence_check(struct alert_silence *as, size_t i,
    const struct config *cfg, const char *provider, struct store *st,
    int64_t now_ms, const struct log_sink *log, char *err, size_t errlen)
{
	char line[256];
	int64_t last = 0;
	int rc, n;

	if (cfg->alert_action == NULL || *cfg->alert_action == '\0' ||
	    cfg->silence_alert_s <= 0 ||
	    !alert_due(as->checked_at, i, now_ms, SILENCE_CHECK_MS))
		return IH_OK;
	rc = store_console_last_received(st, provider, &last, err, errlen);
	if (rc != IH_OK)
		return rc;
	if (last == 0 || now_ms - last <= cfg->silence_alert_s * 1000 ||
	    as->alerted_for[i] == last)
		return IH_OK;
	as->alerted_for[i] = last;
	n = snprintf(line, sizeof(line), "idemhook: %s has received nothing "
	    "for %lld s (IDEMHOOK_SILENCE_ALERT=%ld); last delivery at %lld "
	    "(Unix ms)\n", provider, (long long)((now_ms - last) / 1000),
	    cfg->silence_alert_s, (long long)last);
	run_text(cfg, provider, "silent", line,
	    n > 0 && (size_t)n < sizeof(line) ? (size_t)n : 0, log);
	return IH_OK;
}

void
alert_text(const struct config *cfg, const char *provider,
    const char *reason, const char *text, const struct log_sink *log)
{

	if (cfg->alert_action == NULL || *cfg->alert_action == '\0')
		return;
	run_text(cfg, provider, reason, text, strlen(text), log);
}

int
alert_badsig_check(struct alert_badsig *ab, size_t i,
    const struct config *cfg, const char *provider, struct store *st,
    long threshold, long minutes, int64_t now_ms,
    const struct log_sink *log, char *err, size_t errlen)
{
	char line[320];
	int64_t first = 0, last = 0;
	long count = 0;
	int rc, n;

	if (threshold <= 0 || cfg->alert_action == NULL ||
	    *cfg->alert_action == '\0' ||
	    !alert_due(ab->checked_at, i, now_ms, BADSIG_CHECK_MS))
		return IH_OK;
	rc = sigfail_count(st, cfg->db_path, provider, now_ms, minutes, &count,
	    &first, err, errlen);
	if (rc == IH_OK)
		rc = store_console_last_received(st, provider, &last, err,
		    errlen);
	if (rc != IH_OK)
		return rc;
	/* A delivery accepted during the window ends the burst. */
	if (count < threshold || last >= now_ms - minutes * 60000) {
		ab->alerted_for[i] = 0;
		return IH_OK;
	}
	if (ab->alerted_for[i] != 0)
		return IH_OK;
	ab->alerted_for[i] = first;
	n = snprintf(line, sizeof(line), "idemhook: %s refused %ld "
	    "deliveries for their signature in the last %ld minutes "
	    "(IDEMHOOK_BADSIG_ALERT=%ld) and accepted none: was the secret "
	    "rotated on one side only?\n", provider, count, minutes,
	    threshold);
	run_text(cfg, provider, "bad_signatures", line,
	    n > 0 && (size_t)n < sizeof(line) ? (size_t)n : 0, log);
	return IH_OK;
}
