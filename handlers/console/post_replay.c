/*
 * post_replay.c -- POST M/replay and M/bulk: the state changes, behind
 * one gate (read-only mode, same origin, bounded body, CSRF token).
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "console_int.h"
#include "console_auth.h"
#include "html.h"
#include "ih.h"
#include "log.h"
#include "request.h"
#include "store.h"

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
	const char *host = console_param(pg, "HTTP_HOST");
	const char *origin = console_param(pg, "HTTP_ORIGIN");
	const char *site = console_param(pg, "HTTP_SEC_FETCH_SITE");
	const char *ref = console_param(pg, "HTTP_REFERER");

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
		console_error_page(pg, 403, "readonly", "this console is "
		    "read-only (IDEMHOOK_CONSOLE_READONLY)");
		return 0;
	}
	if (!same_origin(pg)) {
		console_error_page(pg, 403, "cross_origin", "the request did "
		    "not come from this console's pages");
		return 0;
	}
	rc = request_read_body(&c->req, POST_MAX);
	if (rc != IH_OK) {
		console_error_page(pg, rc == IH_ETOOBIG ? 413 : 400, "bad_body",
		    "the form could not be read");
		return 0;
	}
	if (console_field((const char *)c->req.body, c->req.body_len, "csrf",
	    token, sizeof(token)) != IH_OK || !console_csrf_ok(pg->key,
	    pg->user, token, (time_t)(pg->now_ms / 1000))) {
		console_error_page(pg, 403, "bad_csrf_token",
		    "the form's token is missing or stale: open the page "
		    "again");
		return 0;
	}
	return 1;
}

void
console_post_replay(struct page *pg)
{
	struct console *c = pg->c;
	struct store_filter f;
	struct html h;
	char provider[64], id[1024], err[STORE_ERR_MAX], account[64];
	long count = 0;
	int rc;

	if (!post_ok(pg))
		return;
	/* One event of one account: never the same id of another. */
	if (console_account((const char *)c->req.body, c->req.body_len, 1,
	    account, sizeof(account)) != IH_OK) {
		console_error_page(pg, 400, "bad_form", "not an account name");
		return;
	}
	if (console_field((const char *)c->req.body, c->req.body_len,
	    "provider", provider, sizeof(provider)) != IH_OK ||
	    console_field((const char *)c->req.body, c->req.body_len,
	    "event_id", id, sizeof(id)) != IH_OK) {
		console_error_page(pg, 400, "bad_form", "provider and event_id "
		    "needed");
		return;
	}
	memset(&f, 0, sizeof(f));
	f.provider = provider;
	f.account = account;
	f.event_id = id;
	rc = store_requeue(c->store.st, &f, 0, pg->now_ms, NULL, NULL, &count,
	    err, sizeof(err));
	if (rc != IH_OK) {
		console_store_error(pg, err, "change");
		return;
	}
	if (count == 0) {
		console_error_page(pg, 409, "not_replayable",
		    "the event is not failed, dead or done with its payload "
		    "any more");
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
	/* A header, not a page: the '&' stays as it is. */
	if (strcmp(account, "default") != 0) {
		html_raw(&h, "&account=");
		html_url(&h, account);
	}
	if (!html_full(&h) && h.p != NULL)
		snprintf(pg->location, sizeof(pg->location), "%s", h.p);
	html_free(&h);
	html_reset(&c->out);
	pg->status = 303;
	pg->outcome = "replayed";
}

void
console_post_bulk(struct page *pg)
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
	if (console_read_filters((const char *)c->req.body, c->req.body_len, &f,
	    &why) != IH_OK) {
		console_error_page(pg, 400, "bad_filter", why);
		return;
	}
	if (strpbrk(f.type, "*?[") != NULL) {
		console_error_page(pg, 400, "bad_filter", "replay by filter "
		    "takes an exact type, not a pattern");
		return;
	}
	rc = console_field((const char *)c->req.body, c->req.body_len,
	    "confirm", confirm, sizeof(confirm));
	dry = !(rc == IH_OK && strcmp(confirm, "yes") == 0);
	memset(&sf, 0, sizeof(sf));
	sf.provider = f.provider[0] ? f.provider : NULL;
	sf.account = f.account[0] ? f.account : NULL;
	sf.status = f.status[0] ? f.status : NULL;
	sf.event_type = f.type[0] ? f.type : NULL;
	sf.since_ms = f.since_ms;
	sf.until_ms = f.until_ms;
	/* The rule idemhook replay applies: a status; done narrowed or all. */
	rc = console_field((const char *)c->req.body, c->req.body_len, "all",
	    all, sizeof(all));
	rule = store_bulk_check(&sf, rc == IH_OK && strcmp(all, "yes") == 0);
	if (rule == STORE_BULK_NOT_REPLAYABLE || (!dry && rule !=
	    STORE_BULK_OK)) {
		console_error_page(pg, 400, "bad_filter", store_bulk_why(rule));
		return;
	}
	rc = store_requeue(c->store.st, &sf, dry, pg->now_ms, NULL, NULL,
	    &count, err, sizeof(err));
	if (rc != IH_OK) {
		console_store_error(pg, err, "be used");
		return;
	}
	console_page_start(pg, dry ? "Replay by filter: dry run" :
	    "Replay by filter");
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
			console_put_bulk_form(h, pg, &f);
			console_put_hidden(h, "confirm", "yes");
			if (rule == STORE_BULK_DONE_ALL)
				console_put_hidden(h, "all", "yes");
			html_printf(h, "<button type=\"submit\">Replay %s%ld "
			    "event(s)</button></form>", rule ==
			    STORE_BULK_DONE_ALL ? "every done event: " : "",
			    count);
		}
		pg->outcome = "bulk_dry_run";
	}
	console_page_end(pg);
	pg->status = 200;
}
