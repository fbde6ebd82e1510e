/*
 * console_filters.c -- the events filter, read from a query string or a
 * form body and written back as a query: the events page and bulk
 * replay read the same fields the same way, and the one list of
 * statuses lives here.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "console_int.h"
#include "html.h"
#include "ih.h"

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

const char *const console_statuses[CONSOLE_NSTATUS] = { "received",
    "processing", "done", "failed", "dead", "quarantined", "held" };

static int
valid_status(const char *s)
{
	size_t i;

	for (i = 0; i < CONSOLE_NSTATUS; i++)
		if (strcmp(s, console_statuses[i]) == 0)
			return 1;
	return 0;
}

int
console_read_filters(const char *src, size_t len, struct filters *f,
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
		rc = console_field(src, len, fl[i].name, fl[i].buf, fl[i].cap);
		if (rc != IH_OK && rc != IH_ENOTFOUND) {
			*why = "a filter is malformed, repeated or too long";
			return IH_EINVAL;
		}
	}
	if (console_account(src, len, 0, f->account, sizeof(f->account)) !=
	    IH_OK) {
		*why = "account: 1 to 32 of a-z, 0-9, _ and -";
		return IH_EINVAL;
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
void
console_put_filter_query(struct html *h, const struct filters *f)
{
	const char *names[] = { "provider", "account", "status", "type", "q",
	    "since", "until" };
	const char *vals[] = { f->provider, f->account, f->status, f->type,
	    f->q, f->since, f->until };
	size_t i;
	int first = 1;

	for (i = 0; i < 7; i++) {
		if (vals[i][0] == '\0')
			continue;
		html_raw(h, first ? "" : "&amp;");
		html_raw(h, names[i]);
		html_raw(h, "=");
		html_url(h, vals[i]);
		first = 0;
	}
}

void
console_put_bulk_form(struct html *h, const struct page *pg,
    const struct filters *f)
{
	/* The search text q is not a rule of bulk replay: not carried. */
	const char *const names[] = { "provider", "account", "status", "type",
	    "since", "until" };
	const char *const vals[] = { f->provider, f->account, f->status,
	    f->type, f->since, f->until };

	console_put_post_form(h, pg, "/bulk", names, vals, 6);
}
