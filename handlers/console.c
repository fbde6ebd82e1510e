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
 * the security headers of send_page(), and HSTS over TLS.  Basic
 * credentials are taken only over TLS or from loopback (console_auth.h),
 * and a failed sign-in spends a budget kept in the store: once spent,
 * 429 at once, never a pause (console_throttle.h).  Every value from
 * the store is escaped (html.h); state changes need POST, a CSRF token
 * and a same-site Origin (or Sec-Fetch-Site, or Referer).
 * IDEMHOOK_CONSOLE_READONLY=1 removes every form and refuses every POST.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <fcgiapp.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "clock.h"
#include "config.h"
#include "console_auth.h"
#include "console_throttle.h"
#include "form.h"
#include "harden.h"
#include "html.h"
#include "json.h"
#include "ih.h"
#include "log.h"
#include "request.h"
#include "respond.h"
#include "settings.h"
#include "store.h"
#include "store_console.h"

extern char **environ;

#define PAGE_MAX		(8L * 1024 * 1024)	/* one page's HTML */
#define PAYLOAD_SHOWN_MAX	(1024L * 1024)	/* payload bytes shown */
#define POST_MAX		(64L * 1024)
#define LIST_PAGE		50
#define FIELD_MAX		512
#define USER_MAX		128
#define PASS_MAX		256
#define DEFAULT_SILENCE_S	0	/* no warning unless set */

static const char CSS[] =
    "body{font:14px/1.4 system-ui,sans-serif;margin:0;color:#1d2330}"
    "header{background:#1d2330;color:#fff;padding:.6em 1em}"
    "header a{color:#fff;margin-right:1.2em;text-decoration:none}"
    "main{padding:1em}table{border-collapse:collapse;margin:.5em 0 1.2em}"
    "td,th{border:1px solid #ccd;padding:.25em .6em;text-align:left;"
    "vertical-align:top}th{background:#eef}"
    "pre{background:#f6f7f9;border:1px solid #ccd;padding:.6em;"
    "overflow:auto;max-height:40em;white-space:pre-wrap}"
    ".warn{color:#a40;font-weight:bold}.ok{color:#060}"
    ".msg{background:#efe;border:1px solid #9c9;padding:.5em}"
    ".err{background:#fee;border:1px solid #c99;padding:.5em}"
    ".charts{display:flex;flex-wrap:wrap;gap:1.5em}"
    "form.filter input,form.filter select{margin-right:.6em}"
    "button{font-weight:bold}";

struct console {
	struct config_vars	 env;
	int			 startup_settings;
	struct config_file	 file;
	struct settings_store	 store;
	struct request		 req;
	FCGX_Request		*fx;
	struct log_dest		 logd;
	struct console_cache	 cache;
	struct html		 out;
	char			 csp[512];
};

/* One request. */
struct page {
	struct console		*c;
	struct config		 cfg;
	struct respond_io	 rio;
	struct log_sink		 sink;
	const char		*base;		/* SCRIPT_NAME */
	const char		*path;		/* PATH_INFO, or "" */
	const char		*query;		/* QUERY_STRING, or "" */
	const char		*method;
	char			 user[USER_MAX];
	int			 readonly;
	long			 silence_s;
	unsigned char		 key[CONSOLE_KEY_LEN];
	char			 token[CONSOLE_TOKEN_LEN + 1];
	int64_t			 now_ms;
	int			 status;
	const char		*outcome;
	char			 location[2048];
	int			 ask_auth;	/* WWW-Authenticate */
	int			 tls_proxy;	/* TLS ends at a proxy */
	int			 hsts;		/* reached over TLS */
	long			 retry_after;	/* seconds, for a 429 */
};

/* ---- I/O, as the receivers do it ----------------------------------- */

static const char *
param(const struct page *pg, const char *name)
{
	if (pg->c->fx != NULL)
		return FCGX_GetParam(name, pg->c->fx->envp);
	return getenv(name);
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

/* ---- settings and store -------------------------------------------- */

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
	rc = config_sources_refresh(&c->file, &param, &c->env, NULL, src,
	    nsrc, err, errlen);
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

/* ---- answers -------------------------------------------------------- */

/* Builds the one Content-Security-Policy, with the stylesheet's hash. */
static void
make_csp(struct console *c)
{
	unsigned char md[32];
	char b64[64];
	unsigned int n = sizeof(md);

	EVP_Digest(CSS, sizeof(CSS) - 1, md, &n, EVP_sha256(), NULL);
	EVP_EncodeBlock((unsigned char *)b64, md, (int)n);
	snprintf(c->csp, sizeof(c->csp), "default-src 'none'; "
	    "style-src 'sha256-%s'; img-src 'self'; form-action 'self'; "
	    "frame-ancestors 'none'; base-uri 'none'", b64);
}

/*
 * Writes the answer: the status, the security headers every answer
 * carries (401s and refusals included), then the page.
 */
static void
send_page(struct page *pg)
{
	struct console *c = pg->c;
	char head[4096], retry[48] = "";
	int n;

	if (pg->retry_after > 0)
		snprintf(retry, sizeof(retry), "Retry-After: %ld\r\n",
		    pg->retry_after);
	n = snprintf(head, sizeof(head),
	    "Status: %d %s\r\n"
	    "Content-Type: text/html; charset=utf-8\r\n"
	    "Content-Security-Policy: %s\r\n"
	    "X-Content-Type-Options: nosniff\r\n"
	    "Referrer-Policy: no-referrer\r\n"
	    "Cache-Control: no-store\r\n"
	    "X-Frame-Options: DENY\r\n"
	    "%s%s%s%s%s%s\r\n",
	    pg->status, respond_reason(pg->status), c->csp,
	    pg->hsts ? "Strict-Transport-Security: max-age=31536000\r\n" :
	    "", retry,
	    pg->ask_auth ? "WWW-Authenticate: Basic realm=\"idemhook "
	    "console\", charset=\"UTF-8\"\r\n" : "",
	    pg->location[0] ? "Location: " : "", pg->location,
	    pg->location[0] ? "\r\n" : "");
	if (n < 0 || (size_t)n >= sizeof(head))
		return;
	pg->rio.write(pg->rio.arg, head, (size_t)n);
	if (c->out.len > 0 && strcmp(pg->method, "HEAD") != 0)
		pg->rio.write(pg->rio.arg, c->out.p, c->out.len);
}

static void
page_start(struct page *pg, const char *title)
{
	struct html *h = &pg->c->out;

	html_reset(h);
	html_raw(h, "<!DOCTYPE html>\n<html lang=\"en\"><head>"
	    "<meta charset=\"utf-8\"><title>");
	html_esc(h, title);
	html_raw(h, " - idemhook console</title><style>");
	html_raw(h, CSS);
	html_raw(h, "</style></head><body><header><a href=\"");
	html_esc(h, pg->base);
	html_raw(h, "/\">idemhook console</a><a href=\"");
	html_esc(h, pg->base);
	html_raw(h, "/events\">Events</a>");
	if (pg->user[0]) {
		html_raw(h, "<span>signed in as ");
		html_esc(h, pg->user);
		html_raw(h, pg->readonly ? " (read-only)" : "");
		html_raw(h, "</span>");
	}
	html_raw(h, "</header><main><h1>");
	html_esc(h, title);
	html_raw(h, "</h1>\n");
}

static void
page_end(struct page *pg)
{
	html_raw(&pg->c->out, "</main></body></html>\n");
}

/* A short page saying why, with the code the log line names. */
static void
error_page(struct page *pg, int status, const char *code, const char *text)
{
	struct html *h = &pg->c->out;

	pg->status = status;
	pg->outcome = code;
	page_start(pg, respond_reason(status));
	html_raw(h, "<p class=\"err\">");
	html_esc(h, code);
	html_raw(h, ": ");
	html_esc(h, text);
	html_raw(h, "</p>");
	page_end(pg);
}

static void
fmt_time(int64_t ms, char *buf, size_t len)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;

	if (ms <= 0 || gmtime_r(&t, &tm) == NULL) {
		snprintf(buf, len, "-");
		return;
	}
	strftime(buf, len, "%Y-%m-%d %H:%M:%S UTC", &tm);
}

static void
put_time(struct html *h, int64_t ms)
{
	char buf[64];

	fmt_time(ms, buf, sizeof(buf));
	html_esc(h, buf);
}

static void
fmt_age(int64_t ms, char *buf, size_t len)
{
	int64_t s = ms / 1000;

	if (s < 120)
		snprintf(buf, len, "%llds", (long long)s);
	else if (s < 7200)
		snprintf(buf, len, "%lldm", (long long)(s / 60));
	else if (s < 172800)
		snprintf(buf, len, "%lldh", (long long)(s / 3600));
	else
		snprintf(buf, len, "%lldd", (long long)(s / 86400));
}

/* ---- request fields ------------------------------------------------- */

/*
 * Reads field name of the urlencoded src into out (NUL-terminated).
 * Returns IH_OK, IH_ENOTFOUND (out empty), IH_EINVAL or IH_ETOOBIG.
 */
static int
field(const char *src, size_t len, const char *name, char *out, size_t cap)
{
	char *v = NULL;
	size_t vlen = 0;
	int rc;

	out[0] = '\0';
	rc = form_field(src, len, name, cap - 1, &v, &vlen);
	if (rc == IH_OK) {
		if (memchr(v, '\0', vlen) != NULL)
			rc = IH_EINVAL;
		else
			memcpy(out, v, vlen + 1);
	}
	free(v);
	return rc;
}

/* Parses "YYYY-MM-DD[THH:MM[:SS]]" (UTC) or Unix ms; 0 when empty. */
static int
parse_when(const char *s, int64_t *ms)
{
	struct tm tm;
	int v[6] = { 0, 0, 0, 0, 0, 0 }, i = 0, digits;
	static const char seps[] = "--T::";
	const char *p = s;
	time_t t;

	*ms = 0;
	if (*s == '\0')
		return IH_OK;
	if (strspn(s, "0123456789") == strlen(s)) {
		if (strlen(s) > 15)
			return IH_EINVAL;
		*ms = strtoll(s, NULL, 10);
		return IH_OK;
	}
	for (;;) {
		for (digits = 0; *p >= '0' && *p <= '9' && digits < 4; p++,
		    digits++)
			v[i] = v[i] * 10 + (*p - '0');
		if (digits == 0)
			return IH_EINVAL;
		i++;
		if (*p == '\0' || i == 6)
			break;
		if (*p != seps[i - 1] && !(i == 3 && *p == ' '))
			return IH_EINVAL;
		p++;
	}
	if (*p != '\0' || i < 3 || i == 4 || v[1] < 1 || v[1] > 12 ||
	    v[2] < 1 || v[2] > 31 || v[3] > 23 || v[4] > 59 || v[5] > 60)
		return IH_EINVAL;
	memset(&tm, 0, sizeof(tm));
	tm.tm_year = v[0] - 1900;
	tm.tm_mon = v[1] - 1;
	tm.tm_mday = v[2];
	tm.tm_hour = v[3];
	tm.tm_min = v[4];
	tm.tm_sec = v[5];
	t = timegm(&tm);
	if (t == (time_t)-1)
		return IH_EINVAL;
	*ms = (int64_t)t * 1000;
	return IH_OK;
}

static int
valid_status(const char *s)
{
	static const char *const st[] = { "received", "processing", "done",
	    "failed", "dead", "quarantined", "held", NULL };
	size_t i;

	for (i = 0; st[i] != NULL; i++)
		if (strcmp(s, st[i]) == 0)
			return 1;
	return 0;
}

/* The list's filters, as read from a query string or a form body. */
struct filters {
	char	provider[64];
	char	status[32];
	char	type[FIELD_MAX];
	char	q[FIELD_MAX];
	char	since[64];
	char	until[64];
	char	before[32];
	int64_t	since_ms, until_ms, before_id;
};

static int
read_filters(const char *src, size_t len, struct filters *f,
    const char **why)
{
	struct {
		const char *name;
		char *buf;
		size_t cap;
	} fl[] = {
		{ "provider", f->provider, sizeof(f->provider) },
		{ "status", f->status, sizeof(f->status) },
		{ "type", f->type, sizeof(f->type) },
		{ "q", f->q, sizeof(f->q) },
		{ "since", f->since, sizeof(f->since) },
		{ "until", f->until, sizeof(f->until) },
		{ "before", f->before, sizeof(f->before) },
	};
	size_t i;
	int rc;

	memset(f, 0, sizeof(*f));
	for (i = 0; i < sizeof(fl) / sizeof(fl[0]); i++) {
		rc = field(src, len, fl[i].name, fl[i].buf, fl[i].cap);
		if (rc != IH_OK && rc != IH_ENOTFOUND) {
			*why = "a filter is malformed, repeated or too long";
			return IH_EINVAL;
		}
	}
	if (f->status[0] && !valid_status(f->status)) {
		*why = "unknown status";
		return IH_EINVAL;
	}
	if (parse_when(f->since, &f->since_ms) != IH_OK ||
	    parse_when(f->until, &f->until_ms) != IH_OK) {
		*why = "since and until read YYYY-MM-DD[THH:MM[:SS]] (UTC)";
		return IH_EINVAL;
	}
	if (f->before[0] && (strspn(f->before, "0123456789") !=
	    strlen(f->before) || strlen(f->before) > 18)) {
		*why = "before must be a row number";
		return IH_EINVAL;
	}
	f->before_id = f->before[0] ? strtoll(f->before, NULL, 10) : 0;
	return IH_OK;
}

/* Appends the filters as a query string (without '?'), before excluded. */
static void
put_filter_query(struct html *h, const struct filters *f)
{
	const char *names[] = { "provider", "status", "type", "q", "since",
	    "until" };
	const char *vals[] = { f->provider, f->status, f->type, f->q,
	    f->since, f->until };
	size_t i;
	int first = 1;

	for (i = 0; i < 6; i++) {
		if (vals[i][0] == '\0')
			continue;
		html_raw(h, first ? "" : "&amp;");
		html_raw(h, names[i]);
		html_raw(h, "=");
		html_url(h, vals[i]);
		first = 0;
	}
}

static void
put_hidden(struct html *h, const char *name, const char *value)
{
	html_raw(h, "<input type=\"hidden\" name=\"");
	html_esc(h, name);
	html_raw(h, "\" value=\"");
	html_esc(h, value);
	html_raw(h, "\">");
}

static void
put_event_link(struct html *h, const struct page *pg, const char *provider,
    const char *event_id)
{
	html_esc(h, pg->base);
	html_raw(h, "/events/");
	html_url(h, provider);
	html_raw(h, "/");
	html_url(h, event_id);
}

/* ---- overview ------------------------------------------------------- */

#define MAX_PROVIDERS	32
static const char *const STATUSES[] = { "received", "processing", "done",
    "failed", "dead", "quarantined", "held" };
#define NSTATUS	7

struct overview {
	size_t	 n;
	char	 provider[MAX_PROVIDERS][64];
	int64_t	 count[MAX_PROVIDERS][NSTATUS];
	int64_t	 last[MAX_PROVIDERS];
	int64_t	 total, dead;
};

static int
count_row(void *arg, const char *provider, const char *status, int64_t n,
    int64_t last)
{
	struct overview *ov = arg;
	size_t i, s;

	if (provider == NULL || status == NULL)
		return IH_OK;
	for (i = 0; i < ov->n; i++)
		if (strcmp(ov->provider[i], provider) == 0)
			break;
	if (i == ov->n) {
		if (ov->n == MAX_PROVIDERS)
			return IH_OK;
		snprintf(ov->provider[ov->n++], sizeof(ov->provider[0]), "%s",
		    provider);
	}
	for (s = 0; s < NSTATUS; s++)
		if (strcmp(STATUSES[s], status) == 0)
			ov->count[i][s] += n;
	/* A quarantined body was not accepted as an event. */
	if (strcmp(status, "quarantined") != 0 && last > ov->last[i])
		ov->last[i] = last;
	ov->total += n;
	if (strcmp(status, "dead") == 0)
		ov->dead += n;
	return IH_OK;
}

/*
 * An inline SVG chart of up to three series over the 24 hours: lines,
 * scaled to the largest value, with the hours along the bottom.
 */
static void
put_chart(struct html *h, const char *title, const char *unit,
    const struct store_console_series *s, const char *const names[3],
    const char *const colors[3], int64_t (*get)(const struct
    store_console_hour *, int), int nseries)
{
	const int W = 520, H = 200, L = 48, B = 24, T = 10, R = 10;
	int64_t max = 0, v;
	int i, k;
	double x, y;
	char label[64];
	time_t t;
	struct tm tm;

	for (k = 0; k < nseries; k++)
		for (i = 0; i < STORE_CONSOLE_HOURS; i++) {
			v = get(&s->hour[i], k);
			if (v > max)
				max = v;
		}
	if (max == 0)
		max = 1;
	html_printf(h, "<figure><svg xmlns=\"http://www.w3.org/2000/svg\" "
	    "role=\"img\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">"
	    "<title>", W, H + 20, W, H + 20);
	html_esc(h, title);
	html_printf(h, "</title><rect x=\"%d\" y=\"%d\" width=\"%d\" "
	    "height=\"%d\" fill=\"#fbfbfd\" stroke=\"#ccd\"/>", L, T,
	    W - L - R, H - T - B);
	html_printf(h, "<text x=\"%d\" y=\"%d\" font-size=\"11\" "
	    "text-anchor=\"end\">%lld</text>", L - 4, T + 10, (long long)max);
	html_printf(h, "<text x=\"%d\" y=\"%d\" font-size=\"11\" "
	    "text-anchor=\"end\">0</text>", L - 4, H - B);
	html_printf(h, "<text x=\"4\" y=\"%d\" font-size=\"11\">", H / 2);
	html_esc(h, unit);
	html_raw(h, "</text>");
	for (i = 0; i < STORE_CONSOLE_HOURS; i += 6) {
		t = (time_t)(s->hour[i].start_ms / 1000);
		gmtime_r(&t, &tm);
		strftime(label, sizeof(label), "%H:00", &tm);
		html_printf(h, "<text x=\"%.1f\" y=\"%d\" font-size=\"11\">"
		    "%s</text>", L + (double)i * (W - L - R) /
		    (STORE_CONSOLE_HOURS - 1), H - B + 14, label);
	}
	for (k = 0; k < nseries; k++) {
		html_printf(h, "<polyline fill=\"none\" stroke-width=\"2\" "
		    "stroke=\"%s\" points=\"", colors[k]);
		for (i = 0; i < STORE_CONSOLE_HOURS; i++) {
			v = get(&s->hour[i], k);
			if (v < 0)
				v = 0;
			x = L + (double)i * (W - L - R) /
			    (STORE_CONSOLE_HOURS - 1);
			y = (H - B) - (double)v * (H - B - T) / (double)max;
			html_printf(h, "%.1f,%.1f ", x, y);
		}
		html_raw(h, "\"/>");
		html_printf(h, "<rect x=\"%d\" y=\"%d\" width=\"10\" "
		    "height=\"10\" fill=\"%s\"/><text x=\"%d\" y=\"%d\" "
		    "font-size=\"12\">", L + k * 150, H + 4, colors[k],
		    L + k * 150 + 14, H + 13);
		html_esc(h, names[k]);
		html_raw(h, "</text>");
	}
	html_raw(h, "</svg><figcaption>");
	html_esc(h, title);
	html_raw(h, "</figcaption></figure>\n");
}

static int64_t
get_counts(const struct store_console_hour *hr, int k)
{
	return k == 0 ? hr->accepted : k == 1 ? hr->duplicates : hr->failed;
}

static int64_t
get_latency(const struct store_console_hour *hr, int k)
{
	return k == 0 ? hr->p50_ms : hr->p99_ms;
}

static void
put_size(struct html *h, int64_t bytes)
{
	if (bytes >= 10LL * 1024 * 1024)
		html_printf(h, "%.1f MiB", (double)bytes / (1024.0 * 1024));
	else
		html_printf(h, "%.1f KiB", (double)bytes / 1024.0);
}

static void
page_overview(struct page *pg)
{
	static const char *const cnames[3] = { "accepted", "duplicate",
	    "failed or dead" };
	static const char *const ccolors[3] = { "#2563eb", "#d97706",
	    "#dc2626" };
	static const char *const lnames[3] = { "p50", "p99", "" };
	static const char *const lcolors[3] = { "#059669", "#7c3aed", "" };
	struct html *h = &pg->c->out;
	struct overview ov;
	struct store_console_series s;
	char err[STORE_ERR_MAX], age[32];
	int64_t size = 0, dup_total;
	size_t i, k;

	memset(&ov, 0, sizeof(ov));
	if (store_console_counts(pg->c->store.st, count_row, &ov, err,
	    sizeof(err)) != IH_OK || store_console_series(pg->c->store.st,
	    pg->now_ms, &s, err, sizeof(err)) != IH_OK ||
	    store_console_size(pg->c->store.st, &size, err, sizeof(err)) !=
	    IH_OK) {
		log_emit(&pg->sink, "console store_error=%s", err);
		error_page(pg, 503, "store_unavailable", "the store cannot "
		    "be read now; try again");
		return;
	}
	page_start(pg, "Overview");
	html_raw(h, "<h2>Events by provider and status</h2><table><tr>"
	    "<th>provider</th>");
	for (k = 0; k < NSTATUS; k++)
		html_printf(h, "<th>%s</th>", STATUSES[k]);
	html_raw(h, "<th>last delivery</th></tr>");
	for (i = 0; i < ov.n; i++) {
		html_raw(h, "<tr><td><a href=\"");
		html_esc(h, pg->base);
		html_raw(h, "/events?provider=");
		html_url(h, ov.provider[i]);
		html_raw(h, "\">");
		html_esc(h, ov.provider[i]);
		html_raw(h, "</a></td>");
		for (k = 0; k < NSTATUS; k++) {
			html_raw(h, "<td><a href=\"");
			html_esc(h, pg->base);
			html_raw(h, "/events?provider=");
			html_url(h, ov.provider[i]);
			html_printf(h, "&amp;status=%s\">%lld</a></td>",
			    STATUSES[k], (long long)ov.count[i][k]);
		}
		html_raw(h, "<td>");
		if (ov.last[i] > 0) {
			put_time(h, ov.last[i]);
			fmt_age(pg->now_ms - ov.last[i], age, sizeof(age));
			if (pg->silence_s > 0 && pg->now_ms - ov.last[i] >
			    pg->silence_s * 1000LL)
				html_printf(h, " <span class=\"warn\">silent "
				    "for %s (over %lds)</span>", age,
				    pg->silence_s);
			else
				html_printf(h, " (%s ago)", age);
		} else {
			html_raw(h, "-");
		}
		html_raw(h, "</td></tr>");
	}
	if (ov.n == 0)
		html_raw(h, "<tr><td colspan=\"8\">no events yet</td></tr>");
	html_raw(h, "</table>");

	dup_total = s.accepted + s.duplicates;
	html_raw(h, "<h2>Last 24 hours</h2><ul>");
	html_printf(h, "<li>accepted: <b id=\"accepted24\">%lld</b></li>",
	    (long long)s.accepted);
	html_printf(h, "<li>duplicate deliveries: %lld; duplicate rate: "
	    "<b id=\"duprate\">%.1f%%</b></li>", (long long)s.duplicates,
	    dup_total > 0 ? 100.0 * (double)s.duplicates / (double)dup_total :
	    0.0);
	html_printf(h, "<li>failed or dead now: %lld</li>",
	    (long long)s.failed);
	if (s.latency_n > 0)
		html_printf(h, "<li>time from receipt to done, over %lld "
		    "events: p50 <b>%lld ms</b>, p99 <b>%lld ms</b></li>",
		    (long long)s.latency_n, (long long)s.p50_ms,
		    (long long)s.p99_ms);
	else
		html_raw(h, "<li>time from receipt to done: no event done "
		    "yet</li>");
	html_raw(h, "<li>dead letters waiting: <a id=\"dead\" href=\"");
	html_esc(h, pg->base);
	html_printf(h, "/events?status=dead\">%lld</a></li>",
	    (long long)ov.dead);
	html_raw(h, "<li>events stored: ");
	html_printf(h, "%lld; store size: ", (long long)ov.total);
	put_size(h, size);
	html_raw(h, "</li></ul><div class=\"charts\">");
	put_chart(h, "Deliveries per hour (by first receipt)", "events", &s,
	    cnames, ccolors, get_counts, 3);
	put_chart(h, "Time from receipt to done per hour", "ms", &s, lnames,
	    lcolors, get_latency, 2);
	html_raw(h, "</div>");
	page_end(pg);
	pg->status = 200;
	pg->outcome = "overview";
}

/* ---- events list ---------------------------------------------------- */

struct list_state {
	struct page	*pg;
	long		 n;
};

static int
list_row(void *arg, const struct store_row *r)
{
	struct list_state *ls = arg;
	struct html *h = &ls->pg->c->out;

	ls->n++;
	html_raw(h, "<tr><td>");
	put_time(h, r->received_at);
	html_raw(h, "</td><td>");
	html_esc(h, r->provider);
	html_raw(h, "</td><td><a class=\"ev\" href=\"");
	put_event_link(h, ls->pg, r->provider, r->event_id);
	html_raw(h, "\">");
	html_esc(h, r->event_id);
	html_raw(h, "</a></td><td>");
	html_esc(h, r->event_type);
	if (r->subtype != NULL) {
		html_raw(h, " / ");
		html_esc(h, r->subtype);
	}
	html_raw(h, "</td><td class=\"st\">");
	html_esc(h, r->status);
	html_printf(h, "</td><td>%lld</td><td>%lld</td><td>",
	    (long long)r->attempts, (long long)r->duplicates);
	html_esc(h, r->last_error);
	html_raw(h, "</td></tr>\n");
	return html_full(h) ? IH_ETOOBIG : IH_OK;
}

static void
put_select(struct html *h, const char *name, const char *cur,
    const char *const *opts, size_t n)
{
	size_t i;

	html_printf(h, "<select name=\"%s\"><option value=\"\">any %s"
	    "</option>", name, name);
	for (i = 0; i < n; i++) {
		html_raw(h, "<option");
		if (strcmp(cur, opts[i]) == 0)
			html_raw(h, " selected");
		html_raw(h, ">");
		html_esc(h, opts[i]);
		html_raw(h, "</option>");
	}
	html_raw(h, "</select>");
}

static void
put_text_input(struct html *h, const char *label, const char *name,
    const char *value, const char *placeholder)
{
	html_raw(h, "<label>");
	html_esc(h, label);
	html_printf(h, " <input name=\"%s\" size=\"14\" placeholder=\"%s\" "
	    "value=\"", name, placeholder);
	html_esc(h, value);
	html_raw(h, "\"></label>");
}

static void
page_events(struct page *pg)
{
	static const char *const provs[] = { "stripe", "github", "shopify",
	    "asaas", "standard" };
	struct html *h = &pg->c->out;
	struct store_console_query q;
	struct list_state ls;
	struct filters f;
	char err[STORE_ERR_MAX];
	const char *why = NULL;
	int64_t next = 0;
	int rc;

	if (read_filters(pg->query, strlen(pg->query), &f, &why) != IH_OK) {
		error_page(pg, 400, "bad_filter", why);
		return;
	}
	page_start(pg, "Events");
	html_raw(h, "<form class=\"filter\" method=\"get\" action=\"");
	html_esc(h, pg->base);
	html_raw(h, "/events\">");
	put_select(h, "provider", f.provider, provs, 5);
	put_select(h, "status", f.status, STATUSES, NSTATUS);
	put_text_input(h, "type", "type", f.type, "invoice.*");
	put_text_input(h, "search", "q", f.q, "part of id or type");
	put_text_input(h, "since", "since", f.since, "YYYY-MM-DD");
	put_text_input(h, "until", "until", f.until, "YYYY-MM-DD");
	html_raw(h, "<button type=\"submit\">Filter</button></form>");

	memset(&q, 0, sizeof(q));
	q.provider = f.provider;
	q.status = f.status;
	q.type_glob = f.type;
	q.text = f.q;
	q.since_ms = f.since_ms;
	q.until_ms = f.until_ms;
	q.before_id = f.before_id;
	q.page = LIST_PAGE;
	ls.pg = pg;
	ls.n = 0;
	html_raw(h, "<table id=\"events\"><tr><th>received</th>"
	    "<th>provider</th><th>event id</th><th>type</th><th>status</th>"
	    "<th>attempts</th><th>duplicates</th><th>last error</th></tr>\n");
	rc = store_console_list(pg->c->store.st, &q, list_row, &ls, &next,
	    err, sizeof(err));
	if (rc == IH_ESTORE) {
		log_emit(&pg->sink, "console store_error=%s", err);
		error_page(pg, 503, "store_unavailable", "the store cannot "
		    "be read now; try again");
		return;
	}
	html_raw(h, "</table>");
	html_printf(h, "<p><span id=\"shown\">%ld</span> event(s) shown. ",
	    ls.n);
	if (f.before_id > 0) {
		html_raw(h, "<a href=\"");
		html_esc(h, pg->base);
		html_raw(h, "/events?");
		put_filter_query(h, &f);
		html_raw(h, "\">Newest</a> ");
	}
	if (next > 0) {
		html_raw(h, "<a id=\"older\" href=\"");
		html_esc(h, pg->base);
		html_raw(h, "/events?");
		put_filter_query(h, &f);
		html_printf(h, "&amp;before=%lld\">%s</a>", (long long)next,
		    ls.n < LIST_PAGE ? "Search further back" : "Older");
	}
	html_raw(h, "</p>");
	if (!pg->readonly) {
		html_raw(h, "<h2>Replay by filter</h2><form method=\"post\" "
		    "action=\"");
		html_esc(h, pg->base);
		html_raw(h, "/bulk\">");
		put_hidden(h, "csrf", pg->token);
		put_hidden(h, "provider", f.provider);
		put_hidden(h, "status", f.status);
		put_hidden(h, "type", f.type);
		put_hidden(h, "since", f.since);
		put_hidden(h, "until", f.until);
		html_raw(h, "<p>Makes the done, failed, dead or quarantined "
		    "events matching the provider, status, type (exact) and "
		    "dates above due again; the search text is not used. "
		    "You see how many first.</p><button type=\"submit\">"
		    "Count events to replay</button></form>");
	}
	page_end(pg);
	pg->status = 200;
	pg->outcome = "events";
}

/* ---- one event ------------------------------------------------------ */

struct show_state {
	struct page	*pg;
	int		 found;
	char		 status[16];
};

/* Headers that hold a signature, token or credential are never shown. */
static int
sensitive_header(const char *name, size_t n)
{
	static const char *const words[] = { "signature", "hmac", "token",
	    "secret", "authorization", "cookie", "password", NULL };
	char low[REQUEST_HEADER_NAME_MAX + 1];
	size_t i;

	if (n > REQUEST_HEADER_NAME_MAX)
		return 1;
	for (i = 0; i < n; i++)
		low[i] = (char)((name[i] >= 'A' && name[i] <= 'Z') ?
		    name[i] + 32 : name[i]);
	low[n] = '\0';
	for (i = 0; words[i] != NULL; i++)
		if (strstr(low, words[i]) != NULL)
			return 1;
	return 0;
}

static void
put_headers(struct html *h, const char *hd)
{
	const char *end, *colon;

	html_raw(h, "<pre id=\"headers\">");
	for (; hd != NULL && *hd != '\0'; hd = *end != '\0' ? end + 1 : end) {
		end = strchr(hd, '\n');
		if (end == NULL)
			end = hd + strlen(hd);
		colon = memchr(hd, ':', (size_t)(end - hd));
		if (colon != NULL && sensitive_header(hd, (size_t)(colon -
		    hd))) {
			html_esc_n(h, hd, (size_t)(colon - hd));
			html_raw(h, ": (hidden)\n");
			continue;
		}
		html_esc_n(h, hd, (size_t)(end - hd));
		html_raw(h, "\n");
	}
	html_raw(h, "</pre>");
}

/* The payload as text, indented when it is a JSON document. */
static void
put_payload(struct html *h, const unsigned char *p, size_t len)
{
	struct json *js = NULL;
	char *pretty = NULL;
	size_t shown = len, plen;

	if (len <= (size_t)PAYLOAD_SHOWN_MAX && json_open(&js) == IH_OK) {
		if (json_indent(js, p, len, &pretty, &plen) != IH_OK)
			pretty = NULL;
		json_close(js);
	}
	html_raw(h, "<pre id=\"payload\">");
	if (pretty != NULL) {
		html_esc(h, pretty);
		free(pretty);
	} else {
		if (shown > (size_t)PAYLOAD_SHOWN_MAX)
			shown = (size_t)PAYLOAD_SHOWN_MAX;
		html_esc_n(h, (const char *)p, shown);
	}
	html_raw(h, "</pre>");
	if (shown < len)
		html_printf(h, "<p>First %zu of %zu bytes shown.</p>", shown,
		    len);
}

static void
meta_row(struct html *h, const char *name, const char *value)
{
	html_raw(h, "<tr><th>");
	html_esc(h, name);
	html_raw(h, "</th><td>");
	html_esc(h, value != NULL ? value : "-");
	html_raw(h, "</td></tr>");
}

static void
meta_time(struct html *h, const char *name, int64_t ms)
{
	char buf[64];

	fmt_time(ms, buf, sizeof(buf));
	meta_row(h, name, buf);
}

static void
meta_num(struct html *h, const char *name, int64_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%lld", (long long)v);
	meta_row(h, name, buf);
}

static int
show_attempt(void *arg, const struct store_attempt *a)
{
	struct html *h = arg;

	html_printf(h, "<tr><td>%lld</td><td>", (long long)a->attempt);
	put_time(h, a->started_at);
	html_raw(h, "</td><td>");
	put_time(h, a->finished_at);
	html_raw(h, "</td><td>");
	html_esc(h, a->outcome != NULL ? a->outcome : "-");
	html_raw(h, "</td><td>");
	html_esc(h, a->error != NULL ? a->error : "");
	html_raw(h, "</td></tr>\n");
	return IH_OK;
}

static int
show_row(void *arg, const struct store_row *r)
{
	struct show_state *ss = arg;
	struct page *pg = ss->pg;
	struct html *h = &pg->c->out;
	char err[STORE_ERR_MAX], title[160];

	ss->found = 1;
	snprintf(ss->status, sizeof(ss->status), "%s", r->status);
	snprintf(title, sizeof(title), "Event %.140s", r->event_id);
	page_start(pg, title);
	if (strstr(pg->query, "replayed=1") != NULL)
		html_raw(h, "<p class=\"msg\" id=\"replayed\">Replayed: the "
		    "event is due again.</p>");
	html_raw(h, "<table id=\"meta\">");
	meta_row(h, "provider", r->provider);
	meta_row(h, "event id", r->event_id);
	meta_row(h, "type", r->event_type);
	meta_row(h, "subtype", r->subtype);
	meta_row(h, "order key", r->order_key);
	meta_row(h, "API version", r->api_version);
	html_raw(h, "<tr><th>status</th><td id=\"status\">");
	html_esc(h, r->status);
	html_raw(h, "</td></tr>");
	meta_time(h, "received", r->received_at);
	meta_time(h, "last seen", r->last_seen_at);
	meta_num(h, "duplicates", r->duplicates);
	meta_num(h, "attempts", r->attempts);
	meta_time(h, "next attempt", r->next_attempt_at);
	meta_time(h, "done", r->done_at);
	meta_time(h, "payload purged", r->purged_at);
	meta_row(h, "lease holder", r->lease_owner);
	meta_row(h, "last error", r->last_error);
	meta_num(h, "payload bytes", r->payload_len);
	html_raw(h, "</table>");

	if (!pg->readonly && (strcmp(r->status, "failed") == 0 ||
	    strcmp(r->status, "dead") == 0 || strcmp(r->status, "held") == 0)) {
		html_raw(h, "<form method=\"post\" action=\"");
		html_esc(h, pg->base);
		html_raw(h, "/replay\">");
		put_hidden(h, "csrf", pg->token);
		put_hidden(h, "provider", r->provider);
		put_hidden(h, "event_id", r->event_id);
		html_raw(h, "<button type=\"submit\">Replay</button></form>");
	}
	html_raw(h, "<h2>Attempts</h2><table id=\"attempts\"><tr><th>#</th>"
	    "<th>started</th><th>finished</th><th>outcome</th><th>error</th>"
	    "</tr>\n");
	if (store_attempts(pg->c->store.st, r->rowid, show_attempt, h, err,
	    sizeof(err)) != IH_OK)
		html_raw(h, "<tr><td colspan=\"5\">cannot be read now</td>"
		    "</tr>");
	html_raw(h, "</table><h2>Kept headers</h2>");
	put_headers(h, r->headers);
	html_raw(h, "<h2>Payload</h2>");
	if (r->payload != NULL)
		put_payload(h, r->payload, (size_t)r->payload_len);
	else
		html_raw(h, "<p>Purged by retention.</p>");
	page_end(pg);
	return IH_OK;
}

/*
 * Splits ".../events/PROVIDER/ID" from the raw REQUEST_URI, so that an id
 * holding "/" or "%2F" is read exactly as it was encoded: servers decode
 * PATH_INFO, and some of them fold or refuse "%2F".
 */
static int
event_from_uri(const struct page *pg, char *provider, size_t plen,
    char *id, size_t idlen)
{
	const char *uri = param(pg, "REQUEST_URI"), *p, *slash, *end;
	size_t n;

	if (uri == NULL)
		return IH_EINVAL;
	end = strchr(uri, '?');
	if (end == NULL)
		end = uri + strlen(uri);
	p = strstr(uri, "/events/");
	if (p == NULL || p >= end)
		return IH_EINVAL;
	p += 8;
	slash = memchr(p, '/', (size_t)(end - p));
	if (slash == NULL)
		return IH_EINVAL;
	n = (size_t)(slash - p);
	if (n == 0 || n >= plen ||
	    strspn(p, "abcdefghijklmnopqrstuvwxyz0123456789_-") < n)
		return IH_EINVAL;
	memcpy(provider, p, n);
	provider[n] = '\0';
	p = slash + 1;
	if (p == end || form_decode(p, (size_t)(end - p), id, idlen - 1, &n) !=
	    IH_OK || memchr(id, '\0', n) != NULL)
		return IH_EINVAL;
	id[n] = '\0';
	/* '+' is a space only in queries: in a path it is itself. */
	return strchr(p, '+') != NULL && strchr(p, '+') < end ? IH_EINVAL :
	    IH_OK;
}

static void
page_event(struct page *pg)
{
	struct show_state ss;
	char provider[64], id[1024], err[STORE_ERR_MAX];
	int rc;

	if (event_from_uri(pg, provider, sizeof(provider), id, sizeof(id)) !=
	    IH_OK) {
		error_page(pg, 400, "bad_event_url", "the address should read "
		    "events/PROVIDER/EVENT_ID, the id percent-encoded");
		return;
	}
	memset(&ss, 0, sizeof(ss));
	ss.pg = pg;
	rc = store_show(pg->c->store.st, provider, id, show_row, &ss, err,
	    sizeof(err));
	if (rc == IH_ENOTFOUND || (rc == IH_OK && !ss.found)) {
		error_page(pg, 404, "no_such_event", "no such event");
		return;
	}
	if (rc != IH_OK) {
		log_emit(&pg->sink, "console store_error=%s", err);
		error_page(pg, 503, "store_unavailable", "the store cannot "
		    "be read now; try again");
		return;
	}
	pg->status = 200;
	pg->outcome = "event";
}

/* ---- state changes -------------------------------------------------- */

/* Host part of an http(s) URL (scheme://host[:port]/...), or NULL. */
static int
url_host_is(const char *url, const char *host)
{
	const char *p;
	size_t n;

	if (strncasecmp(url, "https://", 8) == 0)
		p = url + 8;
	else if (strncasecmp(url, "http://", 7) == 0)
		p = url + 7;
	else
		return 0;
	n = strcspn(p, "/?#");
	return strlen(host) == n && strncasecmp(p, host, n) == 0;
}

/*
 * Whether a POST comes from the console's own pages.  Referrer-Policy
 * no-referrer makes browsers send "Origin: null" and no Referer with a
 * form POST, so a null Origin is taken only with Sec-Fetch-Site:
 * same-origin, which a browser sets and no page can forge.
 */
static int
same_origin(const struct page *pg)
{
	const char *host = param(pg, "HTTP_HOST");
	const char *origin = param(pg, "HTTP_ORIGIN");
	const char *site = param(pg, "HTTP_SEC_FETCH_SITE");
	const char *ref = param(pg, "HTTP_REFERER");

	if (host == NULL || *host == '\0')
		return 0;
	if (site != NULL && strcmp(site, "same-origin") != 0)
		return 0;
	if (origin != NULL && strcmp(origin, "null") != 0)
		return url_host_is(origin, host);
	if (site != NULL)
		return 1;
	return ref != NULL && url_host_is(ref, host);
}

/* Checks a POST: read-only mode, origin, body, token.  0 when refused. */
static int
post_ok(struct page *pg)
{
	struct console *c = pg->c;
	char token[CONSOLE_TOKEN_LEN + 8];
	int rc;

	if (pg->readonly) {
		error_page(pg, 403, "readonly", "this console is read-only "
		    "(IDEMHOOK_CONSOLE_READONLY)");
		return 0;
	}
	if (!same_origin(pg)) {
		error_page(pg, 403, "cross_origin", "the request did not come "
		    "from this console's pages");
		return 0;
	}
	rc = request_read_body(&c->req, POST_MAX);
	if (rc != IH_OK) {
		error_page(pg, rc == IH_ETOOBIG ? 413 : 400, "bad_body",
		    "the form could not be read");
		return 0;
	}
	if (field((const char *)c->req.body, c->req.body_len, "csrf", token,
	    sizeof(token)) != IH_OK || !console_csrf_ok(pg->key, pg->user,
	    token, (time_t)(pg->now_ms / 1000))) {
		error_page(pg, 403, "bad_csrf_token", "the form's token is "
		    "missing or stale: open the page again");
		return 0;
	}
	return 1;
}

static void
post_replay(struct page *pg)
{
	struct console *c = pg->c;
	struct store_filter f;
	struct html h;
	char provider[64], id[1024], err[STORE_ERR_MAX];
	long count = 0;
	int rc;

	if (!post_ok(pg))
		return;
	if (field((const char *)c->req.body, c->req.body_len, "provider",
	    provider, sizeof(provider)) != IH_OK || field((const char *)
	    c->req.body, c->req.body_len, "event_id", id, sizeof(id)) !=
	    IH_OK) {
		error_page(pg, 400, "bad_form", "provider and event_id needed");
		return;
	}
	memset(&f, 0, sizeof(f));
	f.provider = provider;
	f.event_id = id;
	rc = store_requeue(c->store.st, &f, 0, pg->now_ms, NULL, NULL, &count,
	    err, sizeof(err));
	if (rc != IH_OK) {
		log_emit(&pg->sink, "console store_error=%s", err);
		error_page(pg, 503, "store_unavailable", "the store cannot "
		    "change now; try again");
		return;
	}
	if (count == 0) {
		error_page(pg, 409, "not_replayable", "the event is not "
		    "failed, dead or done with its payload any more");
		return;
	}
	/* Post/redirect/get: a reload does not replay twice. */
	html_init(&h, sizeof(pg->location) - 1);
	html_raw(&h, pg->base);
	html_raw(&h, "/events/");
	html_url(&h, provider);
	html_raw(&h, "/");
	html_url(&h, id);
	html_raw(&h, "?replayed=1");
	if (!html_full(&h) && h.p != NULL)
		snprintf(pg->location, sizeof(pg->location), "%s", h.p);
	html_free(&h);
	html_reset(&c->out);
	pg->status = 303;
	pg->outcome = "replayed";
}

static void
post_bulk(struct page *pg)
{
	struct console *c = pg->c;
	struct html *h = &c->out;
	struct store_filter sf;
	struct filters f;
	char confirm[8], all[8], err[STORE_ERR_MAX];
	const char *why = NULL;
	enum store_bulk rule;
	long count = 0;
	int rc, dry;

	if (!post_ok(pg))
		return;
	if (read_filters((const char *)c->req.body, c->req.body_len, &f,
	    &why) != IH_OK) {
		error_page(pg, 400, "bad_filter", why);
		return;
	}
	if (strpbrk(f.type, "*?[") != NULL) {
		error_page(pg, 400, "bad_filter", "replay by filter takes an "
		    "exact type, not a pattern");
		return;
	}
	rc = field((const char *)c->req.body, c->req.body_len, "confirm",
	    confirm, sizeof(confirm));
	dry = !(rc == IH_OK && strcmp(confirm, "yes") == 0);
	memset(&sf, 0, sizeof(sf));
	sf.provider = f.provider[0] ? f.provider : NULL;
	sf.status = f.status[0] ? f.status : NULL;
	sf.event_type = f.type[0] ? f.type : NULL;
	sf.since_ms = f.since_ms;
	sf.until_ms = f.until_ms;
	/* The rule idemhook replay applies: a status; done narrowed or all. */
	rc = field((const char *)c->req.body, c->req.body_len, "all", all,
	    sizeof(all));
	rule = store_bulk_check(&sf, rc == IH_OK && strcmp(all, "yes") == 0);
	if (rule == STORE_BULK_NOT_REPLAYABLE || (!dry && rule !=
	    STORE_BULK_OK)) {
		error_page(pg, 400, "bad_filter", store_bulk_why(rule));
		return;
	}
	rc = store_requeue(c->store.st, &sf, dry, pg->now_ms, NULL, NULL,
	    &count, err, sizeof(err));
	if (rc != IH_OK) {
		log_emit(&pg->sink, "console store_error=%s", err);
		error_page(pg, 503, "store_unavailable", "the store cannot "
		    "be used now; try again");
		return;
	}
	page_start(pg, dry ? "Replay by filter: dry run" : "Replay by filter");
	if (!dry) {
		html_printf(h, "<p class=\"msg\"><span id=\"count\">%ld</span>"
		    " event(s) replayed: they are due again.</p>", count);
		pg->outcome = "bulk_replayed";
	} else {
		html_printf(h, "<p><span id=\"count\">%ld</span> event(s) "
		    "would be made due again.</p>", count);
		if (rule != STORE_BULK_OK && rule != STORE_BULK_DONE_ALL) {
			html_raw(h, "<p class=\"msg\">");
			html_esc(h, store_bulk_why(rule));
			html_raw(h, "</p>");
		} else if (count > 0) {
			html_raw(h, "<form method=\"post\" action=\"");
			html_esc(h, pg->base);
			html_raw(h, "/bulk\">");
			put_hidden(h, "csrf", pg->token);
			put_hidden(h, "provider", f.provider);
			put_hidden(h, "status", f.status);
			put_hidden(h, "type", f.type);
			put_hidden(h, "since", f.since);
			put_hidden(h, "until", f.until);
			put_hidden(h, "confirm", "yes");
			if (rule == STORE_BULK_DONE_ALL)
				put_hidden(h, "all", "yes");
			html_printf(h, "<button type=\"submit\">Replay %s%ld "
			    "event(s)</button></form>", rule ==
			    STORE_BULK_DONE_ALL ? "every done event: " : "",
			    count);
		}
		pg->outcome = "bulk_dry_run";
	}
	page_end(pg);
	pg->status = 200;
}

/* ---- authentication ------------------------------------------------- */

/*
 * Signs the request in.  Returns 1 with pg->user set, or 0 with the
 * refusal written into the page.
 */
static int
sign_in(struct page *pg, const struct config_source *src, size_t nsrc)
{
	struct console *c = pg->c;
	const char *mode = config_lookup(src, nsrc, "IDEMHOOK_CONSOLE_AUTH");
	const char *user = config_lookup(src, nsrc, "IDEMHOOK_CONSOLE_USER");
	const char *hash = config_lookup(src, nsrc,
	    "IDEMHOOK_CONSOLE_PASSWORD_HASH");
	const char *key = config_lookup(src, nsrc, "IDEMHOOK_CONSOLE_KEY");
	const char *ru, *hdr, *ra = param(pg, "REMOTE_ADDR");
	char u[USER_MAX], pw[PASS_MAX], cu[LOG_CLEAN_SIZE];
	char cra[LOG_CLEAN_SIZE], err[STORE_ERR_MAX];
	size_t pwlen = 0;
	time_t now = (time_t)(pg->now_ms / 1000);
	enum console_verdict v = CONSOLE_WRONG;
	long retry = 0;
	int rc, known, ok = 0;

	if (mode != NULL && strcmp(mode, "server") == 0) {
		ru = param(pg, "REMOTE_USER");
		if (key == NULL) {
			log_emit(&pg->sink, "console not_configured: with "
			    "IDEMHOOK_CONSOLE_AUTH=server set "
			    "IDEMHOOK_CONSOLE_KEY (random, 32+ characters) "
			    "for the CSRF tokens");
			error_page(pg, 500, "not_configured", "the console's "
			    "settings are incomplete (see the error log)");
			return 0;
		}
		if (ru == NULL || *ru == '\0' ||
		    strlen(ru) >= sizeof(pg->user)) {
			error_page(pg, 401, "no_remote_user", "the web server "
			    "did not authenticate this request");
			return 0;
		}
		snprintf(pg->user, sizeof(pg->user), "%s", ru);
		console_key_derive(key, strlen(key), pg->key);
		return 1;
	}
	if ((mode != NULL && strcmp(mode, "basic") != 0) || user == NULL ||
	    hash == NULL) {
		log_emit(&pg->sink, "console not_configured: set "
		    "IDEMHOOK_CONSOLE_USER and IDEMHOOK_CONSOLE_PASSWORD_HASH "
		    "(from: idemhook console-password), or "
		    "IDEMHOOK_CONSOLE_AUTH=server behind the web server's own "
		    "authentication");
		error_page(pg, 500, "not_configured", "the console is not "
		    "configured (see the error log)");
		return 0;
	}
	log_clean(cra, ra, (size_t)-1);
	if (!console_transport_ok(param(pg, "HTTPS"), ra, pg->tls_proxy)) {
		log_emit(&pg->sink, "console refused=plain_http remote=%s: "
		    "Basic sign-in needs HTTPS, a loopback client, or "
		    "IDEMHOOK_CONSOLE_TLS_PROXY=1 behind a proxy that "
		    "terminates TLS", cra);
		error_page(pg, 403, "https_required", "sign in over HTTPS: "
		    "this console does not take a password over plain HTTP");
		return 0;
	}
	hdr = param(pg, "HTTP_AUTHORIZATION");
	if (hdr == NULL || *hdr == '\0') {
		pg->ask_auth = 1;
		error_page(pg, 401, "unauthorized", "sign in");
		return 0;
	}
	rc = console_basic_parse(hdr, u, sizeof(u), pw, sizeof(pw), &pwlen);
	known = rc == IH_OK && strlen(u) == strlen(user) &&
	    CRYPTO_memcmp(u, user, strlen(user)) == 0;
	/* A credential verified lately costs no budget and no scrypt. */
	if (known && console_cache_hit(&c->cache, u, pw, pwlen, hash, now))
		ok = 1;
	else if (rc == IH_OK) {
		rc = console_throttle_signin(c->store.st, ra, u,
		    known ? hash : NULL, pw, pwlen, pg->now_ms, &v, &retry,
		    err, sizeof(err));
		ok = rc == IH_OK && v == CONSOLE_SIGNED_IN;
		if (ok)
			console_cache_put(&c->cache, u, pw, pwlen, hash, now);
	}
	OPENSSL_cleanse(pw, sizeof(pw));
	if (rc == IH_ECONFIG) {
		log_emit(&pg->sink, "console not_configured: "
		    "IDEMHOOK_CONSOLE_PASSWORD_HASH is not a hash from "
		    "idemhook console-password");
		error_page(pg, 500, "not_configured", "the console's password "
		    "hash is malformed");
		return 0;
	}
	if (rc == IH_ESTORE) {
		log_emit(&pg->sink, "console store_error=%s", err);
		error_page(pg, 503, "store_unavailable", "the store cannot be "
		    "used now; try again");
		pg->retry_after = 5;
		return 0;
	}
	if (!ok) {
		log_clean(cu, rc == IH_OK ? u : "-", (size_t)-1);
		if (v == CONSOLE_WAIT) {
			log_emit(&pg->sink, "console auth=throttled user=%s "
			    "remote=%s retry_after=%ld", cu, cra, retry);
			pg->retry_after = retry;
			error_page(pg, 429, "too_many_attempts", "too many "
			    "failed sign-ins; wait before trying again");
			return 0;
		}
		log_emit(&pg->sink, "console auth=failed user=%s remote=%s",
		    cu, cra);
		pg->ask_auth = 1;
		error_page(pg, 401, "unauthorized", "wrong user or password");
		return 0;
	}
	snprintf(pg->user, sizeof(pg->user), "%s", u);
	console_key_derive(key != NULL ? key : hash, strlen(key != NULL ? key :
	    hash), pg->key);
	return 1;
}

/* ---- the request ---------------------------------------------------- */

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
		error_page(pg, 500, "config_error", "the settings cannot be "
		    "used (see the error log)");
		return;
	}
	(void)log_dest_set(&pg->c->logd, pg->cfg.log, err, sizeof(err));
	tp = config_lookup(src, nsrc, "IDEMHOOK_CONSOLE_TLS_PROXY");
	pg->tls_proxy = tp != NULL && strcmp(tp, "1") == 0;
	pg->hsts = console_over_tls(param(pg, "HTTPS"), pg->tls_proxy);
	/* Sign-in keeps its budgets in the store. */
	rc = ensure_store(pg->c, &pg->cfg, err, sizeof(err));
	if (rc == IH_ECONFIG) {
		/* A location this build cannot open, as the receivers say. */
		log_emit(&pg->sink, "console store_error=%s", err);
		error_page(pg, 500, "bad_config", "the store's location "
		    "cannot be used; see the log");
		return;
	}
	if (rc != IH_OK) {
		log_emit(&pg->sink, "console store_error=%s", err);
		error_page(pg, 503, "store_unavailable", "the store cannot be "
		    "opened now; try again");
		return;
	}
	if (!sign_in(pg, src, nsrc))
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
			post_replay(pg);
		else if (strcmp(p, "/bulk") == 0)
			post_bulk(pg);
		else
			error_page(pg, 405, "method_not_allowed", "only "
			    "replay and bulk take a POST");
		return;
	}
	if (strcmp(pg->method, "GET") != 0 && strcmp(pg->method, "HEAD") !=
	    0) {
		error_page(pg, 405, "method_not_allowed", "GET or POST");
		return;
	}
	if (strcmp(p, "/replay") == 0 || strcmp(p, "/bulk") == 0)
		error_page(pg, 405, "method_not_allowed", "a replay needs the "
		    "form's POST");
	else if (*p == '\0' || strcmp(p, "/") == 0)
		page_overview(pg);
	else if (strcmp(p, "/events") == 0 || strcmp(p, "/events/") == 0)
		page_events(pg);
	else if (strncmp(p, "/events/", 8) == 0)
		page_event(pg);
	else
		error_page(pg, 404, "not_found", "no such page");
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
	pg.method = param(&pg, "REQUEST_METHOD");
	if (pg.method == NULL)
		pg.method = "GET";
	pg.base = param(&pg, "SCRIPT_NAME");
	if (pg.base == NULL)
		pg.base = "";
	pg.path = param(&pg, "PATH_INFO");
	if (pg.path == NULL)
		pg.path = "";
	pg.query = param(&pg, "QUERY_STRING");
	if (pg.query == NULL)
		pg.query = "";
	route(&pg);
	if (html_full(&c->out) && pg.status == 200)
		error_page(&pg, 500, "page_too_big", "the page was too big");
	send_page(&pg);
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
	make_csp(&c);
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
