/*
 * page_overview.c -- GET M/ : counts by provider and status, the
 * chart of the last hours, latency and the store's size.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "console_int.h"
#include "html.h"
#include "ih.h"
#include "log.h"
#include "store.h"
#include "store_console.h"

#define MAX_PROVIDERS	32

struct overview {
	size_t	 n;
	char	 provider[MAX_PROVIDERS][64];
	int64_t	 count[MAX_PROVIDERS][CONSOLE_NSTATUS];
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
	for (s = 0; s < CONSOLE_NSTATUS; s++)
		if (strcmp(console_statuses[s], status) == 0)
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

void
console_page_overview(struct page *pg)
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
		console_store_error(pg, err, "be read");
		return;
	}
	console_page_start(pg, "Overview");
	html_raw(h, "<h2>Events by provider and status</h2><table><tr>"
	    "<th>provider</th>");
	for (k = 0; k < CONSOLE_NSTATUS; k++)
		html_printf(h, "<th>%s</th>", console_statuses[k]);
	html_raw(h, "<th>last delivery</th></tr>");
	for (i = 0; i < ov.n; i++) {
		html_raw(h, "<tr><td><a href=\"");
		html_esc(h, pg->base);
		html_raw(h, "/events?provider=");
		html_url(h, ov.provider[i]);
		html_raw(h, "\">");
		html_esc(h, ov.provider[i]);
		html_raw(h, "</a></td>");
		for (k = 0; k < CONSOLE_NSTATUS; k++) {
			html_raw(h, "<td><a href=\"");
			html_esc(h, pg->base);
			html_raw(h, "/events?provider=");
			html_url(h, ov.provider[i]);
			html_printf(h, "&amp;status=%s\">%lld</a></td>",
			    console_statuses[k], (long long)ov.count[i][k]);
		}
		html_raw(h, "<td>");
		if (ov.last[i] > 0) {
			console_put_time(h, ov.last[i]);
			console_fmt_age(pg->now_ms - ov.last[i], age,
			    sizeof(age));
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

	console_overview_health(pg);
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
	console_page_end(pg);
	pg->status = 200;
	pg->outcome = "overview";
}
