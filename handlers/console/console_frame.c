/*
 * console_frame.c -- the request's parameters and the HTML frame every
 * console page shares: the Content-Security-Policy and security headers,
 * the page's start and end, the error pages, and the small widgets
 * (times, ages, hidden fields, selects, event links) the pages put in
 * it.  Escaping stays in shared/html.c, form fields in shared/form.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <fcgiapp.h>
#include <openssl/evp.h>

#include "console_int.h"
#include "html.h"
#include "respond.h"

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

const char *
console_param(const struct page *pg, const char *name)
{
	if (pg->c->fx != NULL)
		return FCGX_GetParam(name, pg->c->fx->envp);
	return getenv(name);
}

/* Builds the one Content-Security-Policy, with the stylesheet's hash. */
void
console_make_csp(struct console *c)
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
void
console_send_page(struct page *pg)
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

void
console_page_start(struct page *pg, const char *title)
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

void
console_page_end(struct page *pg)
{
	html_raw(&pg->c->out, "</main></body></html>\n");
}

/* A short page saying why, with the code the log line names. */
void
console_error_page(struct page *pg, int status, const char *code,
    const char *text)
{
	struct html *h = &pg->c->out;

	pg->status = status;
	pg->outcome = code;
	console_page_start(pg, respond_reason(status));
	html_raw(h, "<p class=\"err\">");
	html_esc(h, code);
	html_raw(h, ": ");
	html_esc(h, text);
	html_raw(h, "</p>");
	console_page_end(pg);
}

void
console_store_error(struct page *pg, const char *err, const char *doing)
{
	char text[128];

	log_emit(&pg->sink, "console store_error=%s", err);
	snprintf(text, sizeof(text), "the store cannot %s now; try again",
	    doing);
	console_error_page(pg, 503, "store_unavailable", text);
}

void
console_fmt_time(int64_t ms, char *buf, size_t len)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;

	if (ms <= 0 || gmtime_r(&t, &tm) == NULL) {
		snprintf(buf, len, "-");
		return;
	}
	strftime(buf, len, "%Y-%m-%d %H:%M:%S UTC", &tm);
}

void
console_put_time(struct html *h, int64_t ms)
{
	char buf[64];

	console_fmt_time(ms, buf, sizeof(buf));
	html_esc(h, buf);
}

void
console_fmt_age(int64_t ms, char *buf, size_t len)
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

void
console_put_hidden(struct html *h, const char *name, const char *value)
{
	html_raw(h, "<input type=\"hidden\" name=\"");
	html_esc(h, name);
	html_raw(h, "\" value=\"");
	html_esc(h, value);
	html_raw(h, "\">");
}

void
console_put_post_form(struct html *h, const struct page *pg,
    const char *action, const char *const *names, const char *const *vals,
    size_t n)
{
	size_t i;

	html_raw(h, "<form method=\"post\" action=\"");
	html_esc(h, pg->base);
	html_raw(h, action);
	html_raw(h, "\">");
	console_put_hidden(h, "csrf", pg->token);
	for (i = 0; i < n; i++)
		console_put_hidden(h, names[i], vals[i]);
}

void
console_put_event_link(struct html *h, const struct page *pg,
    const char *provider,
    const char *event_id)
{
	html_esc(h, pg->base);
	html_raw(h, "/events/");
	html_url(h, provider);
	html_raw(h, "/");
	html_url(h, event_id);
}

void
console_put_select(struct html *h, const char *name, const char *cur,
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

void
console_put_text_input(struct html *h, const char *label, const char *name,
    const char *value, const char *placeholder)
{
	html_raw(h, "<label>");
	html_esc(h, label);
	html_printf(h, " <input name=\"%s\" size=\"14\" placeholder=\"%s\" "
	    "value=\"", name, placeholder);
	html_esc(h, value);
	html_raw(h, "\"></label>");
}
