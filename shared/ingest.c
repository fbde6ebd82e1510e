/* ingest.c -- one delivery: checks, verify, identity; its answer. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>

#include "allow.h"
#include "clock.h"
#include "config.h"
#include "docroot.h"
#include "forward.h"
#include "headers.h"
#include "ih.h"
#include "ingest.h"
#include "ingest_account.h"
#include "json.h"
#include "log.h"
#include "provider.h"
#include "request.h"
#include "respond.h"
#include "sigfail.h"
#include "smoke.h"
#include "store.h"
#include "verify.h"

/* A body buffer larger than this is released after its request. */
#define BODY_KEEP_MAX		(1024 * 1024)
/* Most of an unread CGI body read and dropped before exiting. */
#define CGI_DRAIN_MAX		(64L * 1024 * 1024)

int
ingest_init(struct ingest *in, const struct provider *p, struct settings *s)
{
	memset(in, 0, sizeof(*in));
	in->p = p;
	in->settings = s;
	log_dest_init(&in->logd);
	if (sem_init(&in->recorded, 0, 0) != 0)
		return IH_ENOMEM;
	in->recorded_ok = 1;
	return json_open(&in->json);
}

void
ingest_free(struct ingest *in)
{
	ingest_end(in);
	config_free(&in->cfg);
	json_close(in->json);
	in->json = NULL;
	request_free(&in->req);
	log_dest_close(&in->logd);
	if (in->recorded_ok)
		sem_destroy(&in->recorded);
	in->recorded_ok = 0;
}

void
ingest_begin(struct ingest *in, const struct io *io)
{
	in->t0 = clock_mono_ns();
	in->io = *io;
	memset(&in->id, 0, sizeof(in->id));
	memset(&in->ev, 0, sizeof(in->ev));
	memset(&in->out, 0, sizeof(in->out));
	memset(&in->job, 0, sizeof(in->job));
	memset(&in->found, 0, sizeof(in->found));
	in->found_ok = 0;
	in->quarantine = NULL;
	in->same_action[0] = '\0';
	in->headers[0] = '\0';
	in->api_version[0] = '\0';
	snprintf(in->account, sizeof(in->account), "%s", ACCOUNT_DEFAULT);
	in->later = 0;
	in->inline_run = 0;
	in->sigfail = 0;
	in->deferred_len = 0;
	request_begin(&in->req, &in->io.req);
}

/* Keeps whole lines only: one that does not fit is dropped. */
static void
defer_write(void *arg, const char *line, size_t len)
{
	struct ingest *in = arg;

	if (len > sizeof(in->deferred) - in->deferred_len)
		return;
	memcpy(in->deferred + in->deferred_len, line, len);
	in->deferred_len += len;
}

const struct log_sink *
ingest_deferred(struct ingest *in)
{
	in->defer.write = defer_write;
	in->defer.arg = in;
	return &in->defer;
}

void
ingest_write_deferred(struct ingest *in, const struct log_sink *sink)
{
	log_write_lines(sink, in->deferred, in->deferred_len);
	in->deferred_len = 0;
}

void
ingest_job_borrow(struct ingest *in)
{
	if (in->job.ev.payload == NULL) {
		in->job.ev.payload = in->req.body;
		in->job.ev.payload_len = in->req.body_len;
	}
	/* The same bytes, already mapped on receipt: no second parse. */
	if (in->job.ev.payload == in->req.body && in->found_ok)
		in->job.ev.found = &in->found;
}

void
ingest_job_drop(struct ingest *in)
{
	if (in->job.ev.payload == in->req.body)
		in->job.ev.payload = NULL;
	in->job.ev.found = NULL;
	store_job_free(&in->job);
}

void
ingest_end(struct ingest *in)
{
	ingest_job_drop(in);
	if (in->req.body_cap > BODY_KEEP_MAX)
		request_free(&in->req);
	ident_free(&in->id);
	memset(&in->ev, 0, sizeof(in->ev));
	object_found_free(&in->found);
	in->found_ok = 0;
}

/*
 * Refuses to serve when the store or the settings file lies under the
 * request's document root (DOCUMENT_ROOT, and CONTEXT_DOCUMENT_ROOT for
 * ~user/ sites), where one server misconfiguration lets anyone download
 * it.  There is no exception, not even the hooks folder whose .htaccess
 * denies those names: that only works under Apache with overrides on.
 * Returns 1 with the cause in err.
 */
static int
under_docroot(const struct ingest *in, char *err, size_t errlen)
{
	static const char *const roots[] = { "DOCUMENT_ROOT",
	    "CONTEXT_DOCUMENT_ROOT", NULL };
	const char *files[2], *what[2] = { "store", "settings file" }, *dr;
	char rroot[PATH_MAX], rfile[PATH_MAX];
	size_t i, j;

	files[0] = in->cfg.db_path;
	files[1] = in->file_path[0] != '\0' ? in->file_path : NULL;
	for (i = 0; roots[i] != NULL; i++) {
		dr = io_param(&in->io, roots[i]);
		if (dr == NULL || *dr != '/' || realpath(dr, rroot) == NULL ||
		    strcmp(rroot, "/") == 0)
			continue;
		for (j = 0; j < 2; j++) {
			if (files[j] == NULL || docroot_resolve(files[j],
			    rfile, sizeof(rfile)) != 0)
				continue;
			if (docroot_contains(rroot, rfile)) {
				snprintf(err, errlen, "%s under document root:"
				    " %.200s", what[j], rfile);
				return 1;
			}
		}
	}
	return 0;
}

/*
 * Appends s (NULL: nothing) and a newline to key, of cap bytes, at *len.
 * Returns 0 when it does not fit.  Not snprintf(): this runs for every
 * request (make bench-pages).
 */
static int
key_add(char *key, size_t cap, size_t *len, const char *s)
{
	size_t n = s != NULL ? strlen(s) : 0;

	if (n + 2 > cap - *len)
		return 0;
	memcpy(key + *len, s != NULL ? s : "", n);
	key[*len + n] = '\n';
	key[*len + n + 1] = '\0';
	*len += n + 1;
	return 1;
}

/* Copies the remembered verdict's message into err. */
static int
docroot_said(const struct ingest *in, char *err, size_t errlen)
{
	if (in->dr_err[0] == '\0' && errlen > 0)
		err[0] = '\0';
	else
		snprintf(err, errlen, "%s", in->dr_err);
	return in->dr_bad;
}

/*
 * under_docroot(), remembered for the same inputs (document roots, store,
 * settings file) during INGEST_DOCROOT_MS.
 */
static int
under_docroot_cached(struct ingest *in, char *err, size_t errlen)
{
	char key[sizeof(in->dr_key)];
	size_t n = 0;
	double age;

	if (!key_add(key, sizeof(key), &n, io_param(&in->io,
	    "DOCUMENT_ROOT")) || !key_add(key, sizeof(key), &n,
	    io_param(&in->io, "CONTEXT_DOCUMENT_ROOT")) ||
	    !key_add(key, sizeof(key), &n, in->cfg.db_path) ||
	    !key_add(key, sizeof(key), &n, in->file_path))
		return under_docroot(in, err, errlen);
	age = (double)(in->t0 - in->dr_at) / 1e6;
	if (age >= 0 && age < INGEST_DOCROOT_MS &&
	    memcmp(key, in->dr_key, n + 1) == 0)
		return docroot_said(in, err, errlen);
	in->dr_err[0] = '\0';
	in->dr_bad = under_docroot(in, in->dr_err, sizeof(in->dr_err));
	memcpy(in->dr_key, key, n + 1);
	in->dr_at = in->t0;
	return docroot_said(in, err, errlen);
}

/* Names an unusable body by its digest, with the type "unusable". */
static int
quarantine_ident(const char *fingerprint, struct ident *id)
{
	char name[VERIFY_SHA256_HEX + 16];
	int rc;

	ident_free(id);
	snprintf(name, sizeof(name), "unusable:%s", fingerprint);
	rc = ident_set(&id->event_id, name, strlen(name));
	if (rc == IH_OK)
		rc = ident_set(&id->event_type, "unusable", 8);
	return rc;
}

/* The delivery's account and its settings (ingest_account.h). */
static int
account_of(struct ingest *in, const struct log_sink *sink)
{
	struct ingest_account_view v;

	v.p = in->p;
	v.settings = in->settings;
	v.io = &in->io;
	v.req = &in->req;
	v.account = in->account;
	v.account_len = sizeof(in->account);
	v.cfg = &in->cfg;
	v.file_path = in->file_path;
	v.file_path_len = sizeof(in->file_path);
	v.out = &in->out;
	return ingest_account(&v, sink);
}

/* The settings, the log destination and the checks before the body. */
static int
read_head(struct ingest *in, const struct log_sink *sink)
{
	const struct config *cfg = &in->cfg;
	char err[STORE_ERR_MAX];
	const char *v;
	int allowed;

	err[0] = '\0';
	if (!account_of(in, sink))
		return 0;
	/* Before any line of this request: inline mode logs effects. */
	if (log_dest_set(&in->logd, cfg->log, in->logd_err,
	    sizeof(in->logd_err)) != IH_OK && in->logd_err[0] == '\0')
		snprintf(in->logd_err, sizeof(in->logd_err), "IDEMHOOK_LOG "
		    "unusable");
	if (under_docroot_cached(in, err, sizeof(err))) {
		outcome_set(&in->out, 500, "under_document_root", err);
		return 0;
	}
	if (strcmp(in->req.method, "POST") != 0) {
		outcome_set(&in->out, 405, "method_not_allowed",
		    in->req.method);
		return 0;
	}
	if (cfg->allow_from != NULL) {
		v = io_param(&in->io, "REMOTE_ADDR");
		if (allow_check(cfg->allow_from, v, &allowed, err,
		    sizeof(err)) != IH_OK) {
			outcome_set(&in->out, 500, "bad_config", err);
			return 0;
		}
		if (!allowed) {
			snprintf(err, sizeof(err), "REMOTE_ADDR %s is outside "
			    "IDEMHOOK_ALLOW_FROM", v != NULL ? v : "(none)");
			outcome_set(&in->out, 403, "forbidden_source", err);
			return 0;
		}
	}
	if (cfg->nsecrets == 0) {
		snprintf(err, sizeof(err), "no secret configured: set %s",
		    in->p->secret_var);
		outcome_set(&in->out, 500, "not_configured", err);
		return 0;
	}
	/*
	 * Without its signature header a request cannot be authentic: refuse
	 * it from the headers, before reading or hashing any of its body.
	 */
	if (in->p->sig_header != NULL &&
	    request_header(&in->req, in->p->sig_header) == NULL) {
		snprintf(err, sizeof(err), "missing %s header",
		    in->p->sig_header);
		outcome_set(&in->out, 401, "bad_signature", err);
		return 0;
	}
	return 1;
}

/*
 * The provider's sub-account named by the signed body (Stripe Connect's
 * "account"), kept when it is a plain id of letters, digits and '_'.
 * Returns IH_OK or IH_ENOMEM.
 */
static int
source_account_of(struct ingest *in, const struct provider_req *pr)
{
	const char *keys[1];
	char *val = NULL;
	size_t n;
	int rc;

	in->source_account[0] = '\0';
	if (in->p->source_account_key == NULL)
		return IH_OK;
	keys[0] = in->p->source_account_key;
	rc = provider_fields(pr, keys, 1, &val);
	if (rc == IH_ENOMEM)
		return rc;
	if (val != NULL) {
		n = strspn(val, "abcdefghijklmnopqrstuvwxyz"
		    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
		if (n > 0 && val[n] == '\0' &&
		    n < sizeof(in->source_account))
			memcpy(in->source_account, val, n + 1);
	}
	free(val);
	return IH_OK;
}

/* The body's SHA-256 in in->fingerprint; else answers 503. */
static int
digest_body(struct ingest *in)
{
	if (verify_sha256_hex(in->req.body, in->req.body_len,
	    in->fingerprint) == IH_OK)
		return 1;
	outcome_set(&in->out, 503, "out_of_memory", "cannot hash the body");
	return 0;
}

static int	read_identity(struct ingest *in,
		    const struct provider_req *pr);

/*
 * Whether a refused request is idemhook smoke's own copy, signed with the
 * wrong secret derived from this endpoint's (smoke.h): only that one is
 * left out of the bad-signature count.  The header alone decides
 * nothing; it only asks for this one more verification.
 */
static int
smoke_refused(const struct ingest *in, const struct provider_req *pr)
{
	char wrong[CONFIG_MAX_SECRETS][SMOKE_WRONG_MAX];
	struct provider_req again;
	struct config *cfg;
	const char *why = "";
	size_t i;
	int yes = 0;

	if (request_header(&in->req, SMOKE_HEADER) == NULL ||
	    in->cfg.nsecrets == 0)
		return 0;
	cfg = malloc(sizeof(*cfg));
	if (cfg == NULL)
		return 0;
	*cfg = in->cfg;
	for (i = 0; i < in->cfg.nsecrets; i++) {
		if (smoke_wrong_secret(in->p->name, in->cfg.secrets[i],
		    in->cfg.secret_len[i], wrong[i], sizeof(wrong[i])) != IH_OK)
			goto out;
		cfg->secrets[i] = wrong[i];
		cfg->secret_len[i] = strlen(wrong[i]);
	}
	again = *pr;
	again.cfg = cfg;
	yes = in->p->verify(&again, &why) == IH_OK;
out:
	OPENSSL_cleanse(wrong, sizeof(wrong));
	free(cfg);
	return yes;
}

/*
 * The object the switch will map, from the receipt's own pass over the
 * body, for an event processed in this process (ingest_job_borrow()).
 * Anything the memo cannot tell is left to the switch's parse.
 */
static void
found_on_receipt(struct ingest *in, struct provider_memo *memo)
{
	struct event ev;

	if (in->quarantine != NULL || in->p->map_object == NULL)
		return;
	memset(&ev, 0, sizeof(ev));
	ev.provider = in->p->name;
	ev.event_id = in->id.event_id;
	ev.event_type = in->id.event_type;
	ev.subtype = in->id.subtype;
	ev.payload = in->req.body;
	ev.payload_len = in->req.body_len;
	if (provider_memo_found(memo, in->p, &ev, &in->found) == IH_OK)
		in->found_ok = 1;
	else
		object_found_free(&in->found);
}

/* The body, its signature, its digest and its identity. */
static int
read_body(struct ingest *in)
{
	struct provider_req pr;
	struct provider_memo memo;
	const char *why = "";
	char err[STORE_ERR_MAX];
	int ok, rc, counted;

	rc = request_read_body(&in->req, (size_t)in->cfg.max_body);
	if (rc == IH_ETOOBIG) {
		outcome_set(&in->out, 413, "too_large",
		    "over IDEMHOOK_MAX_BODY");
		return 0;
	} else if (rc == IH_ENOMEM) {
		outcome_set(&in->out, 503, "out_of_memory", "");
		return 0;
	} else if (rc != IH_OK) {
		outcome_set(&in->out, 400, "bad_length",
		    "body length differs from Content-Length");
		return 0;
	}
	/* The input's end too, for a quicker close (io.h). */
	if (in->io.fx != NULL)
		io_fcgi_read_end(in->io.fx);
	memset(&pr, 0, sizeof(pr));
	pr.req = &in->req;
	pr.cfg = &in->cfg;
	pr.now = clock_wall_s();
	pr.check_time = 1;
	pr.json = in->json;
	verify_first_use(in->cfg.db_path);
	rc = in->p->verify(&pr, &why);
	/*
	 * Counted for the alarm on a burst of them (sigfail.h): beside a
	 * SQLite store here; for a PostgreSQL store in the process's
	 * memory by the caller (serve.c, sigfail_pend.h), never through a
	 * connection of the store.  idemhook smoke's refused copy is not
	 * the provider's, once it proves itself one (smoke.h).
	 */
	counted = rc == IH_EAUTH && !smoke_refused(in, &pr);
	if (counted && store_is_postgres(in->cfg.db_path))
		in->sigfail = 1;
	else if (counted)
		(void)sigfail_note(in->cfg.db_path, in->p->name,
		    clock_wall_ms(), err, sizeof(err));
	if (rc != IH_OK) {
		outcome_set(&in->out, 401, rc == IH_ESTALE ?
		    "stale_timestamp" : "bad_signature", why);
		return 0;
	}
	/* One pass of the parser for every top-level member read below. */
	provider_memo_fill(&memo, in->p, &pr);
	pr.memo = &memo;
	ok = read_identity(in, &pr);
	if (ok)
		found_on_receipt(in, &memo);
	provider_memo_free(&memo);
	return ok;
}

/* The verified body's digest, identity, API version and kind. */
static int
read_identity(struct ingest *in, const struct provider_req *pr)
{
	const char *why = "";
	int rc;

	/*
	 * The digest only where something reads it: the replay check of a
	 * provider whose id and type are unsigned (stored with the event),
	 * or the name of an unusable body (below).  A SHA-256 of the body is
	 * as much work as its signature.
	 */
	in->fingerprint[0] = '\0';
	if (in->p->type_unsigned && !digest_body(in))
		return 0;
	rc = in->p->identify(pr, &in->id, &why);
	if (rc == IH_ENOMEM) {
		outcome_set(&in->out, 503, "out_of_memory", "");
		return 0;
	} else if (rc != IH_OK && !in->p->keep_unusable) {
		outcome_set(&in->out, 400, "bad_body", why);
		return 0;
	} else if (rc != IH_OK) {
		/*
		 * Refusing would make the provider retry a body that can
		 * never succeed, until it pauses the queue; keep it for the
		 * operator instead, named by its digest so a redelivery of
		 * the same bytes is still a duplicate.
		 */
		in->quarantine = why;
		if (in->fingerprint[0] == '\0' && !digest_body(in))
			return 0;
		if (quarantine_ident(in->fingerprint, &in->id) != IH_OK) {
			outcome_set(&in->out, 503, "out_of_memory", "");
			return 0;
		}
	}
	if (version_of(in->p, pr, in->api_version,
	    sizeof(in->api_version)) != IH_OK ||
	    source_account_of(in, pr) != IH_OK) {
		outcome_set(&in->out, 503, "out_of_memory", "");
		return 0;
	}
	/* A thin event: recorded for idemhook work to fetch (store_thin.h). */
	if (in->quarantine == NULL && in->p->needs_fetch != NULL &&
	    in->p->needs_fetch(pr, &in->ev.needs_fetch) != IH_OK) {
		outcome_set(&in->out, 503, "out_of_memory", "");
		return 0;
	}
	return 1;
}

/*
 * For a provider whose id and type are unsigned headers, the line of the
 * header shared by one action's events, for the replay check.
 */
static void
same_action_line(struct ingest *in)
{
	const char *v = NULL;

	in->same_action[0] = '\0';
	if (!in->p->type_unsigned || in->p->same_action_header == NULL)
		return;
	v = request_header(&in->req, in->p->same_action_header);
	if (v == NULL || *v == '\0')
		return;
	if (headers_line(in->p->same_action_header, v, in->same_action,
	    sizeof(in->same_action)) != IH_OK)
		in->same_action[0] = '\0';
}

int
ingest_read(struct ingest *in)
{
	if (!read_head(in, &in->io.log) || !read_body(in))
		return 0;
	if (headers_keep(&in->req, in->p->kept_headers, in->headers,
	    sizeof(in->headers)) != IH_OK) {
		outcome_set(&in->out, 400, "headers_too_large", "");
		return 0;
	}
	same_action_line(in);
	in->ev.provider = in->p->name;
	in->ev.account = in->account;
	in->ev.event_id = in->id.event_id;
	in->ev.event_type = in->id.event_type;
	in->ev.subtype = in->id.subtype;
	in->ev.order_key = in->id.order_key;
	in->ev.status = in->quarantine != NULL ? "quarantined" : NULL;
	in->ev.payload = in->req.body;
	in->ev.payload_len = in->req.body_len;
	in->ev.headers = in->headers;
	/*
	 * Stored only where the replay check reads it (provider.h): else
	 * each event would add an entry at a random place of the
	 * fingerprint index, a page written per event for nothing.
	 */
	in->ev.fingerprint = in->p->type_unsigned ? in->fingerprint : NULL;
	in->ev.api_version = in->api_version[0] != '\0' ? in->api_version :
	    NULL;
	in->ev.source_account = in->source_account[0] != '\0' ?
	    in->source_account : NULL;
	/*
	 * Recorded and answered as always, but not processed (version.h).
	 * A thin event is unversioned by design: it is never held for that.
	 */
	if (in->quarantine == NULL && !in->ev.needs_fetch &&
	    !version_expected(in->cfg.api_versions, in->ev.api_version))
		in->ev.status = "held";
	in->ev.replaces_held = in->quarantine == NULL && !in->ev.needs_fetch &&
	    version_replaces(in->p, in->cfg.api_versions, in->ev.api_version);
	/* A forwarded event waits for its object's earlier ones (forward.h). */
	if (forward_order_key(&in->cfg, in->p, &in->ev, in->order_key,
	    sizeof(in->order_key)))
		in->ev.order_key = in->order_key;
	return 1;
}

void
ingest_answer(struct ingest *in)
{
	char cid[LOG_CLEAN_SIZE], ctype[LOG_CLEAN_SIZE];
	char cdetail[LOG_CLEAN_SIZE];
	const struct outcome *o = &in->out;

	if (respond_send(&in->io.rsp, &o->rsp) != IH_OK &&
	    o->rsp.status == 200)
		in->out.name = "answer_lost";
	if (in->io.fx == NULL) {
		fflush(stdout);
		request_drain(&in->req, CGI_DRAIN_MAX);
	} else {
		/*
		 * The request's last lines: sent with the end of the stream,
		 * just before the answer, in one write instead of one each.
		 */
		in->io.log.write = log_fcgi_write_held;
	}
	/* An IDEMHOOK_LOG that cannot be used is said where it is seen. */
	if (in->logd_err[0] != '\0') {
		log_emit(&in->io.log, "provider=%s %s", in->p->name,
		    in->logd_err);
		in->logd_err[0] = '\0';
	}
	log_clean(cid, in->id.event_id, (size_t)-1);
	log_clean(ctype, in->id.event_type, (size_t)-1);
	log_clean(cdetail, o->detail, (size_t)-1);
	log_emit(log_dest_sink(&in->logd, &in->io.log), "provider=%s%s%s "
	    "event=%s type=%s outcome=%s status=%d "
	    "ms=%.2f%s%s", in->p->name, strcmp(in->account,
	    ACCOUNT_DEFAULT) != 0 ? " account=" : "", strcmp(in->account,
	    ACCOUNT_DEFAULT) != 0 ? in->account : "", cid, ctype, o->name,
	    o->rsp.status,
	    clock_ms_since(in->t0), o->detail[0] ? " detail=" : "",
	    o->detail[0] ? cdetail : "");
	ingest_write_deferred(in, log_dest_sink(&in->logd, &in->io.log));
}
