/*
 * cli_smoke.c -- idemhook smoke: the endpoint tested end to end, through
 * the web server, as the provider would reach it.  A test event (smoke.h)
 * signed with the provider's (or the account's) own secret from the
 * settings is posted to the URL three times:
 *
 *   the first delivery                    200 accepted
 *   the same delivery again               200 duplicate
 *   a copy signed with a wrong secret     401
 *
 * and each answer is printed beside the one expected.  The requests go
 * through the command's one HTTP client (api_http.h: TLS verified,
 * timeouts, no redirect, a bounded answer), tried once each.  A test
 * event is recorded and processed like any other, with no action and
 * no switch (dispatch.c); with a forwarding destination it is delivered
 * to the application, and the command waits, bounded, for the store to
 * say how (forward_seen()).  --list and --purge show and delete them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>

#include "api_http.h"
#include "api_limits.h"
#include "cli_args.h"
#include "cli_list.h"
#include "cli_smoke.h"
#include "cli_text.h"
#include "clock.h"
#include "forward.h"
#include "ih.h"
#include "json.h"
#include "providers.h"
#include "redact.h"
#include "smoke.h"
#include "smoke_sign.h"
#include "store.h"
#include "version.h"

/* Longest answer kept: the receivers' bodies are a few dozen bytes. */
#define SMOKE_ANSWER_MAX	(64L * 1024)
#define SMOKE_STEPS		3
#define SMOKE_WORD_MAX		64
/* How long smoke waits by default for its event to reach a destination. */
#define SMOKE_WAIT_S		90
#define SMOKE_POLL_MS		200

static const struct {
	long		 status;
	const char	*word;		/* the body's status, or NULL */
	const char	*what;
} steps[SMOKE_STEPS] = {
	{ 200, "accepted", "the first delivery" },
	{ 200, "duplicate", "the same delivery again" },
	{ 401, NULL, "a copy signed with a wrong secret" },
};

static void
usage(FILE *f)
{
	fprintf(f, "usage: idemhook smoke PROVIDER URL [--account NAME] "
	    "[--wait SECONDS]\n"
	    "       idemhook smoke --list [--provider NAME] [--json] "
	    "[--account NAME]\n"
	    "       idemhook smoke --purge [--provider NAME] [--dry-run] "
	    "[--account NAME]\n\n"
	    "Posts a test event to URL, the endpoint of PROVIDER (stripe, "
	    "github,\nshopify, asaas, standard), signed in the provider's "
	    "own scheme with\nthe secret of the settings file "
	    "(IDEMHOOK_<PROVIDER>_SECRET, Asaas's\nIDEMHOOK_ASAAS_TOKEN; "
	    "with --account the account's, ...@NAME), and\nprints each "
	    "answer beside the one expected:\n"
	    "  200 accepted    the first delivery\n"
	    "  200 duplicate   the same delivery again\n"
	    "  401             a copy signed with a wrong secret\n"
	    "URL is https, or plain http to this machine (localhost, "
	    "127.0.0.1, ::1).\nThe test event (type %s, id %s...)\nis "
	    "recorded and processed like any other, but runs no action and "
	    "sets\nno object.  When PROVIDER (or the account) has a "
	    "FORWARD_URL, the test\nevent is forwarded to the application "
	    "too, and smoke waits (--wait,\ndefault %d s) for the store to "
	    "say how: \"forwarded: HTTP 200 in N ms\", or\nFAILED with the "
	    "attempt's status (--wait 0: not checked, from a machine\n"
	    "without the store).\n"
	    "  --list   lists the test events (idemhook list's options)\n"
	    "  --purge  deletes the processed ones (--dry-run counts "
	    "them)\n"
	    "Exit: 0 every answer as expected (and the event forwarded), 1 "
	    "another\nanswer or none, "
	    "2 usage or\nconfiguration (no secret in the settings file).\n",
	    SMOKE_TYPE, SMOKE_ID_PREFIX, SMOKE_WAIT_S);
}

/* The answer's "status" (or, for an error, its "error"), else "". */
static void
answer_word(const struct api_resp *r, char *out, size_t outlen)
{
	static const char *const keys[2] = { "status", "error" };
	struct json *js = NULL;
	char *vals[2] = { NULL, NULL };
	const char *w;

	out[0] = '\0';
	if (r->body == NULL || r->len == 0 || json_open(&js) != IH_OK)
		goto out;
	if (json_fields(js, r->body, r->len, keys, 2, vals) != IH_OK)
		goto out;
	w = vals[0] != NULL && strcmp(vals[0], "error") == 0 &&
	    vals[1] != NULL ? vals[1] : vals[0];
	if (w != NULL && strlen(w) < outlen)
		memcpy(out, w, strlen(w) + 1);
out:
	free(vals[0]);
	free(vals[1]);
	json_close(js);
}

/* Why an answer was not the one expected, for the operator. */
static void
why_unexpected(int step, long status, const char *word,
    const char *secret_var, const char *from, char *out, size_t outlen)
{
	if (step == 2 && status >= 200 && status < 300)
		snprintf(out, outlen, "the endpoint accepted a delivery "
		    "signed with a wrong secret: it does not check signatures");
	else if (step == 1 && strcmp(word, "accepted") == 0)
		snprintf(out, outlen, "the same delivery was accepted twice: "
		    "the endpoint does not deduplicate (do its programs use "
		    "one store?)");
	else if (status == 401 || status == 403)
		snprintf(out, outlen, "the endpoint refused the delivery "
		    "signed with %s from %s (%ld %s): does the receiver read "
		    "the same settings file? is the URL the account's "
		    "(/hooks/PROVIDER/ACCOUNT)? (403: "
		    "IDEMHOOK_<PROVIDER>_ALLOW_FROM)", secret_var, from,
		    status, word);
	else if (status == 404)
		snprintf(out, outlen, "404 %s: no receiver at this URL, or an "
		    "account it has no secret for", word);
	else if (status == 500)
		snprintf(out, outlen, "500 %s: the receiver is not "
		    "configured or its settings are refused: see the web "
		    "server's error log", word);
	else if (status >= 300 && status < 400)
		snprintf(out, outlen, "%ld: a redirect, which no provider "
		    "follows: give the URL the receiver answers itself "
		    "(https? a trailing slash?)", status);
	else if (status == 503)
		snprintf(out, outlen, "503 %s: the receiver cannot record now "
		    "(store busy or failing): see the web server's error log",
		    word);
	else
		snprintf(out, outlen, "%s was answered %ld %s, not %ld%s%s",
		    steps[step].what, status, word, steps[step].status,
		    steps[step].word != NULL ? " " : "",
		    steps[step].word != NULL ? steps[step].word : "");
}

/* What the command needs to post and judge the three deliveries. */
struct smoke_run {
	struct api_http		 h;
	struct smoke_msg	 m;
	const struct config	*cfg;
	/* The destination, when forwarded in IDEMHOOK_MODE=inline. */
	const struct config_forward *inline_fw;
	const char		*url;
	char			 secret_var[96];
	char			 from[1024];	/* where the settings came */
	char			 wrong[SMOKE_WRONG_MAX];
	char			 reason[2048];
	char			 version[VERSION_MAX];
};

/*
 * A 500 processing_failed in IDEMHOOK_MODE=inline with a destination:
 * the receiver verified and took the event, then its delivery to the
 * application failed; it keeps no record of it (the provider's retry
 * starts afresh), so the cause is the receiver's log line.  Says so in
 * run->reason and returns 1; returns 0 for any other answer.
 */
static int
why_inline(struct smoke_run *run, long status, const char *word)
{
	char shown[REDACT_URI_MAX];

	if (run->inline_fw == NULL || status != 500 ||
	    strcmp(word, "processing_failed") != 0)
		return 0;
	snprintf(run->reason, sizeof(run->reason), "500 processing_failed: "
	    "the receiver verified the test event (its secret and settings "
	    "are good) and, in IDEMHOOK_MODE=inline, delivered it to the "
	    "application at %s before answering; that delivery failed, so "
	    "the receiver answered 500 and kept nothing, for the provider's "
	    "retry to deliver it afresh: what the application answered, or "
	    "why it did not, is in the receiver's log line for event %s "
	    "(the web server's error log: outcome=failed "
	    "detail=forward: ...)", ih_redact(run->inline_fw->url, shown,
	    sizeof(shown)), run->m.id);
	return 1;
}

/*
 * Posts step's delivery and prints its line.  Returns 1 when the answer
 * is the one expected, 0 when another came, -1 when none did, -2 when
 * this build cannot post (the reason is then in run->reason).
 */
static int
one_step(struct smoke_run *run, int step)
{
	struct api_call call;
	struct api_resp r;
	char err[API_HTTP_ERR_MAX], word[SMOKE_WORD_MAX], got[96], want[32];
	int rc, ok = -1;

	memset(&r, 0, sizeof(r));
	if (step == 2)
		rc = smoke_msg_sign(&run->m, run->wrong, strlen(run->wrong),
		    run->secret_var, time(NULL), err, sizeof(err));
	else
		rc = smoke_msg_sign(&run->m, run->cfg->secrets[0],
		    run->cfg->secret_len[0], run->secret_var, time(NULL), err,
		    sizeof(err));
	if (rc != IH_OK) {
		snprintf(run->reason, sizeof(run->reason), "%s", err);
		goto out;
	}
	memset(&call, 0, sizeof(call));
	call.method = "POST";
	call.url = run->url;
	call.headers = run->m.headers;
	call.auth_name = run->m.auth_name;
	call.auth_value = run->m.auth_value;
	call.body = run->m.body;
	call.body_len = run->m.body_len;
	rc = api_http_call(&run->h, &call, &r, err, sizeof(err));
	if (rc == IH_ECONFIG) {
		/* The static build's client (api_none.c) posts nothing. */
		snprintf(run->reason, sizeof(run->reason), "%s; run idemhook "
		    "smoke from a machine with the dynamic build, with a "
		    "settings file that holds the same secret", err);
		ok = -2;
		goto out;
	}
	snprintf(want, sizeof(want), "%ld%s%s", steps[step].status,
	    steps[step].word != NULL ? " " : "",
	    steps[step].word != NULL ? steps[step].word : "");
	/* A 5xx ends the call as failed, with its answer kept. */
	if (r.status <= 0 || (rc != IH_OK && rc != IH_EIO)) {
		cli_printf(stdout, "%-19s expected %-14s %s: UNEXPECTED\n",
		    "no answer", want, steps[step].what);
		snprintf(run->reason, sizeof(run->reason), "no answer to %s: "
		    "%s", steps[step].what, err);
		goto out;
	}
	answer_word(&r, word, sizeof(word));
	snprintf(got, sizeof(got), "%ld%s%s", r.status, word[0] ? " " : "",
	    word);
	ok = r.status == steps[step].status && (steps[step].word == NULL ||
	    strcmp(word, steps[step].word) == 0);
	cli_printf(stdout, "%-19s expected %-14s %s%s\n", got, want,
	    steps[step].what, ok ? "" : ": UNEXPECTED");
	if (!ok && run->reason[0] == '\0' && !why_inline(run, r.status,
	    word))
		why_unexpected(step, r.status, word, run->secret_var,
		    run->from, run->reason, sizeof(run->reason));
out:
	api_resp_free(&r);
	return ok;
}

/* Where the command read its settings, for the messages. */
static void
settings_from(const struct cli *c, char *out, size_t outlen)
{
	if (c->config_path != NULL)
		snprintf(out, outlen, "the settings file %s (%s)",
		    c->config_path, c->config_from);
	else
		snprintf(out, outlen, "this command's environment (no "
		    "settings file read: --config FILE names one)");
}

/* The first version the settings expect, or NULL for none. */
static const char *
first_version(const struct config *cfg, char *buf, size_t len)
{
	size_t n;

	if (cfg->api_versions == NULL || cfg->api_versions[0] == '\0')
		return NULL;
	n = strcspn(cfg->api_versions, ",");
	if (n >= len)
		return NULL;
	memcpy(buf, cfg->api_versions, n);
	buf[n] = '\0';
	return buf;
}

/* Reads the settings and makes the test event: CLI_EXIT_*. */
static int
prepare(struct cli *c, int pi, const char *url, struct smoke_run *run)
{
	const struct provider *p = providers_all[pi];
	char err[API_HTTP_ERR_MAX], shown[REDACT_URI_MAX];
	const char *why;

	if (cli_config(c, (size_t)pi, &run->cfg) != IH_OK)
		return CLI_EXIT_USAGE;
	snprintf(run->secret_var, sizeof(run->secret_var), "%s%s%s",
	    p->secret_var, c->account != NULL ? "@" : "",
	    c->account != NULL ? c->account : "");
	settings_from(c, run->from, sizeof(run->from));
	if (run->cfg->nsecrets == 0) {
		cli_errorf("smoke: no %s in %s%s: the test event is signed "
		    "with the secret the receiver checks, so this command "
		    "must read it too", run->secret_var, run->from,
		    c->config_path != NULL ? ", nor in this command's "
		    "environment" : "");
		cli_errorf("smoke: a secret the web server gives the "
		    "programs itself "
		    "(lighttpd bin-environment, Apache SetEnv, nginx "
		    "fastcgi_param) is not seen here: put %s in the settings "
		    "file the programs read, and name that file with "
		    "--config FILE", run->secret_var);
		return CLI_EXIT_USAGE;
	}
	if (api_http_url_ok(url, err, sizeof(err)) != IH_OK) {
		cli_errorf("smoke: %s: give the endpoint's https URL, or plain "
		    "http to this machine (localhost, 127.0.0.1, ::1): the "
		    "signed test event must not cross a network in clear",
		    ih_redact(url, shown, sizeof(shown)));
		return CLI_EXIT_USAGE;
	}
	run->url = url;
	if (run->cfg->mode == CONFIG_MODE_INLINE)
		run->inline_fw = forward_dest(run->cfg, c->account);
	if (smoke_msg_new(&run->m, p->name, first_version(run->cfg,
	    run->version, sizeof(run->version)), time(NULL), err,
	    sizeof(err)) != IH_OK ||
	    smoke_wrong_secret(p->name, run->cfg->secrets[0],
	    run->cfg->secret_len[0], run->wrong, sizeof(run->wrong)) !=
	    IH_OK) {
		cli_errorf("smoke: %s", err[0] ? err : "no random bytes");
		return CLI_EXIT_FAIL;
	}
	/* Signed as the receiver checks: its own verification says so. */
	if (smoke_msg_sign(&run->m, run->cfg->secrets[0],
	    run->cfg->secret_len[0], run->secret_var, time(NULL), err,
	    sizeof(err)) != IH_OK) {
		cli_errorf("smoke: %s", err);
		return CLI_EXIT_USAGE;
	}
	if (smoke_msg_verify(&run->m, run->cfg, time(NULL), &why) != IH_OK) {
		cli_errorf("smoke: the test event does not pass %s's own "
		    "check: %s", p->name, why);
		return CLI_EXIT_FAIL;
	}
	return CLI_EXIT_OK;
}

/* What the store says of the test event, as forwarding left it. */
struct smoke_seen {
	const char	*id;		/* the test event's id, its suffix */
	int		 found;
	int64_t		 rowid;
	int64_t		 attempts;
	char		 status[16];
	char		 detail[512];	/* the last attempt's error */
};

static int
seen_row(void *arg, const struct store_row *row)
{
	struct smoke_seen *s = arg;
	size_t n = strlen(row->event_id), k = strlen(s->id);

	/* GitHub's id is "-:" and the test event's. */
	if (n < k || strcmp(row->event_id + n - k, s->id) != 0)
		return IH_OK;
	s->found = 1;
	s->rowid = row->rowid;
	s->attempts = row->attempts;
	snprintf(s->status, sizeof(s->status), "%s", row->status);
	return IH_OK;
}

static int
seen_attempt(void *arg, const struct store_attempt *a)
{
	struct smoke_seen *s = arg;

	snprintf(s->detail, sizeof(s->detail), "%s",
	    a->error != NULL ? a->error : "");
	return IH_OK;
}

/* Reads the test event's state into s; IH_OK or IH_ESTORE (err). */
static int
seen_read(struct store *st, const char *provider, struct smoke_seen *s,
    char *err, size_t errlen)
{
	struct store_filter f;
	int rc;

	memset(&f, 0, sizeof(f));
	f.provider = provider;
	f.event_type = SMOKE_TYPE;
	s->found = 0;
	s->detail[0] = '\0';
	rc = store_list(st, &f, seen_row, s, err, errlen);
	if (rc == IH_OK && s->found)
		rc = store_attempts(st, s->rowid, seen_attempt, s, err,
		    errlen);
	return rc;
}

/*
 * With a destination for the provider (or the account), the test event
 * is forwarded like any other: waits at most wait_s for the store to say
 * how its delivery ended, and prints "forwarded: HTTP 200 in N ms ..."
 * or a FAILED line.  Returns 1 delivered, 0 not.
 */
static int
forward_seen(struct cli *c, const char *provider, struct smoke_run *run,
    long wait_s)
{
	const struct config_forward *fw = forward_dest(run->cfg, c->account);
	struct smoke_seen *s;
	struct store *st;
	struct timespec nap = { 0, SMOKE_POLL_MS * 1000000L };
	char err[STORE_ERR_MAX], shown[REDACT_URI_MAX];
	const char *d;
	int64_t end = clock_mono_ms() + (int64_t)wait_s * 1000;
	int ok = 0;

	if (fw == NULL)
		return 1;
	if (wait_s == 0) {
		/* From another machine, whose settings name no store. */
		cli_printf(stdout, "forwarding: to %s, not checked "
		    "(--wait 0)\n", ih_redact(fw->url, shown, sizeof(shown)));
		return 1;
	}
	s = calloc(1, sizeof(*s));
	if (s == NULL) {
		snprintf(run->reason, sizeof(run->reason), "out of memory");
		return 0;
	}
	s->id = run->m.id;
	cli_printf(stdout, "forwarding: the test event to %s (waiting at "
	    "most %ld s)\n", ih_redact(fw->url, shown, sizeof(shown)), wait_s);
	if (cli_store(c, &st) != IH_OK) {
		snprintf(run->reason, sizeof(run->reason), "cannot open the "
		    "store to see the test event's delivery: run idemhook "
		    "smoke as the programs' user, with their settings file");
		goto out;
	}
	for (;;) {
		if (seen_read(st, provider, s, err, sizeof(err)) != IH_OK) {
			snprintf(run->reason, sizeof(run->reason), "cannot "
			    "read the test event: %s", err);
			goto out;
		}
		if (s->found && (strcmp(s->status, "done") == 0 ||
		    strcmp(s->status, "failed") == 0 ||
		    strcmp(s->status, "dead") == 0))
			break;
		if (clock_mono_ms() >= end) {
			snprintf(run->reason, sizeof(run->reason), "the test "
			    "event was not delivered within %ld s: it is %s "
			    "after %lld attempt(s)%s%s (does idemhook work "
			    "run? is the destination paused? idemhook list "
			    "--provider %s says why it waits; from a machine "
			    "without the store, --wait 0)", wait_s,
			    s->found ? s->status : "not in the store",
			    (long long)s->attempts, s->detail[0] ? ", the "
			    "last: " : "", s->detail, provider);
			goto out;
		}
		nanosleep(&nap, NULL);
	}
	d = s->detail;
	if (strncmp(d, "forward: ", 9) != 0) {
		/* Processed by a program that forwards nothing of it. */
		cli_printf(stdout, "forwarded: FAILED: not forwarded\n");
		snprintf(run->reason, sizeof(run->reason), "the test event is "
		    "%s, processed without a delivery: do the programs read "
		    "the settings file this command read (%s), and are they "
		    "of this version?", s->status, run->from);
		goto out;
	}
	d += 9;
	if (strcmp(s->status, "done") == 0) {
		cli_printf(stdout, "forwarded: %s\n", d);
		ok = 1;
		goto out;
	}
	cli_printf(stdout, "forwarded: FAILED: attempt %lld: %s\n",
	    (long long)s->attempts, d);
	snprintf(run->reason, sizeof(run->reason), "the application did not "
	    "take the test event (attempt %lld: %s); it is %s%s: see "
	    "idemhook show %s %s", (long long)s->attempts, d, s->status,
	    strcmp(s->status, "dead") == 0 ? "" : " and retried", provider,
	    run->m.id);
out:
	free(s);
	return ok;
}

static int
smoke_run(struct cli *c, const char *provider, const char *url,
    long wait_s)
{
	struct smoke_run *run;
	char err[API_HTTP_ERR_MAX], shown[REDACT_URI_MAX];
	int pi, step, ok, ret, good = 0;

	pi = cli_provider_index(provider);
	if (pi < 0)
		return CLI_EXIT_USAGE;
	/* On the heap: the run holds a few kilobytes of buffers. */
	run = calloc(1, sizeof(*run));
	if (run == NULL) {
		cli_errorf("smoke: out of memory");
		return CLI_EXIT_FAIL;
	}
	ret = prepare(c, pi, url, run);
	if (ret != CLI_EXIT_OK)
		goto out;
	if (api_http_init(&run->h) != IH_OK ||
	    api_limits_read(c, &run->h, err, sizeof(err)) != IH_OK) {
		cli_errorf("smoke: %s", run->h.curl == NULL ? "out of memory" :
		    err);
		ret = run->h.curl == NULL ? CLI_EXIT_FAIL : CLI_EXIT_USAGE;
		goto out;
	}
	/* Each delivery once: a retried first one would be a duplicate. */
	run->h.max_tries = 1;
	run->h.body_max = SMOKE_ANSWER_MAX;
	run->h.agent = "idemhook smoke";
	cli_printf(stdout, "%s%s%s: test event %s to %s\n", provider,
	    c->account != NULL ? " account " : "",
	    c->account != NULL ? c->account : "", run->m.id,
	    ih_redact(url, shown, sizeof(shown)));
	for (step = 0; step < SMOKE_STEPS; step++) {
		ok = one_step(run, step);
		if (ok < 0)
			break;
		good += ok;
	}
	if (ok == -2) {
		cli_errorf("smoke: %s", run->reason);
		ret = CLI_EXIT_USAGE;
	} else if (good == SMOKE_STEPS && forward_seen(c, provider, run,
	    wait_s)) {
		printf("ok: every answer as expected\n");
		ret = CLI_EXIT_OK;
	} else {
		cli_printf(stdout, "FAILED: %s\n", run->reason);
		cli_errorf("smoke: %s", run->reason);
		ret = CLI_EXIT_FAIL;
	}
out:
	api_http_free(&run->h);
	smoke_msg_clear(&run->m);
	OPENSSL_cleanse(run->wrong, sizeof(run->wrong));
	free(run);
	return ret;
}

/* Counts the rows store_list() walks. */
static int
count_row(void *arg, const struct store_row *row)
{
	(void)row;
	(*(long *)arg)++;
	return IH_OK;
}

/* idemhook smoke --purge: the processed test events, deleted. */
static int
smoke_purge(struct cli *c, const char *only, int dry_run)
{
	struct store_filter f;
	struct store_purge p;
	struct store *st;
	char err[STORE_ERR_MAX];
	long left = 0;
	int i, ret = CLI_EXIT_OK;

	if (cli_store(c, &st) != IH_OK)
		return CLI_EXIT_FAIL;
	for (i = 0; providers_all[i] != NULL; i++) {
		if (only != NULL && strcmp(only, providers_all[i]->name) != 0)
			continue;
		memset(&p, 0, sizeof(p));
		p.provider = providers_all[i]->name;
		p.account = c->account;
		p.event_type = SMOKE_TYPE;
		/* Every one received so far, dead ones too. */
		p.payload_before_ms = clock_wall_ms() + 1;
		p.row_before_ms = p.payload_before_ms;
		p.include_dead = 1;
		p.batch = 500;
		p.dry_run = dry_run;
		if (store_purge(st, &p, err, sizeof(err)) != IH_OK) {
			cli_errorf("smoke: purge: %s: %s", p.provider, err);
			ret = CLI_EXIT_FAIL;
			continue;
		}
		printf("%s: %s %ld test event(s)\n", p.provider,
		    dry_run ? "would delete" : "deleted", p.rows);
	}
	memset(&f, 0, sizeof(f));
	f.provider = only;
	f.account = c->account;
	f.event_type = SMOKE_TYPE;
	if (store_list(st, &f, count_row, &left, err, sizeof(err)) != IH_OK) {
		cli_errorf("smoke: purge: %s", err);
		return CLI_EXIT_FAIL;
	}
	if (left > 0 && !dry_run)
		printf("%ld test event(s) not processed yet are kept "
		    "(idemhook work processes them)\n", left);
	return ret;
}

int
cli_smoke(struct cli *c, int argc, char **argv)
{
	char *largv[64];
	const char *only = NULL, *pos[2];
	long wait_s = SMOKE_WAIT_S;
	int a, r, n, dry_run = 0;

	if (argc > 1 && strcmp(argv[1], "--list") == 0) {
		/* idemhook list of the test events, with list's options. */
		if (argc + 2 > (int)(sizeof(largv) / sizeof(largv[0]))) {
			usage(stderr);
			return CLI_EXIT_USAGE;
		}
		n = 0;
		largv[n++] = "list";
		largv[n++] = "--type";
		largv[n++] = SMOKE_TYPE;
		for (a = 2; a < argc; a++)
			largv[n++] = argv[a];
		largv[n] = NULL;
		return cli_list(c, n, largv);
	}
	if (argc > 1 && strcmp(argv[1], "--purge") == 0) {
		for (a = 2; a < argc; a++) {
			r = cli_opt(argc, argv, &a, "--provider", &only);
			if (r < 0)
				return CLI_EXIT_USAGE;
			if (r == 1 && cli_provider_index(only) < 0)
				return CLI_EXIT_USAGE;
			if (r > 0)
				continue;
			if (strcmp(argv[a], "--dry-run") == 0)
				dry_run = 1;
			else
				return cli_help_or_usage(argv[a], usage);
		}
		return smoke_purge(c, only, dry_run);
	}
	n = 0;
	for (a = 1; a < argc; a++) {
		r = cli_opt(argc, argv, &a, "--wait", &only);
		if (r < 0)
			return CLI_EXIT_USAGE;
		if (r > 0) {
			if (cli_parse_long(only, 0, 3600, &wait_s) != 0) {
				cli_errorf("smoke: --wait %s: give seconds, 0 "
				    "to 3600", only);
				return CLI_EXIT_USAGE;
			}
			continue;
		}
		if (argv[a][0] == '-')
			return cli_help_or_usage(argv[a], usage);
		if (n == 2) {
			usage(stderr);
			return CLI_EXIT_USAGE;
		}
		pos[n++] = argv[a];
	}
	if (n != 2) {
		usage(stderr);
		return CLI_EXIT_USAGE;
	}
	return smoke_run(c, pos[0], pos[1], wait_s);
}
