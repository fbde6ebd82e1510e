/* serve.c -- request, verify, record, respond, log, then process. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <fcgiapp.h>

#include "config.h"
#include "config_find.h"
#include "dispatch.h"
#include "fault.h"
#include "ih.h"
#include "json.h"
#include "log.h"
#include "provider.h"
#include "request.h"
#include "respond.h"
#include "serve.h"
#include "store.h"
#include "verify.h"

extern char **environ;

#define KEPT_HEADERS_MAX	8192
/* A body buffer larger than this is released after its request. */
#define BODY_KEEP_MAX		(1024 * 1024)
/* Most of an unread CGI body read and dropped before exiting. */
#define CGI_DRAIN_MAX		(64L * 1024 * 1024)
/* Other due events processed after each answer. */
#define SERVE_DRAIN_MAX		4

struct serve {
	const struct provider	*p;
	struct config_vars	 env;		/* IDEMHOOK_* at start-up */
	struct config_vars	 file;		/* IDEMHOOK_CONFIG's lines */
	char			*file_path;	/* which file is loaded */
	struct store		*store;
	char			*store_path;
	int			 store_sync;
	long			 store_busy;
	struct json		*json;
	struct request		 req;
	FCGX_Request		*fx;		/* NULL under plain CGI */
	char			 owner[128];	/* lease holder name */
	struct log_dest		 logd;		/* IDEMHOOK_LOG */
	char			 logd_err[256];	/* why it cannot be used */
};

/* What one request came to, for its answer and its log line. */
struct outcome {
	struct respond	 rsp;
	const char	*name;		/* "accepted", "bad_signature", ... */
	char		 detail[STORE_ERR_MAX + 64];
};

static const char *
param_fcgi(void *arg, const char *name)
{
	FCGX_Request *fx = arg;

	return FCGX_GetParam(name, fx->envp);
}

static const char *
param_cgi(void *arg, const char *name)
{
	(void)arg;
	return getenv(name);
}

static size_t
read_fcgi(void *arg, void *buf, size_t len)
{
	FCGX_Request *fx = arg;
	int n;

	if (len > 1 << 20)
		len = 1 << 20;
	n = FCGX_GetStr(buf, (int)len, fx->in);
	return n > 0 ? (size_t)n : 0;
}

static size_t
read_cgi(void *arg, void *buf, size_t len)
{
	(void)arg;
	return fread(buf, 1, len, stdin);
}

static size_t
write_fcgi(void *arg, const void *p, size_t len)
{
	FCGX_Request *fx = arg;
	int n;

	n = FCGX_PutStr(p, (int)len, fx->out);
	return n > 0 ? (size_t)n : 0;
}

static size_t
write_cgi(void *arg, const void *p, size_t len)
{
	(void)arg;
	return fwrite(p, 1, len, stdout);
}

/*
 * The request's own stderr stream: lighttpd and mod_fcgid copy it into
 * the server's error log, whereas the process's fd 2 may be /dev/null.
 */
static void
log_fcgi(void *arg, const char *line, size_t len)
{
	FCGX_Request *fx = arg;

	FCGX_PutStr(line, (int)len, fx->err);
	FCGX_FFlush(fx->err);
}

static double
elapsed_ms(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) * 1e3 +
	    (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}

static void
set_outcome(struct outcome *o, int status, const char *name,
    const char *detail)
{
	o->rsp.status = status;
	o->name = name;
	o->rsp.body_status = status == 200 ? name : "error";
	o->rsp.error = status == 200 ? NULL : name;
	o->rsp.allow = status == 405 ? "POST" : NULL;
	o->rsp.retry_after = status == 503 ? 30 : 0;
	snprintf(o->detail, sizeof(o->detail), "%s", detail ? detail : "");
}

/*
 * Under plain CGI the web server ends the response when stdout closes,
 * so stdout is swapped for /dev/null before processing starts.
 */
static void
cgi_finish(void)
{
	int fd;

	fflush(stdout);
	fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		dup2(fd, 1);
		close(fd);
	}
}

/* Does this request carry settings of its own (Apache SetEnv)? */
static int
request_has_settings(const struct serve *sv)
{
	char **e;

	if (sv->fx == NULL)
		return 0;
	for (e = sv->fx->envp; e != NULL && *e != NULL; e++)
		if (strncmp(*e, "IDEMHOOK_", 9) == 0)
			return 1;
	return 0;
}

/*
 * Builds the settings for this request: its own parameters, then the
 * start-up environment, then the config file, which is read again only
 * when its name changes.
 */
static int
load_config(struct serve *sv, struct config *cfg, char *err, size_t errlen)
{
	struct config_source src[3];
	const char *path;
	char found[4096];
	size_t n = 0;
	int rc;

	if (request_has_settings(sv)) {
		src[n].get = param_fcgi;
		src[n++].arg = sv->fx;
	}
	src[n].get = config_vars_get;
	src[n++].arg = &sv->env;
	path = config_lookup(src, n, "IDEMHOOK_CONFIG");
	if (path != NULL && *path == '\0')
		path = NULL;
	/* suEXEC drops SetEnv: then the file's fixed places (config_find.h). */
	if (path == NULL && (rc = config_find(found, sizeof(found), err,
	    errlen)) != IH_ENOTFOUND) {
		if (rc != IH_OK)
			return IH_ECONFIG;
		path = found;
	}
	if (path == NULL ? sv->file_path != NULL :
	    sv->file_path == NULL || strcmp(path, sv->file_path) != 0) {
		config_vars_free(&sv->file);
		free(sv->file_path);
		sv->file_path = NULL;
		if (path != NULL) {
			rc = config_vars_from_file(&sv->file, path, err,
			    errlen);
			if (rc != IH_OK)
				return IH_ECONFIG;
			sv->file_path = strdup(path);
			if (sv->file_path == NULL)
				return IH_ENOMEM;
		}
	}
	src[n].get = config_vars_get;
	src[n++].arg = &sv->file;
	return config_load(cfg, sv->p->name, sv->p->secret_var, src, n, err,
	    errlen);
}

/* Resolves path as far as it exists: the file, else its directory. */
static int
resolve_path(const char *path, char *out, size_t len)
{
	char dir[PATH_MAX], real[PATH_MAX];
	const char *slash = strrchr(path, '/');
	size_t n;

	if (realpath(path, real) != NULL)
		return snprintf(out, len, "%s", real) < (int)len ? 0 : -1;
	if (slash == NULL || (n = (size_t)(slash - path)) >= sizeof(dir))
		return -1;
	if (n == 0)
		n = 1;
	memcpy(dir, path, n);
	dir[n] = '\0';
	/* A store whose directory is not made yet: compare it as written. */
	if (realpath(dir, real) == NULL)
		return snprintf(out, len, "%s", path) < (int)len ? 0 : -1;
	return snprintf(out, len, "%s%s", strcmp(real, "/") == 0 ? "" : real,
	    slash) < (int)len ? 0 : -1;
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
under_docroot(const struct serve *sv, const struct config *cfg, char *err,
    size_t errlen)
{
	static const char *const roots[] = { "DOCUMENT_ROOT",
	    "CONTEXT_DOCUMENT_ROOT", NULL };
	const char *files[2], *what[2] = { "store", "settings file" }, *dr;
	char rroot[PATH_MAX], rfile[PATH_MAX];
	size_t i, j, len;

	files[0] = cfg->db_path;
	files[1] = sv->file_path;
	for (i = 0; roots[i] != NULL; i++) {
		dr = sv->fx != NULL ? FCGX_GetParam(roots[i], sv->fx->envp) :
		    getenv(roots[i]);
		if (dr == NULL || *dr != '/' || realpath(dr, rroot) == NULL ||
		    strcmp(rroot, "/") == 0)
			continue;
		len = strlen(rroot);
		for (j = 0; j < 2; j++) {
			if (files[j] == NULL ||
			    resolve_path(files[j], rfile, sizeof(rfile)) != 0)
				continue;
			if (strncmp(rfile, rroot, len) == 0 &&
			    (rfile[len] == '/' || rfile[len] == '\0')) {
				snprintf(err, errlen, "%s under document root:"
				    " %.200s", what[j], rfile);
				return 1;
			}
		}
	}
	return 0;
}

/* Opens the store named by cfg, reusing the open one when it matches. */
static int
ensure_store(struct serve *sv, const struct config *cfg, char *err,
    size_t errlen)
{
	struct store_opts opts;
	int rc;

	if (sv->store != NULL && strcmp(sv->store_path, cfg->db_path) == 0 &&
	    sv->store_sync == cfg->synchronous &&
	    sv->store_busy == cfg->busy_timeout_ms)
		return IH_OK;
	store_close(sv->store);
	sv->store = NULL;
	free(sv->store_path);
	sv->store_path = strdup(cfg->db_path);
	if (sv->store_path == NULL)
		return IH_ENOMEM;
	opts.path = cfg->db_path;
	opts.synchronous = cfg->synchronous;
	opts.busy_timeout_ms = cfg->busy_timeout_ms;
	rc = store_open(&opts, &sv->store, err, errlen);
	if (rc != IH_OK)
		return rc;
	sv->store_sync = cfg->synchronous;
	sv->store_busy = cfg->busy_timeout_ms;
	return IH_OK;
}

/* Collects the provider's kept headers as "name: value\n" lines. */
static int
kept_headers(const struct serve *sv, char *buf, size_t cap)
{
	const char *const *h;
	const char *v;
	size_t len = 0;
	int n;

	buf[0] = '\0';
	for (h = sv->p->kept_headers; h != NULL && *h != NULL; h++) {
		v = request_header(&sv->req, *h);
		if (v == NULL)
			continue;
		n = snprintf(buf + len, cap - len, "%s: %s\n", *h, v);
		if (n < 0 || (size_t)n >= cap - len)
			return IH_ETOOBIG;
		len += (size_t)n;
	}
	return IH_OK;
}

static void
dispatch_init(struct serve *sv, const struct config *cfg, struct dispatch *d)
{
	d->st = sv->store;
	d->p = sv->p;
	d->cfg = cfg;
	d->owner = sv->owner;
	d->log = log_dest_sink(&sv->logd, &log_stderr);
}

/*
 * After the answer: processes the event just recorded, then a few other
 * due events of this provider (retries whose time has come, leases left
 * by a crashed process), so that retries need no cron job to happen.
 * Whatever is left stays due for the next request or idemhook work.
 */
static void
process(struct serve *sv, const struct config *cfg, struct store_job *job)
{
	struct dispatch d;
	char err[STORE_ERR_MAX] = "";
	int found, i, rc = IH_OK;

	dispatch_init(sv, cfg, &d);
	if (job->rowid > 0)
		rc = dispatch_job(&d, job, err, sizeof(err));
	for (i = 0; rc == IH_OK && i < SERVE_DRAIN_MAX; i++) {
		rc = dispatch_one(&d, 0, &found, err, sizeof(err));
		if (!found)
			break;
	}
	if (rc != IH_OK)
		log_emit(log_dest_sink(&sv->logd, NULL),
		    "provider=%s processing stopped: %s",
		    sv->p->name, err);
}

/* Names an unusable body by its digest, with the type "unusable". */
static int
quarantine_ident(const struct serve *sv, struct ident *id)
{
	char hex[VERIFY_SHA256_HEX], name[VERIFY_SHA256_HEX + 16];
	int rc;

	ident_free(id);
	rc = verify_sha256_hex(sv->req.body, sv->req.body_len, hex);
	if (rc != IH_OK)
		return rc;
	snprintf(name, sizeof(name), "unusable:%s", hex);
	rc = ident_set(&id->event_id, name, strlen(name));
	if (rc == IH_OK)
		rc = ident_set(&id->event_type, "unusable", 8);
	return rc;
}

/*
 * Inline mode: record and process in one transaction, so that a failing
 * switch leaves no record and the provider's retry starts afresh.
 */
static int
handle_inline(struct serve *sv, const struct config *cfg,
    const struct store_event *ev, struct outcome *o)
{
	struct store_result res;
	struct dispatch d;
	char err[STORE_ERR_MAX];
	int rc;

	rc = store_begin(sv->store, 1, err, sizeof(err));
	if (rc == IH_OK)
		rc = store_record(sv->store, ev, store_now_ms(), &res, err,
		    sizeof(err));
	if (rc != IH_OK) {
		store_rollback(sv->store);
		set_outcome(o, 503, "store_unavailable", err);
		return 0;
	}
	if (!res.duplicate) {
		dispatch_init(sv, cfg, &d);
		rc = dispatch_inline(&d, res.rowid, err, sizeof(err));
		if (rc != IH_OK) {
			store_rollback(sv->store);
			set_outcome(o, rc == IH_ESTORE ? 503 : 500, rc ==
			    IH_ESTORE ? "store_unavailable" :
			    "processing_failed", err);
			return 0;
		}
	}
	rc = store_commit(sv->store, err, sizeof(err));
	if (rc != IH_OK) {
		set_outcome(o, 503, "store_unavailable", err);
		return 0;
	}
	set_outcome(o, 200, res.duplicate ? "duplicate" : "accepted", "");
	return 0;
}

/*
 * Records the event durably.  When it is to be processed here after the
 * answer, the same transaction claims it, so that a new event costs one
 * durable commit rather than two; a crash after the answer leaves the
 * lease to expire and the event to be taken again.
 */
static int
record(struct serve *sv, const struct config *cfg,
    const struct store_event *ev, int claim, struct store_result *res,
    struct store_job *job, char *err, size_t errlen)
{
	int found, rc;

	if (!claim)
		return store_record(sv->store, ev, store_now_ms(), res, err,
		    errlen);
	rc = store_begin(sv->store, 1, err, errlen);
	if (rc != IH_OK)
		return rc;
	rc = store_record(sv->store, ev, store_now_ms(), res, err, errlen);
	if (rc == IH_OK && !res->duplicate)
		rc = store_claim(sv->store, sv->p->name, res->rowid, sv->owner,
		    store_now_ms(), (int64_t)cfg->lease_s * 1000, job, &found,
		    err, errlen);
	if (rc == IH_OK)
		rc = store_commit(sv->store, err, errlen);
	else
		store_rollback(sv->store);
	if (rc != IH_OK)
		store_job_free(job);
	return rc;
}

/* Handles one request up to its answer; returns whether to process. */
static int
handle(struct serve *sv, struct config *cfg, struct outcome *o,
    struct ident *id, struct store_job *job)
{
	struct provider_req pr;
	struct store_event ev;
	struct store_result res;
	char headers[KEPT_HEADERS_MAX];
	char err[STORE_ERR_MAX];
	const char *why = "", *quarantine = NULL;
	int rc;

	err[0] = '\0';
	rc = load_config(sv, cfg, err, sizeof(err));
	if (rc != IH_OK) {
		set_outcome(o, 500, "bad_config", err);
		return 0;
	}
	/* Before any line of this request: inline mode logs effects. */
	if (log_dest_set(&sv->logd, cfg->log, sv->logd_err,
	    sizeof(sv->logd_err)) != IH_OK && sv->logd_err[0] == '\0')
		snprintf(sv->logd_err, sizeof(sv->logd_err), "IDEMHOOK_LOG "
		    "unusable");
	if (under_docroot(sv, cfg, err, sizeof(err))) {
		set_outcome(o, 500, "under_document_root", err);
		return 0;
	}
	if (strcmp(sv->req.method, "POST") != 0) {
		set_outcome(o, 405, "method_not_allowed", sv->req.method);
		return 0;
	}
	rc = request_read_body(&sv->req, (size_t)cfg->max_body);
	if (rc == IH_ETOOBIG) {
		set_outcome(o, 413, "too_large", "over IDEMHOOK_MAX_BODY");
		return 0;
	} else if (rc == IH_ENOMEM) {
		set_outcome(o, 503, "out_of_memory", "");
		return 0;
	} else if (rc != IH_OK) {
		set_outcome(o, 400, "bad_length",
		    "body length differs from Content-Length");
		return 0;
	}
	if (cfg->nsecrets == 0) {
		snprintf(err, sizeof(err), "no secret configured: set %s",
		    sv->p->secret_var);
		set_outcome(o, 500, "not_configured", err);
		return 0;
	}

	memset(&pr, 0, sizeof(pr));
	pr.req = &sv->req;
	pr.cfg = cfg;
	pr.now = time(NULL);
	pr.check_time = 1;
	pr.json = sv->json;
	rc = sv->p->verify(&pr, &why);
	if (rc != IH_OK) {
		set_outcome(o, 401, rc == IH_ESTALE ? "stale_timestamp" :
		    "bad_signature", why);
		return 0;
	}
	rc = sv->p->identify(&pr, id, &why);
	if (rc == IH_ENOMEM) {
		set_outcome(o, 503, "out_of_memory", "");
		return 0;
	} else if (rc != IH_OK && !sv->p->keep_unusable) {
		set_outcome(o, 400, "bad_body", why);
		return 0;
	} else if (rc != IH_OK) {
		/*
		 * Refusing would make the provider retry a body that can
		 * never succeed, until it pauses the queue; keep it for the
		 * operator instead, named by its digest so a redelivery of
		 * the same bytes is still a duplicate.
		 */
		quarantine = why;
		rc = quarantine_ident(sv, id);
		if (rc != IH_OK) {
			set_outcome(o, 503, "out_of_memory", "");
			return 0;
		}
	}
	if (kept_headers(sv, headers, sizeof(headers)) != IH_OK) {
		set_outcome(o, 400, "headers_too_large", "");
		return 0;
	}

	rc = ensure_store(sv, cfg, err, sizeof(err));
	if (rc != IH_OK) {
		set_outcome(o, rc == IH_ECONFIG ? 500 : 503, rc == IH_ECONFIG ?
		    "bad_store" : "store_unavailable", err);
		return 0;
	}
	memset(&ev, 0, sizeof(ev));
	ev.provider = sv->p->name;
	ev.event_id = id->event_id;
	ev.event_type = id->event_type;
	ev.subtype = id->subtype;
	ev.order_key = id->order_key;
	ev.status = quarantine != NULL ? "quarantined" : NULL;
	ev.payload = sv->req.body;
	ev.payload_len = sv->req.body_len;
	ev.headers = headers;
	if (cfg->mode == CONFIG_MODE_INLINE && quarantine == NULL)
		return handle_inline(sv, cfg, &ev, o);
	fault_point("before-commit");
	rc = record(sv, cfg, &ev, quarantine == NULL &&
	    cfg->mode == CONFIG_MODE_AFTER_RESPONSE, &res, job, err,
	    sizeof(err));
	if (rc != IH_OK) {
		set_outcome(o, 503, "store_unavailable", err);
		return 0;
	}
	fault_point("after-commit");
	if (quarantine != NULL) {
		set_outcome(o, 200, res.duplicate ? "duplicate" :
		    "quarantined", quarantine);
		return 0;
	}
	set_outcome(o, 200, res.duplicate ? "duplicate" : "accepted", "");
	return !res.duplicate && cfg->mode == CONFIG_MODE_AFTER_RESPONSE;
}

static void
serve_one(struct serve *sv)
{
	struct request_io io;
	struct respond_io rio;
	struct config cfg;
	struct outcome o;
	struct ident id;
	struct timespec t0;
	struct log_sink sink = log_stderr;
	char cid[LOG_CLEAN_SIZE], ctype[LOG_CLEAN_SIZE];
	char cdetail[LOG_CLEAN_SIZE];
	struct store_job job;
	int later;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	memset(&cfg, 0, sizeof(cfg));
	memset(&id, 0, sizeof(id));
	memset(&o, 0, sizeof(o));
	memset(&job, 0, sizeof(job));
	if (sv->fx != NULL) {
		io.param = param_fcgi;
		io.read = read_fcgi;
		io.arg = sv->fx;
		rio.write = write_fcgi;
		rio.arg = sv->fx;
		sink.write = log_fcgi;
		sink.arg = sv->fx;
	} else {
		io.param = param_cgi;
		io.read = read_cgi;
		io.arg = NULL;
		rio.write = write_cgi;
		rio.arg = NULL;
	}
	request_begin(&sv->req, &io);
	later = handle(sv, &cfg, &o, &id, &job);
	if (respond_send(&rio, &o.rsp) != IH_OK && o.rsp.status == 200)
		o.name = "answer_lost";
	if (sv->fx == NULL) {
		fflush(stdout);
		request_drain(&sv->req, CGI_DRAIN_MAX);
	}

	/* An IDEMHOOK_LOG that cannot be used is said where it is seen. */
	if (sv->logd_err[0] != '\0') {
		log_emit(&sink, "provider=%s %s", sv->p->name, sv->logd_err);
		sv->logd_err[0] = '\0';
	}
	log_clean(cid, id.event_id, (size_t)-1);
	log_clean(ctype, id.event_type, (size_t)-1);
	log_clean(cdetail, o.detail, (size_t)-1);
	log_emit(log_dest_sink(&sv->logd, &sink), "provider=%s event=%s "
	    "type=%s outcome=%s status=%d "
	    "ms=%.2f%s%s", sv->p->name, cid, ctype, o.name, o.rsp.status,
	    elapsed_ms(&t0), o.detail[0] ? " detail=" : "",
	    o.detail[0] ? cdetail : "");

	if (later) {
		/* Let the provider have its answer before processing. */
		if (sv->fx != NULL)
			FCGX_Finish_r(sv->fx);
		else
			cgi_finish();
		process(sv, &cfg, &job);
	}
	if (sv->req.body_cap > BODY_KEEP_MAX)
		request_free(&sv->req);
	ident_free(&id);
	config_free(&cfg);
}

int
serve_main(const struct provider *p)
{
	struct serve sv;
	FCGX_Request fx;
	int rc = 1;

	memset(&sv, 0, sizeof(sv));
	sv.p = p;
	log_dest_init(&sv.logd);
	dispatch_owner(sv.owner, sizeof(sv.owner));
	signal(SIGPIPE, SIG_IGN);
	if (config_vars_from_env(&sv.env, environ) != IH_OK ||
	    json_open(&sv.json) != IH_OK) {
		log_emit(NULL, "provider=%s cannot start: out of memory",
		    p->name);
		goto out;
	}
	if (FCGX_IsCGI()) {
		serve_one(&sv);
		rc = 0;
		goto out;
	}
	if (FCGX_Init() != 0 || FCGX_InitRequest(&fx, 0, 0) != 0) {
		log_emit(NULL, "provider=%s cannot start FastCGI", p->name);
		goto out;
	}
	sv.fx = &fx;
	while (FCGX_Accept_r(&fx) >= 0)
		serve_one(&sv);
	rc = 0;
out:
	store_close(sv.store);
	free(sv.store_path);
	json_close(sv.json);
	request_free(&sv.req);
	config_vars_free(&sv.env);
	config_vars_free(&sv.file);
	free(sv.file_path);
	log_dest_close(&sv.logd);
	return rc;
}
