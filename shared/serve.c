/* serve.c -- request, verify, record, respond, log, then process. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <fcgiapp.h>

#include "allow.h"
#include "config.h"
#include "dispatch.h"
#include "docroot.h"
#include "fault.h"
#include "harden.h"
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

/*
 * The processing thread of a FastCGI program: the request loop hands it
 * the event it has just recorded and claimed, and goes on to the next
 * request while the actions run.  It has its own store connection.  One
 * batch at a time: while it is busy, new events are recorded unclaimed
 * and it drains them when the batch ends.
 */
struct serve_worker {
	pthread_mutex_t		 mu;
	pthread_cond_t		 cv;
	pthread_t		 thread;
	int			 started;	/* the thread exists */
	int			 busy;		/* a batch is handed or runs */
	long			 more;		/* events recorded while busy */
	int			 stop;
	const struct provider	*p;
	struct config		 cfg;		/* the handed batch's, owned */
	struct store_job	 job;		/* claimed, or rowid 0 */
	char			 owner[128];	/* job's lease holder */
	/* Used by the thread only. */
	struct store		*store;
	char			*store_path;
	int			 store_sync;
	long			 store_busy;
	struct log_dest		 logd;		/* IDEMHOOK_LOG */
};

struct serve {
	const struct provider	*p;
	struct config_vars	 env;		/* IDEMHOOK_* at start-up */
	int			 startup_settings; /* any IDEMHOOK_* given */
	struct config_file	 file;		/* IDEMHOOK_CONFIG's lines */
	struct store		*store;
	char			*store_path;
	int			 store_sync;
	long			 store_busy;
	struct json		*json;
	struct request		 req;
	FCGX_Request		*fx;		/* NULL under plain CGI */
	char			 owner[128];	/* lease holder, per request */
	struct serve_worker	 wk;		/* FastCGI only */
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

/*
 * Which settings a FastCGI request parameter may give.  Whoever can reach
 * the socket can send parameters, so none of them may choose a command,
 * a mode, the store or a limit: only IDEMHOOK_CONFIG, which names the
 * file of real settings (and config_file_refresh() checks who owns it),
 * and the provider's secrets, but only when the program was given no
 * IDEMHOOK_* setting at start-up: that is Apache mod_fcgid on shared
 * hosting, where SetEnv is the only way to pass anything and the socket
 * is Apache's own.  A secret lets a sender sign events, never run one.
 */
static int
param_allowed(const struct serve *sv, const char *name)
{
	if (strcmp(name, "IDEMHOOK_CONFIG") == 0)
		return 1;
	return !sv->startup_settings &&
	    config_is_secret_of(name, sv->p->secret_var);
}

/* A source reading only the request parameters param_allowed() admits. */
static const char *
param_setting(void *arg, const char *name)
{
	const struct serve *sv = arg;

	if (sv->fx == NULL || !param_allowed(sv, name))
		return NULL;
	return FCGX_GetParam(name, sv->fx->envp);
}

/*
 * Logs, in one line, the names of the IDEMHOOK_* request parameters that
 * were set and are not taken, so that a SetEnv or fastcgi_param that no
 * longer works, or a probe of the socket, is seen.  Values are never
 * logged.  Other providers' secrets in a shared .htaccess are expected
 * and not reported while secrets are taken from requests at all.
 */
static void
log_ignored_params(const struct serve *sv, const struct log_sink *sink)
{
	char names[LOG_LINE_MAX / 2], clean[LOG_CLEAN_SIZE];
	const char *eq;
	char **e;
	size_t len = 0, nlen;
	int n, count = 0;

	if (sv->fx == NULL)
		return;
	names[0] = '\0';
	for (e = sv->fx->envp; e != NULL && *e != NULL; e++) {
		if (strncmp(*e, "IDEMHOOK_", 9) != 0)
			continue;
		eq = strchr(*e, '=');
		if (eq == NULL || eq[1] == '\0')
			continue;
		nlen = (size_t)(eq - *e);
		log_clean(clean, *e, nlen);
		if (strlen(clean) == nlen && param_allowed(sv, clean))
			continue;
		if (strlen(clean) == nlen && !sv->startup_settings &&
		    config_is_secret(clean))
			continue;
		count++;
		n = snprintf(names + len, sizeof(names) - len, "%s%s",
		    len > 0 ? "," : "", clean);
		if (n < 0 || (size_t)n >= sizeof(names) - len)
			break;
		len += (size_t)n;
	}
	if (count > 0)
		log_emit(sink, "provider=%s ignored_request_settings=%s "
		    "(request parameters may set only IDEMHOOK_CONFIG%s; put "
		    "the rest in the IDEMHOOK_CONFIG file)", sv->p->name, names,
		    sv->startup_settings ? "" : " and secrets");
}

/*
 * Builds the settings for this request: the parameters param_allowed()
 * admits, then the start-up environment, then the config file, which is
 * read again whenever it changes (one stat(2) per request otherwise).
 */
static int
load_config(struct serve *sv, const struct log_sink *sink,
    struct config *cfg, char *err, size_t errlen)
{
	struct config_source src[3];
	struct config_source param = { param_setting, sv };
	size_t n = 0;
	int rc;

	log_ignored_params(sv, sink);
	/* Other providers' secrets in a shared file are not kept here. */
	rc = config_sources_refresh(&sv->file, &param, &sv->env,
	    sv->p->secret_var, src, &n, err, errlen);
	if (rc != IH_OK)
		return rc;
	return config_load(cfg, sv->p->name, sv->p->secret_var, src, n, err,
	    errlen);
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
	size_t i, j;

	files[0] = cfg->db_path;
	files[1] = sv->file.path;
	for (i = 0; roots[i] != NULL; i++) {
		dr = sv->fx != NULL ? FCGX_GetParam(roots[i], sv->fx->envp) :
		    getenv(roots[i]);
		if (dr == NULL || *dr != '/' || realpath(dr, rroot) == NULL ||
		    strcmp(rroot, "/") == 0)
			continue;
		for (j = 0; j < 2; j++) {
			if (files[j] == NULL ||
			    docroot_resolve(files[j], rfile, sizeof(rfile)) != 0)
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
 * Opens the store named by cfg into *st, unless the one open there (at
 * *path, with *sync and *busy) matches cfg; the request loop and the
 * processing thread each keep their own.
 */
static int
open_store(struct store **st, char **path, int *sync, long *busy,
    const struct config *cfg, char *err, size_t errlen)
{
	struct store_opts opts;
	int rc;

	if (*st != NULL && strcmp(*path, cfg->db_path) == 0 &&
	    *sync == cfg->synchronous && *busy == cfg->busy_timeout_ms)
		return IH_OK;
	store_close(*st);
	*st = NULL;
	free(*path);
	*path = strdup(cfg->db_path);
	if (*path == NULL)
		return IH_ENOMEM;
	opts.path = cfg->db_path;
	opts.durable_as = cfg->synchronous == 1 ? STORE_RELAXED :
	    STORE_DURABLE;
	opts.busy_timeout_ms = cfg->busy_timeout_ms;
	rc = store_open(&opts, st, err, errlen);
	if (rc != IH_OK)
		return rc;
	*sync = cfg->synchronous;
	*busy = cfg->busy_timeout_ms;
	return IH_OK;
}

/* Opens the store named by cfg, reusing the open one when it matches. */
static int
ensure_store(struct serve *sv, const struct config *cfg, char *err,
    size_t errlen)
{
	return open_store(&sv->store, &sv->store_path, &sv->store_sync,
	    &sv->store_busy, cfg, err, errlen);
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
 * After the answer: processes the event just recorded (when claimed),
 * then a few other due events of this provider (retries whose time has
 * come, leases left by a crashed process), so that retries need no cron
 * job to happen: at most drain of them.  Whatever is left stays due
 * for the next request or idemhook work.
 */
static void
process(const struct dispatch *d, struct store_job *job, long drain)
{
	char err[STORE_ERR_MAX] = "";
	long i;
	int found, rc = IH_OK;

	if (job->rowid > 0)
		rc = dispatch_job(d, job, err, sizeof(err));
	for (i = 0; rc == IH_OK && i < drain; i++) {
		rc = dispatch_one(d, 0, &found, err, sizeof(err));
		if (!found)
			break;
	}
	if (rc != IH_OK)
		log_emit(d->log, "provider=%s processing stopped: %s",
		    d->p->name, err);
}

/* Opens the thread's own store for cfg, reusing it when it matches. */
static int
worker_store(struct serve_worker *w, const struct config *cfg, char *err,
    size_t errlen)
{
	int rc;

	rc = open_store(&w->store, &w->store_path, &w->store_sync,
	    &w->store_busy, cfg, err, errlen);
	if (rc != IH_OK)
		return rc;
	/* The request loop's connection has the process's queue timer (a
	 * no-op on a connection already without it). */
	store_no_queue(w->store);
	return IH_OK;
}

/*
 * One batch in the thread: the handed job and a few due events, then, as
 * long as events were recorded meanwhile, as many more.
 */
static void
worker_batch(struct serve_worker *w, const struct config *cfg,
    struct store_job *job, const char *owner)
{
	struct dispatch d;
	char err[STORE_ERR_MAX];
	long more = 0;

	/* The thread's own copy of IDEMHOOK_LOG; the loop reports a bad one. */
	(void)log_dest_set(&w->logd, cfg->log, err, sizeof(err));
	if (worker_store(w, cfg, err, sizeof(err)) != IH_OK) {
		/* A claimed job waits for its lease to expire. */
		log_emit(log_dest_sink(&w->logd, NULL),
		    "provider=%s processing stopped: %s", w->p->name, err);
		store_job_free(job);
		return;
	}
	d.st = w->store;
	d.p = w->p;
	d.cfg = cfg;
	d.owner = owner;
	d.log = log_dest_sink(&w->logd, &log_stderr);
	do {
		process(&d, job, SERVE_DRAIN_MAX + more);
		pthread_mutex_lock(&w->mu);
		more = w->stop ? 0 : w->more;
		w->more = 0;
		pthread_mutex_unlock(&w->mu);
	} while (more > 0);
}

static void *
worker_main(void *arg)
{
	struct serve_worker *w = arg;
	struct config cfg;
	struct store_job job;
	char owner[sizeof(w->owner)];
	sigset_t set;

	/* The request loop's store waits with SIGALRM: let it go there. */
	sigemptyset(&set);
	sigaddset(&set, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	pthread_mutex_lock(&w->mu);
	for (;;) {
		while (!w->busy && !w->stop)
			pthread_cond_wait(&w->cv, &w->mu);
		if (!w->busy)
			break;
		cfg = w->cfg;
		memset(&w->cfg, 0, sizeof(w->cfg));
		job = w->job;
		memset(&w->job, 0, sizeof(w->job));
		memcpy(owner, w->owner, sizeof(owner));
		pthread_mutex_unlock(&w->mu);
		worker_batch(w, &cfg, &job, owner);
		config_free(&cfg);
		pthread_mutex_lock(&w->mu);
		w->busy = 0;
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

/* Is the thread free to take a batch now?  Only the loop makes it busy. */
static int
worker_idle(struct serve *sv)
{
	int idle;

	pthread_mutex_lock(&sv->wk.mu);
	idle = !sv->wk.busy;
	pthread_mutex_unlock(&sv->wk.mu);
	return idle;
}

/*
 * Hands the processing after an answer to the thread: the claimed job
 * with its settings (both moved), or, when the thread is busy (the event
 * was then recorded unclaimed), a note to drain again.  Returns 0 when
 * the thread cannot be started; the caller then processes here.
 */
static int
worker_hand(struct serve *sv, struct config *cfg, struct store_job *job)
{
	struct serve_worker *w = &sv->wk;

	pthread_mutex_lock(&w->mu);
	if (!w->started) {
		w->p = sv->p;
		if (pthread_create(&w->thread, NULL, worker_main, w) != 0) {
			pthread_mutex_unlock(&w->mu);
			log_emit(NULL, "provider=%s no processing thread: "
			    "processing in the request loop", sv->p->name);
			return 0;
		}
		w->started = 1;
	}
	if (w->busy) {
		w->more++;
		store_job_free(job);
	} else {
		w->cfg = *cfg;
		memset(cfg, 0, sizeof(*cfg));
		w->job = *job;
		memset(job, 0, sizeof(*job));
		memcpy(w->owner, sv->owner, sizeof(w->owner));
		w->busy = 1;
		pthread_cond_signal(&w->cv);
	}
	pthread_mutex_unlock(&w->mu);
	return 1;
}

/* Lets the thread end its batch, then stops it. */
static void
worker_end(struct serve_worker *w)
{
	pthread_mutex_lock(&w->mu);
	w->stop = 1;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
	if (w->started)
		pthread_join(w->thread, NULL);
	config_free(&w->cfg);
	store_job_free(&w->job);
	store_close(w->store);
	free(w->store_path);
	log_dest_close(&w->logd);
	pthread_cond_destroy(&w->cv);
	pthread_mutex_destroy(&w->mu);
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

/*
 * Inside the recording transaction: for a provider whose id and type are
 * unsigned headers, is ev the body of an earlier event under a new id
 * and another type?  Then *replay is set and detail names the earlier
 * event.  Returns IH_OK or IH_ESTORE.
 */
static int
replay_check(const struct serve *sv, struct store_txn *tx,
    const struct store_event *ev,
    int *replay, char *detail, size_t dlen, char *err, size_t errlen)
{
	char other_id[160], other_type[96], line[REQUEST_HEADER_NAME_MAX + 1024];
	const char *v = NULL;
	int n, rc;

	*replay = 0;
	if (!sv->p->type_unsigned)
		return IH_OK;
	if (sv->p->same_action_header != NULL)
		v = request_header(&sv->req, sv->p->same_action_header);
	if (v != NULL && *v != '\0') {
		/* As kept_headers() writes it into the headers column. */
		n = snprintf(line, sizeof(line), "\n%s: %s\n",
		    sv->p->same_action_header, v);
		if (n < 0 || (size_t)n >= sizeof(line))
			v = NULL;
	} else
		v = NULL;
	rc = store_replay_of(sv->store, tx, ev, v != NULL ? line : NULL,
	    replay, other_id, sizeof(other_id), other_type,
	    sizeof(other_type), err, errlen);
	if (rc == IH_OK && *replay)
		snprintf(detail, dlen, "body already recorded as %s event %s",
		    other_type, other_id);
	return rc;
}

/*
 * Records the event durably, unless it is a replay (*replay set, detail
 * filled, nothing written).  When it is to be processed here after the
 * answer, the same transaction claims it, so that a new event costs one
 * durable commit rather than two; a crash after the answer leaves the
 * lease to expire and the event to be taken again.  Without an order key
 * the claim is part of the insert, and the job's payload is then the
 * request's own buffer, handed over rather than read back and copied.
 */
static int
record(struct serve *sv, const struct config *cfg,
    const struct store_event *ev, int claim, struct store_result *res,
    struct store_job *job, int *replay, char *detail, size_t dlen,
    char *err, size_t errlen)
{
	int64_t lease_ms = (int64_t)cfg->lease_s * 1000;
	struct store_txn *tx;
	int found, rc;

	rc = store_begin(sv->store, STORE_DURABLE, &tx, err, errlen);
	if (rc != IH_OK)
		return rc;
	rc = replay_check(sv, tx, ev, replay, detail, dlen, err, errlen);
	if (rc != IH_OK || *replay) {
		store_rollback(tx);
		return rc;
	}
	if (claim && ev->order_key == NULL)
		rc = store_record_claim(sv->store, tx, ev, store_now_ms(),
		    sv->owner, lease_ms, res, job, err, errlen);
	else {
		rc = store_record(sv->store, tx, ev, store_now_ms(), res, err,
		    errlen);
		if (rc == IH_OK && claim && !res->duplicate)
			rc = store_claim(sv->store, tx, sv->p->name,
			    res->rowid, sv->owner, store_now_ms(), lease_ms,
			    job, &found, err, errlen);
	}
	if (rc == IH_OK)
		rc = store_commit(tx, err, errlen);
	else
		store_rollback(tx);
	if (rc != IH_OK) {
		store_job_free(job);
		return rc;
	}
	if (job->rowid > 0 && job->payload == NULL) {
		job->payload = sv->req.body;
		job->payload_len = sv->req.body_len;
		sv->req.body = NULL;
		sv->req.body_cap = 0;
		sv->req.body_len = 0;
	}
	return IH_OK;
}

/*
 * Inline mode: record and claim in one durable commit, then run the
 * actions and the switch before answering, with no transaction open
 * while the actions run.  A failure deletes the record and answers 500,
 * so the provider's retry starts afresh; a redelivery while the event is
 * being processed is answered 503, never 200 before it is done.
 */
static int
handle_inline(struct serve *sv, const struct config *cfg,
    const struct store_event *ev, struct outcome *o)
{
	struct store_result res;
	struct store_job job;
	struct dispatch d;
	char err[STORE_ERR_MAX], detail[STORE_ERR_MAX + 64];
	int found = 1, replay = 0, rc;

	memset(&job, 0, sizeof(job));
	rc = record(sv, cfg, ev, 1, &res, &job, &replay, detail,
	    sizeof(detail), err, sizeof(err));
	if (rc == IH_OK && replay) {
		set_outcome(o, 200, "replayed", detail);
		return 0;
	}
	if (rc == IH_OK && res.duplicate &&
	    strcmp(res.status, "processing") == 0)
		/* Taken over only when its holder died (lease expired). */
		rc = store_claim(sv->store, NULL, sv->p->name, res.rowid,
		    sv->owner,
		    store_now_ms(), (int64_t)cfg->lease_s * 1000, &job,
		    &found, err, sizeof(err));
	else if (rc == IH_OK && res.duplicate) {
		set_outcome(o, 200, "duplicate", "");
		return 0;
	}
	if (rc != IH_OK) {
		set_outcome(o, 503, "store_unavailable", err);
		return 0;
	}
	if (!found) {
		set_outcome(o, 503, "in_progress", "being processed");
		return 0;
	}
	dispatch_init(sv, cfg, &d);
	rc = dispatch_inline(&d, &job, err, sizeof(err));
	if (rc == IH_OK)
		set_outcome(o, 200, res.duplicate ? "duplicate" : "accepted",
		    "");
	else if (rc == IH_ENOTFOUND)
		set_outcome(o, 503, "in_progress", err);
	else if (rc == IH_ESTORE)
		set_outcome(o, 503, "store_unavailable", err);
	else
		set_outcome(o, 500, "processing_failed", err);
	return 0;
}

/* Handles one request up to its answer; returns whether to process. */
static int
handle(struct serve *sv, const struct log_sink *sink, struct config *cfg,
    struct outcome *o, struct ident *id, struct store_job *job)
{
	struct provider_req pr;
	struct store_event ev;
	struct store_result res;
	char headers[KEPT_HEADERS_MAX];
	char err[STORE_ERR_MAX], detail[STORE_ERR_MAX + 64];
	char fingerprint[VERIFY_SHA256_HEX];
	const char *why = "", *quarantine = NULL, *v;
	int rc, replay = 0, allowed;

	err[0] = '\0';
	rc = load_config(sv, sink, cfg, err, sizeof(err));
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
	if (cfg->allow_from != NULL) {
		v = sv->fx != NULL ? param_fcgi(sv->fx, "REMOTE_ADDR") :
		    param_cgi(NULL, "REMOTE_ADDR");
		if (allow_check(cfg->allow_from, v, &allowed, err,
		    sizeof(err)) != IH_OK) {
			set_outcome(o, 500, "bad_config", err);
			return 0;
		}
		if (!allowed) {
			snprintf(err, sizeof(err), "REMOTE_ADDR %s is outside "
			    "IDEMHOOK_ALLOW_FROM", v != NULL ? v : "(none)");
			set_outcome(o, 403, "forbidden_source", err);
			return 0;
		}
	}
	if (cfg->nsecrets == 0) {
		snprintf(err, sizeof(err), "no secret configured: set %s",
		    sv->p->secret_var);
		set_outcome(o, 500, "not_configured", err);
		return 0;
	}
	/*
	 * Without its signature header a request cannot be authentic: refuse
	 * it from the headers, before reading or hashing any of its body.
	 */
	if (sv->p->sig_header != NULL &&
	    request_header(&sv->req, sv->p->sig_header) == NULL) {
		snprintf(err, sizeof(err), "missing %s header",
		    sv->p->sig_header);
		set_outcome(o, 401, "bad_signature", err);
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
	if (verify_sha256_hex(sv->req.body, sv->req.body_len, fingerprint) !=
	    IH_OK) {
		set_outcome(o, 503, "out_of_memory", "cannot hash the body");
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
		rc = quarantine_ident(fingerprint, id);
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
	ev.fingerprint = fingerprint;
	if (cfg->mode == CONFIG_MODE_INLINE && quarantine == NULL)
		return handle_inline(sv, cfg, &ev, o);
	fault_point("before-commit");
	/* Claimed now only if it can be processed as soon as answered. */
	rc = record(sv, cfg, &ev, quarantine == NULL &&
	    cfg->mode == CONFIG_MODE_AFTER_RESPONSE &&
	    (sv->fx == NULL || worker_idle(sv)), &res, job, &replay,
	    detail, sizeof(detail), err, sizeof(err));
	if (rc != IH_OK) {
		set_outcome(o, 503, "store_unavailable", err);
		return 0;
	}
	if (replay) {
		/*
		 * 200, so that a provider never retries it: the bytes are
		 * already durably stored under the earlier event, and nothing
		 * runs for the type the unsigned headers claim.
		 */
		set_outcome(o, 200, "replayed", detail);
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
	struct dispatch d;
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
		sink.write = log_fcgi_write;
		sink.arg = sv->fx;
	} else {
		io.param = param_cgi;
		io.read = read_cgi;
		io.arg = NULL;
		rio.write = write_cgi;
		rio.arg = NULL;
	}
	request_begin(&sv->req, &io);
	/* A lease holder of its own: a batch never mistakes another's. */
	dispatch_owner(sv->owner, sizeof(sv->owner));
	later = handle(sv, &sink, &cfg, &o, &id, &job);
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
	    log_elapsed_ms(&t0), o.detail[0] ? " detail=" : "",
	    o.detail[0] ? cdetail : "");

	if (later) {
		/*
		 * Let the provider have its answer before processing.  Under
		 * FastCGI the processing thread runs it, so that the next
		 * request is answered meanwhile; a CGI process serves one
		 * request and processes it itself.
		 */
		if (sv->fx != NULL)
			FCGX_Finish_r(sv->fx);
		else
			cgi_finish();
		if (sv->fx == NULL || !worker_hand(sv, &cfg, &job)) {
			dispatch_init(sv, &cfg, &d);
			process(&d, &job, SERVE_DRAIN_MAX);
		}
	}
	store_job_free(&job);
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
	char err[256];
	int rc = 1;

	/* Before any secret is in memory: no core file, no ptrace. */
	if (harden_process(err, sizeof(err)) != IH_OK)
		log_emit(NULL, "provider=%s cannot disable core dumps: %s",
		    p->name, err);
	memset(&sv, 0, sizeof(sv));
	sv.p = p;
	pthread_mutex_init(&sv.wk.mu, NULL);
	pthread_cond_init(&sv.wk.cv, NULL);
	log_dest_init(&sv.wk.logd);
	log_dest_init(&sv.logd);
	dispatch_owner(sv.owner, sizeof(sv.owner));
	signal(SIGPIPE, SIG_IGN);
	if (config_vars_from_env(&sv.env, environ) != IH_OK ||
	    json_open(&sv.json) != IH_OK) {
		log_emit(NULL, "provider=%s cannot start: out of memory",
		    p->name);
		goto out;
	}
	/*
	 * The copy above is the one in use, and holds this provider's
	 * secrets only; the original block need not hold any.
	 */
	sv.startup_settings = sv.env.n > 0;
	config_vars_keep_secrets(&sv.env, p->secret_var);
	harden_scrub_environ(environ);
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
	worker_end(&sv.wk);
	store_close(sv.store);
	free(sv.store_path);
	json_close(sv.json);
	request_free(&sv.req);
	config_vars_free(&sv.env);
	config_file_free(&sv.file);
	log_dest_close(&sv.logd);
	return rc;
}
