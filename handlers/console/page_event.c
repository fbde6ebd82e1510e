/*
 * page_event.c -- GET M/events/PROVIDER/EVENT_ID : one event, its
 * headers (credentials never shown), payload and attempts, and the
 * replay button.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "account.h"
#include "clock.h"
#include "console_int.h"
#include "form.h"
#include "html.h"
#include "ih.h"
#include "json.h"
#include "log.h"
#include "request.h"
#include "store.h"
#include "store_dest.h"
#include "store_thin.h"
#include "store_waiting.h"

#define PAYLOAD_SHOWN_MAX	(1024L * 1024)	/* payload bytes shown */

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

/* The rows of the metadata table, in order: one writer for them all. */
enum meta_kind { META_TEXT, META_STATUS, META_TIME, META_NUM };

#define META(name, kind, field) \
	{ name, kind, offsetof(struct store_row, field) }

static const struct meta_field {
	const char	*name;
	enum meta_kind	 kind;
	size_t		 off;
} meta_fields[] = {
	META("provider", META_TEXT, provider),
	META("account", META_TEXT, account),
	META("event id", META_TEXT, event_id),
	META("type", META_TEXT, event_type),
	META("subtype", META_TEXT, subtype),
	META("order key", META_TEXT, order_key),
	META("API version", META_TEXT, api_version),
	META("status", META_STATUS, status),
	META("received", META_TIME, received_at),
	META("last seen", META_TIME, last_seen_at),
	META("duplicates", META_NUM, duplicates),
	META("attempts", META_NUM, attempts),
	META("next attempt", META_TIME, next_attempt_at),
	META("done", META_TIME, done_at),
	META("payload purged", META_TIME, purged_at),
	META("lease holder", META_TEXT, lease_owner),
	META("last error", META_TEXT, last_error),
	META("payload bytes", META_NUM, payload_len),
};

/* Writes the metadata table; a text that is NULL shows as "-". */
static void
put_meta(struct html *h, const struct store_row *r)
{
	const struct meta_field *m;
	const char *at, *text;
	char buf[64];
	int64_t v;
	size_t i;

	html_raw(h, "<table id=\"meta\">");
	for (i = 0; i < sizeof(meta_fields) / sizeof(meta_fields[0]); i++) {
		m = &meta_fields[i];
		at = (const char *)r + m->off;
		if (m->kind == META_TEXT || m->kind == META_STATUS) {
			text = *(const char *const *)(const void *)at;
		} else {
			v = *(const int64_t *)(const void *)at;
			if (m->kind == META_TIME)
				console_fmt_time(v, buf, sizeof(buf));
			else
				snprintf(buf, sizeof(buf), "%lld",
				    (long long)v);
			text = buf;
		}
		html_raw(h, "<tr><th>");
		html_esc(h, m->name);
		html_raw(h, m->kind == META_STATUS ?
		    "</th><td id=\"status\">" : "</th><td>");
		html_esc(h, text != NULL ? text : "-");
		html_raw(h, "</td></tr>");
	}
	/* A Stripe thin event that idemhook work has not fetched yet. */
	if (r->needs_fetch) {
		html_raw(h, "<tr><th>fetch</th><td id=\"fetch\">waiting: a "
		    "Stripe thin event, which idemhook work fetches from "
		    "Stripe's API with IDEMHOOK_STRIPE_API_KEY");
		if (r->account != NULL &&
		    strcmp(r->account, ACCOUNT_DEFAULT) != 0) {
			html_raw(h, "@");
			html_esc(h, r->account);
		}
		if (!STORE_THIN_CAN_FETCH) {
			html_raw(h, "; ");
			html_esc(h, STORE_THIN_NO_CLIENT);
		}
		html_raw(h, "</td></tr>");
	}
	html_raw(h, "</table>");
}

static int
show_attempt(void *arg, const struct store_attempt *a)
{
	struct html *h = arg;

	html_printf(h, "<tr><td>%lld</td><td>", (long long)a->attempt);
	console_put_time(h, a->started_at);
	html_raw(h, "</td><td>");
	console_put_time(h, a->finished_at);
	html_raw(h, "</td><td>");
	html_esc(h, a->outcome != NULL ? a->outcome : "-");
	html_raw(h, "</td><td>");
	html_esc(h, a->error != NULL ? a->error : "");
	html_raw(h, "</td></tr>\n");
	return IH_OK;
}

/* Why a due event still waits on its forwarding destination. */
static void
put_held(struct page *pg, const struct store_row *r)
{
	struct html *h = &pg->c->out;
	struct store_dest_state ds;
	char err[STORE_ERR_MAX], n[64];
	int64_t now = clock_wall_ms();
	const char *why;

	if (store_dest_state(pg->c->store.st, r->provider, r->account, now,
	    &ds, err, sizeof(err)) != IH_OK)
		return;
	why = store_dest_why(&ds, r->rowid, now);
	if (why == NULL)
		return;
	html_raw(h, "<p class=\"msg\" id=\"waiting\">Waiting (");
	html_esc(h, why);
	html_raw(h, "): ");
	if (strcmp(why, "paused") == 0) {
		html_raw(h, "its destination is paused after failed "
		    "deliveries");
		if (ds.probe_id[0] != '\0') {
			html_raw(h, "; the probe is ");
			html_esc(h, ds.probe_id);
		}
	} else if (strcmp(why, "concurrency") == 0) {
		snprintf(n, sizeof(n), "%lld of at most %ld",
		    (long long)ds.in_flight, ds.concurrency);
		html_raw(h, "its destination has its deliveries in flight (");
		html_esc(h, n);
		html_raw(h, ")");
	} else
		html_raw(h, "its destination's rate limit");
	html_raw(h, ".</p>");
}

/*
 * Why a pending event waits: behind an earlier unfinished event of its
 * object (its order key, forward.h), for its retry, or held by its
 * forwarding destination (store_dest.h).
 */
static void
put_waiting(struct page *pg, const struct store_row *r)
{
	struct html *h = &pg->c->out;
	char id[256], err[STORE_ERR_MAX];

	id[0] = '\0';
	if (r->order_key != NULL && (strcmp(r->status, "received") == 0 ||
	    strcmp(r->status, "failed") == 0) &&
	    store_behind(pg->c->store.st, r->rowid, id, sizeof(id), err,
	    sizeof(err)) != IH_OK)
		snprintf(id, sizeof(id), "(cannot be read now)");
	if (id[0] != '\0') {
		html_raw(h, "<p class=\"msg\" id=\"waiting\">Waiting behind "
		    "an earlier event of its object: ");
		html_esc(h, id);
		html_raw(h, ".</p>");
	} else if (strcmp(r->status, "failed") == 0 &&
	    r->next_attempt_at > clock_wall_ms()) {
		html_raw(h, "<p class=\"msg\" id=\"waiting\">Waiting for "
		    "its retry, at ");
		console_put_time(h, r->next_attempt_at);
		html_raw(h, ".</p>");
	} else if (strcmp(r->status, "received") == 0 ||
	    strcmp(r->status, "failed") == 0)
		put_held(pg, r);
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
	console_page_start(pg, title);
	if (strstr(pg->query, "replayed=1") != NULL)
		html_raw(h, "<p class=\"msg\" id=\"replayed\">Replayed: the "
		    "event is due again.</p>");
	if (strcmp(r->status, "held") == 0) {
		html_raw(h, "<p class=\"msg\" id=\"held\">Held, not "
		    "processed: ");
		html_esc(h, r->last_error != NULL ? r->last_error :
		    "its API version is not in the expected list");
		html_raw(h, ". Replay releases it: do so only when the "
		    "provider sent it.</p>");
	}
	put_waiting(pg, r);
	put_meta(h, r);

	if (!pg->readonly && (strcmp(r->status, "failed") == 0 ||
	    strcmp(r->status, "dead") == 0 || strcmp(r->status, "held") == 0)) {
		const char *const names[] = { "provider", "account",
		    "event_id" };
		const char *const vals[] = { r->provider, r->account,
		    r->event_id };

		console_put_post_form(h, pg, "/replay", names, vals, 3);
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
	console_page_end(pg);
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
	const char *uri = console_param(pg, "REQUEST_URI"), *p, *slash, *end;
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

void
console_page_event(struct page *pg)
{
	struct show_state ss;
	char provider[64], id[1024], err[STORE_ERR_MAX], account[64];
	int rc;

	if (event_from_uri(pg, provider, sizeof(provider), id, sizeof(id)) !=
	    IH_OK || console_account(pg->query, strlen(pg->query), 1,
	    account, sizeof(account)) != IH_OK) {
		console_error_page(pg, 400, "bad_event_url",
		    "the address should read events/PROVIDER/EVENT_ID, the id "
		    "percent-encoded");
		return;
	}
	memset(&ss, 0, sizeof(ss));
	ss.pg = pg;
	rc = store_show_account(pg->c->store.st, provider, account, id,
	    show_row, &ss, err, sizeof(err));
	if (rc == IH_ENOTFOUND || (rc == IH_OK && !ss.found)) {
		console_error_page(pg, 404, "no_such_event", "no such event");
		return;
	}
	if (rc != IH_OK) {
		console_store_error(pg, err, "be read");
		return;
	}
	pg->status = 200;
	pg->outcome = "event";
}
