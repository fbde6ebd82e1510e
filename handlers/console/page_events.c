/*
 * page_events.c -- GET M/events : the filtered list of events, newest
 * first, a page at a time, with the bulk replay form.
 */
#include <string.h>

#include "console_int.h"
#include "html.h"
#include "ih.h"
#include "log.h"
#include "store.h"
#include "store_console.h"

#define LIST_PAGE		50

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
	console_put_time(h, r->received_at);
	html_raw(h, "</td><td>");
	html_esc(h, r->provider);
	html_raw(h, "</td><td>");
	html_esc(h, r->account);
	html_raw(h, "</td><td><a class=\"ev\" href=\"");
	console_put_event_link(h, ls->pg, r->provider, r->event_id);
	console_put_account_query(h, r->account, 1);
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

void
console_page_events(struct page *pg)
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

	if (console_read_filters(pg->query, strlen(pg->query), &f, &why) !=
	    IH_OK) {
		console_error_page(pg, 400, "bad_filter", why);
		return;
	}
	console_page_start(pg, "Events");
	html_raw(h, "<form class=\"filter\" method=\"get\" action=\"");
	html_esc(h, pg->base);
	html_raw(h, "/events\">");
	console_put_select(h, "provider", f.provider, provs, 5);
	console_put_select(h, "status", f.status, console_statuses,
	    CONSOLE_NSTATUS);
	console_put_text_input(h, "account", "account", f.account,
	    "every account");
	console_put_text_input(h, "type", "type", f.type, "invoice.*");
	console_put_text_input(h, "search", "q", f.q, "part of id or type");
	console_put_text_input(h, "since", "since", f.since, "YYYY-MM-DD");
	console_put_text_input(h, "until", "until", f.until, "YYYY-MM-DD");
	html_raw(h, "<button type=\"submit\">Filter</button></form>");

	memset(&q, 0, sizeof(q));
	q.provider = f.provider;
	q.account = f.account[0] != '\0' ? f.account : NULL;
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
	    "<th>provider</th><th>account</th><th>event id</th><th>type</th>"
	    "<th>status</th>"
	    "<th>attempts</th><th>duplicates</th><th>last error</th></tr>\n");
	rc = store_console_list(pg->c->store.st, &q, list_row, &ls, &next,
	    err, sizeof(err));
	if (rc == IH_ESTORE) {
		console_store_error(pg, err, "be read");
		return;
	}
	html_raw(h, "</table>");
	html_printf(h, "<p><span id=\"shown\">%ld</span> event(s) shown. ",
	    ls.n);
	if (f.before_id > 0) {
		html_raw(h, "<a href=\"");
		html_esc(h, pg->base);
		html_raw(h, "/events?");
		console_put_filter_query(h, &f);
		html_raw(h, "\">Newest</a> ");
	}
	if (next > 0) {
		html_raw(h, "<a id=\"older\" href=\"");
		html_esc(h, pg->base);
		html_raw(h, "/events?");
		console_put_filter_query(h, &f);
		html_printf(h, "&amp;before=%lld\">%s</a>", (long long)next,
		    ls.n < LIST_PAGE ? "Search further back" : "Older");
	}
	html_raw(h, "</p>");
	if (!pg->readonly) {
		html_raw(h, "<h2>Replay by filter</h2>");
		console_put_bulk_form(h, pg, &f);
		html_raw(h, "<p>Makes the done, failed, dead or quarantined "
		    "events matching the provider, status, type (exact) and "
		    "dates above due again; the search text is not used. "
		    "You see how many first.</p><button type=\"submit\">"
		    "Count events to replay</button></form>");
	}
	console_page_end(pg);
	pg->status = 200;
	pg->outcome = "events";
}
