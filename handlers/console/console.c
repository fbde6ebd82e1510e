/*
 * console.c -- console.fcgi, the operator's web console: what the
 * idemhook command shows (counts, charts, events, attempts), and replay.
 *
 * It runs as FastCGI or plain CGI like the receivers, with the same
 * settings (the start-up environment, then the IDEMHOOK_CONFIG file), and
 * may be mounted at any prefix: every link starts with SCRIPT_NAME.
 * Under the mount point M:
 *
 *   GET  M/                          overview
 *   GET  M/events?provider=&status=&type=&q=&since=&until=&before=
 *   GET  M/events/PROVIDER/EVENT_ID  one event (the id percent-encoded)
 *   POST M/replay                    replay one failed or dead event
 *   POST M/bulk                      replay by filter: dry run, then confirm
 *
 * Authentication is never off: HTTP Basic against IDEMHOOK_CONSOLE_USER
 * and IDEMHOOK_CONSOLE_PASSWORD_HASH (console_auth.h), or, with
 * IDEMHOOK_CONSOLE_AUTH=server, the web server's REMOTE_USER.  With
 * neither, every request gets 500 not_configured.  Every answer carries
 * the security headers of console_send_page(), and HSTS over TLS.  Basic
 * credentials are taken only over TLS or from loopback (console_auth.h),
 * and a failed sign-in spends a budget kept in the store: once spent,
 * 429 at once, never a pause (console_throttle.h).  Every value from
 * the store is escaped (html.h); state changes need POST, a CSRF token
 * and a same-site Origin (or Sec-Fetch-Site, or Referer).
 * IDEMHOOK_CONSOLE_READONLY=1 removes every form and refuses every POST.
 *
 * This file is the program and the router: the FastCGI or CGI loop, the
 * settings and the store, and route(), which hands each request to one
 * module: page_signin.c (who is asking), page_overview.c, page_events.c,
 * page_event.c, post_replay.c (replay and bulk replay), all writing
 * through console_frame.c and reading filters with console_filters.c
 * (console_int.h is their contract).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <fcgiapp.h>
#include <openssl/crypto.h>

#include "clock.h"
#include "config.h"
#include "console_int.h"
#include "console_auth.h"
#include "harden.h"
#include "html.h"
#include "ih.h"
#include "log.h"
#include "request.h"
#include "settings.h"
#include "store.h"

extern char **environ;

#define PAGE_MAX		(8L * 1024 * 1024)	/* one page's HTML */
#define DEFAULT_SILENCE_S	0	/* no warning unless set */

/* The request's parameter name, or dflt when it has none. */
static const char *
param_or(const struct page *pg, const char *name, const char *dflt)
{
	const char *v = console_param(pg, name);

	return v != NULL ? v : dflt;
}

static const char *
param_io(void *arg, const char *name)
{
	FCGX_Request *fx = arg;

	return fx != NULL ? FCGX_GetParam(name, fx->envp) : getenv(name);
}

static size_t
read_io(void *arg, void *buf, size_t len)
{
	FCGX_Request *fx = arg;
	int n;

	if (fx == NULL)
		return fread(buf, 1, len, stdin);
	if (len > 1 << 30)
		len = 1 << 30;
	n = FCGX_GetStr(buf, (int)len, fx->in);
	return n > 0 ? (size_t)n : 0;
}

static size_t
write_io(void *arg, const void *p, size_t len)
{
	FCGX_Request *fx = arg;
	int n;

	if (fx == NULL)
		return fwrite(p, 1, len, stdout);
	n = FCGX_PutStr(p, (int)len, fx->out);
	return n > 0 ? (size_t)n : 0;
}

/* Only IDEMHOOK_CONFIG may come from a request parameter. */
static const char *
param_setting(void *arg, const char *name)
{
	const struct console *c = arg;

	if (c->fx == NULL || strcmp(name, "IDEMHOOK_CONFIG") != 0)
		return NULL;
	return FCGX_GetParam(name, c->fx->envp);
}

static int
load_settings(struct page *pg, struct config_source *src, size_t *nsrc,
    char *err, size_t errlen)
{
	struct console *c = pg->c;
	struct config_source param = { param_setting, c };
	int rc;

	/* The console needs no provider's secret: none is kept. */
	rc = settings_sources(&c->file, &param, &c->env, NULL, src, nsrc,
	    err, errlen);
	if (rc != IH_OK)
		return rc;
	return config_load(&pg->cfg, "console", NULL, src, *nsrc, err,
	    errlen);
}

static int
ensure_store(struct console *c, const struct config *cfg, char *err,
    size_t errlen)
{
	int rc;

	rc = settings_store(&c->store, cfg, err, errlen);
	if (rc != IH_OK)
		return rc;
	/*
	 * A reader never queues for the write lock (replay waits briefly).
	 * Said again for a store already open: it changes nothing there.
	 */
	store_no_queue(c->store.st);
	return IH_OK;
}

static long
setting_long(const struct config_source *src, size_t nsrc, const char *name,
    long dflt)
{
	const char *v = config_lookup(src, nsrc, name);
	char *end;
	long n;

	if (v == NULL)
		return dflt;
	errno = 0;
	n = strtol(v, &end, 10);
	if (errno != 0 || *end != '\0' || n < 0)
		return -1;
	return n;
}

static void
route(struct page *pg)
{
	struct config_source src[3];
	size_t nsrc = 0;
	char err[512];
	const char *ro, *tp, *p = pg->path;
	int rc;

	rc = load_settings(pg, src, &nsrc, err, sizeof(err));
	if (rc != IH_OK) {
		log_emit(&pg->sink, "console config_error=%s", err);
		console_error_page(pg, 500, "config_error", "the settings "
		    "cannot be used (see the error log)");
		return;
	}
	(void)log_dest_set(&pg->c->logd, pg->cfg.log, err, sizeof(err));
	tp = config_lookup(src, nsrc, "IDEMHOOK_CONSOLE_TLS_PROXY");
	pg->tls_proxy = tp != NULL && strcmp(tp, "1") == 0;
	pg->hsts = console_over_tls(console_param(pg, "HTTPS"), pg->tls_proxy);
	/* Sign-in keeps its budgets in the store. */
	rc = ensure_store(pg->c, &pg->cfg, err, sizeof(err));
	if (rc == IH_ECONFIG) {
		/* A location this build cannot open, as the receivers say. */
		log_emit(&pg->sink, "console store_error=%s", err);
		console_error_page(pg, 500, "bad_config", "the store's "
		    "location cannot be used; see the log");
		return;
	}
	if (rc != IH_OK) {
		console_store_error(pg, err, "be opened");
		return;
	}
	if (!console_sign_in(pg, src, nsrc))
		return;
	ro = config_lookup(src, nsrc, "IDEMHOOK_CONSOLE_READONLY");
	pg->readonly = ro != NULL && strcmp(ro, "0") != 0;
	pg->silence_s = setting_long(src, nsrc, "IDEMHOOK_SILENCE_ALERT",
	    DEFAULT_SILENCE_S);
	if (pg->silence_s < 0) {
		log_emit(&pg->sink, "console config_error=IDEMHOOK_SILENCE_"
		    "ALERT must be a whole number of seconds");
		pg->silence_s = 0;
	}
	console_csrf_token(pg->key, pg->user, (time_t)(pg->now_ms / 1000),
	    pg->token);
	if (strcmp(pg->method, "POST") == 0) {
		if (strcmp(p, "/replay") == 0)
			console_post_replay(pg);
		else if (strcmp(p, "/bulk") == 0)
			console_post_bulk(pg);
		else
			console_error_page(pg, 405, "method_not_allowed",
			    "only replay and bulk take a POST");
		return;
	}
	if (strcmp(pg->method, "GET") != 0 && strcmp(pg->method, "HEAD") !=
	    0) {
		console_error_page(pg, 405, "method_not_allowed",
		    "GET or POST");
		return;
	}
	if (strcmp(p, "/replay") == 0 || strcmp(p, "/bulk") == 0)
		console_error_page(pg, 405, "method_not_allowed",
		    "a replay needs the form's POST");
	else if (*p == '\0' || strcmp(p, "/") == 0)
		console_page_overview(pg);
	else if (strcmp(p, "/events") == 0 || strcmp(p, "/events/") == 0)
		console_page_events(pg);
	else if (strncmp(p, "/events/", 8) == 0)
		console_page_event(pg);
	else
		console_error_page(pg, 404, "not_found", "no such page");
}

static void
console_one(struct console *c)
{
	struct request_io io;
	struct page pg;
	int64_t t0;
	char cpath[LOG_CLEAN_SIZE], cuser[LOG_CLEAN_SIZE];
	char cmeth[LOG_CLEAN_SIZE];

	t0 = clock_mono_ns();
	memset(&pg, 0, sizeof(pg));
	pg.c = c;
	pg.sink = log_stderr;
	pg.rio.write = write_io;
	pg.rio.arg = c->fx;
	if (c->fx != NULL) {
		pg.sink.write = log_fcgi_write;
		pg.sink.arg = c->fx;
	}
	io.param = param_io;
	io.read = read_io;
	io.arg = c->fx;
	request_begin(&c->req, &io);
	html_reset(&c->out);
	pg.now_ms = clock_wall_ms();
	pg.method = param_or(&pg, "REQUEST_METHOD", "GET");
	pg.base = param_or(&pg, "SCRIPT_NAME", "");
	pg.path = param_or(&pg, "PATH_INFO", "");
	pg.query = param_or(&pg, "QUERY_STRING", "");
	route(&pg);
	if (html_full(&c->out) && pg.status == 200)
		console_error_page(&pg, 500, "page_too_big",
		    "the page was too big");
	console_send_page(&pg);
	if (c->fx == NULL) {
		fflush(stdout);
		request_drain(&c->req, POST_MAX);
	}
	log_clean(cmeth, pg.method, (size_t)-1);
	log_clean(cpath, pg.path, (size_t)-1);
	log_clean(cuser, pg.user, (size_t)-1);
	log_emit(log_dest_sink(&c->logd, &pg.sink), "console user=%s "
	    "method=%s path=%s outcome=%s status=%d ms=%.2f", cuser, cmeth,
	    cpath, pg.outcome != NULL ? pg.outcome : "-", pg.status,
	    clock_ms_since(t0));
	OPENSSL_cleanse(pg.key, sizeof(pg.key));
	config_free(&pg.cfg);
}

int
main(void)
{
	struct console c;
	FCGX_Request fx;
	char err[256];
	int rc = 1;

	if (harden_process(err, sizeof(err)) != IH_OK)
		log_emit(NULL, "console cannot disable core dumps: %s", err);
	memset(&c, 0, sizeof(c));
	log_dest_init(&c.logd);
	html_init(&c.out, PAGE_MAX);
	console_make_csp(&c);
	signal(SIGPIPE, SIG_IGN);
	if (config_vars_from_env(&c.env, environ) != IH_OK) {
		log_emit(NULL, "console cannot start: out of memory");
		goto out;
	}
	c.startup_settings = c.env.n > 0;
	config_vars_keep_secrets(&c.env, NULL);
	harden_scrub_environ(environ);
	if (FCGX_IsCGI()) {
		console_one(&c);
		rc = 0;
		goto out;
	}
	if (FCGX_Init() != 0 || FCGX_InitRequest(&fx, 0, 0) != 0) {
		log_emit(NULL, "console cannot start FastCGI");
		goto out;
	}
	c.fx = &fx;
	while (FCGX_Accept_r(&fx) >= 0)
		console_one(&c);
	rc = 0;
out:
	settings_store_close(&c.store);
	request_free(&c.req);
	html_free(&c.out);
	console_cache_clear(&c.cache);
	config_vars_free(&c.env);
	config_file_free(&c.file);
	log_dest_close(&c.logd);
	return rc;
}
