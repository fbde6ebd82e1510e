/*
 * page_overview_health.c -- the overview's endpoints section: per
 * provider, the last `idemhook health` result (kept in the store by the
 * command and idemhook work, so that the console needs no API key) and
 * the signatures refused in the last hour and day (sigfail.h: the file
 * beside a SQLite store, the store itself on PostgreSQL).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "console_int.h"
#include "html.h"
#include "ih.h"
#include "sigfail.h"
#include "store_health.h"

#define EP_MAX	32

struct ep {
	char	 provider[64];
	int	 checked;
	int64_t	 checked_at;
	char	 outcome[16];
	long	 problems;
	char	 findings[STORE_HEALTH_TEXT_MAX + 1];
	long	 hour, day;
};

struct eps {
	size_t		n;
	struct ep	e[EP_MAX];
};

/* The row of provider, added when new; NULL when the table is full. */
static struct ep *
row_of(struct eps *es, const char *provider)
{
	size_t i;

	for (i = 0; i < es->n; i++)
		if (strcmp(es->e[i].provider, provider) == 0)
			return &es->e[i];
	if (es->n == EP_MAX)
		return NULL;
	memset(&es->e[es->n], 0, sizeof(es->e[0]));
	snprintf(es->e[es->n].provider, sizeof(es->e[0].provider), "%s",
	    provider);
	return &es->e[es->n++];
}

static int
health_row(void *arg, const struct store_health *h)
{
	struct ep *e = row_of(arg, h->provider);

	if (e == NULL)
		return IH_OK;
	e->checked = 1;
	e->checked_at = h->checked_at;
	snprintf(e->outcome, sizeof(e->outcome), "%s", h->outcome);
	e->problems = h->problems;
	snprintf(e->findings, sizeof(e->findings), "%s", h->findings);
	return IH_OK;
}

static int
sigfail_row(void *arg, const char *provider, long hour, long day)
{
	struct ep *e;

	if (day == 0)
		return IH_OK;
	e = row_of(arg, provider);
	if (e != NULL) {
		e->hour = hour;
		e->day = day;
	}
	return IH_OK;
}

static void
put_row(struct page *pg, const struct ep *e)
{
	struct html *h = &pg->c->out;
	char age[32];
	int bad = e->checked && strcmp(e->outcome, "ok") != 0;

	html_raw(h, "<tr><td>");
	html_esc(h, e->provider);
	html_raw(h, "</td><td>");
	if (e->checked) {
		console_put_time(h, e->checked_at);
		console_fmt_age(pg->now_ms - e->checked_at, age, sizeof(age));
		html_raw(h, " (");
		html_esc(h, age);
		html_raw(h, " ago)");
	} else
		html_raw(h, "never");
	html_printf(h, "</td><td%s>", bad ? " class=\"warn\"" : "");
	html_esc(h, e->checked ? e->outcome : "-");
	if (bad && e->problems > 0)
		html_printf(h, " (%ld)", e->problems);
	html_raw(h, "</td><td class=\"findings\">");
	html_esc(h, e->findings);
	html_printf(h, "</td><td%s>%ld</td><td>%ld</td></tr>",
	    e->hour > 0 ? " class=\"warn\"" : "", e->hour, e->day);
}

void
console_overview_health(struct page *pg)
{
	struct html *h = &pg->c->out;
	struct eps *es;
	char err[STORE_ERR_MAX];
	size_t i;
	int rc = IH_ENOMEM;

	snprintf(err, sizeof(err), "out of memory");
	es = calloc(1, sizeof(*es));
	if (es != NULL)
		rc = store_health_list(pg->c->store.st, health_row, es, err,
		    sizeof(err));
	if (rc == IH_OK)
		rc = sigfail_sums(pg->c->store.st, pg->cfg.db_path, pg->now_ms,
		    sigfail_row, es, err, sizeof(err));
	html_raw(h, "<h2>Endpoints, as the providers see them</h2>");
	if (rc != IH_OK) {
		/* The cause goes to the log only: it may name paths. */
		log_emit(&pg->sink, "console endpoints cannot be read: %s",
		    err);
		html_raw(h, "<p class=\"warn\">endpoint health cannot be read "
		    "now (see the log)</p>");
		free(es);
		return;
	}
	html_raw(h, "<table id=\"endpoints\"><tr><th>provider</th>"
	    "<th>last health check</th><th>outcome</th><th>findings</th>"
	    "<th>bad signatures, last hour</th><th>last 24 hours</th></tr>");
	for (i = 0; i < es->n; i++)
		put_row(pg, &es->e[i]);
	if (es->n == 0)
		html_raw(h, "<tr><td colspan=\"6\">no health check yet (run "
		    "idemhook health, or set IDEMHOOK_HEALTH_INTERVAL for "
		    "idemhook work) and no refused signature</td></tr>");
	html_raw(h, "</table>");
	free(es);
}
