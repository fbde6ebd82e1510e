/*
 * store_console.c -- the console's front (store_console.h): the bounds,
 * the paging by id windows and the percentiles, the same for every
 * backend; the statements are each backend's (sqlite_console.c,
 * pg_console.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ih.h"
#include "store_backend.h"
#include "store_console.h"

#define HOUR_MS	(3600LL * 1000)
/* Values each hour keeps for its own percentiles. */
#define HOUR_SAMPLE	(STORE_CONSOLE_LATENCY_MAX / STORE_CONSOLE_HOURS + 1024)

int
store_console_counts(struct store *st, store_console_count_fn fn, void *arg,
    char *err, size_t errlen)
{
	return st->ops->console_counts(st, fn, arg, err, errlen);
}

static int
cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* The nearest-rank percentile pct of n sorted values, or -1. */
static int64_t
percentile(const int64_t *v, size_t n, int pct)
{
	size_t k;

	if (n == 0)
		return -1;
	k = (n * (size_t)pct + 99) / 100;
	if (k == 0)
		k = 1;
	return v[k - 1];
}

/* What the series' callbacks fill. */
struct series_acc {
	struct store_console_series *s;
	int64_t	*all;
	size_t	 n;
	int64_t	*hv[STORE_CONSOLE_HOURS];
	size_t	 hn[STORE_CONSOLE_HOURS];
};

static int
hour_row(void *arg, int64_t h, int64_t accepted, int64_t duplicates,
    int64_t failed)
{
	struct series_acc *a = arg;
	struct store_console_series *s = a->s;

	if (h < 0 || h >= STORE_CONSOLE_HOURS)
		return IH_OK;
	s->hour[h].accepted = accepted;
	s->hour[h].duplicates = duplicates;
	s->hour[h].failed = failed;
	s->accepted += accepted;
	s->duplicates += duplicates;
	s->failed += failed;
	return IH_OK;
}

static int
latency_row(void *arg, int64_t h, int64_t ms)
{
	struct series_acc *a = arg;

	if (h < 0 || h >= STORE_CONSOLE_HOURS || ms < 0 ||
	    a->n >= STORE_CONSOLE_LATENCY_MAX)
		return IH_OK;
	a->all[a->n++] = ms;
	/* Each hour keeps a bounded sample: its first values. */
	if (a->hn[h] < HOUR_SAMPLE)
		a->hv[h][a->hn[h]++] = ms;
	a->s->hour[h].latency_n++;
	return IH_OK;
}

int
store_console_series(struct store *st, int64_t now_ms,
    struct store_console_series *s, char *err, size_t errlen)
{
	struct series_acc a;
	int64_t start, end;
	size_t i;
	int rc;

	memset(s, 0, sizeof(*s));
	memset(&a, 0, sizeof(a));
	a.s = s;
	/* Hours aligned on the clock, the current one last. */
	start = (now_ms / HOUR_MS + 1 - STORE_CONSOLE_HOURS) * HOUR_MS;
	end = start + STORE_CONSOLE_HOURS * HOUR_MS;
	for (i = 0; i < STORE_CONSOLE_HOURS; i++) {
		s->hour[i].start_ms = start + (int64_t)i * HOUR_MS;
		s->hour[i].p50_ms = s->hour[i].p99_ms = -1;
	}
	s->p50_ms = s->p99_ms = -1;
	rc = st->ops->console_hours(st, start, end, hour_row, &a, err,
	    errlen);
	if (rc != IH_OK)
		return rc;
	a.all = malloc(STORE_CONSOLE_LATENCY_MAX * sizeof(*a.all));
	rc = a.all == NULL ? IH_ENOMEM : IH_OK;
	for (i = 0; i < STORE_CONSOLE_HOURS; i++) {
		a.hv[i] = malloc(HOUR_SAMPLE * sizeof(*a.hv[i]));
		if (a.hv[i] == NULL)
			rc = IH_ENOMEM;
	}
	if (rc != IH_OK)
		goto out;
	rc = st->ops->console_latency(st, start, end,
	    STORE_CONSOLE_LATENCY_MAX, latency_row, &a, err, errlen);
	if (rc != IH_OK)
		goto out;
	qsort(a.all, a.n, sizeof(*a.all), cmp_i64);
	s->latency_n = (int64_t)a.n;
	s->p50_ms = percentile(a.all, a.n, 50);
	s->p99_ms = percentile(a.all, a.n, 99);
	for (i = 0; i < STORE_CONSOLE_HOURS; i++) {
		qsort(a.hv[i], a.hn[i], sizeof(*a.hv[i]), cmp_i64);
		s->hour[i].p50_ms = percentile(a.hv[i], a.hn[i], 50);
		s->hour[i].p99_ms = percentile(a.hv[i], a.hn[i], 99);
	}
out:
	free(a.all);
	for (i = 0; i < STORE_CONSOLE_HOURS; i++)
		free(a.hv[i]);
	return rc;
}

int
store_console_size(struct store *st, int64_t *bytes, char *err,
    size_t errlen)
{
	*bytes = 0;
	return st->ops->console_size(st, bytes, err, errlen);
}

/* One window's rows, passed on to the caller's fn. */
struct window_acc {
	store_row_fn	 fn;
	void		*arg;
	long		 got;
	int64_t		 last;
};

static int
window_row(void *arg, const struct store_row *row)
{
	struct window_acc *w = arg;

	w->got++;
	w->last = row->rowid;
	return w->fn(w->arg, row);
}

int
store_console_list(struct store *st, const struct store_console_query *q,
    store_row_fn fn, void *arg, int64_t *next_before, char *err,
    size_t errlen)
{
	struct window_acc w;
	int64_t minid, maxid, hi, lo;
	long scanned = 0;
	int rc, empty;

	*next_before = 0;
	if (q->page < 1 || q->page > STORE_CONSOLE_PAGE_MAX)
		return IH_EINVAL;
	rc = st->ops->console_bounds(st, &empty, &minid, &maxid, err, errlen);
	if (rc != IH_OK || empty)
		return rc;
	hi = q->before_id > 0 && q->before_id <= maxid ? q->before_id :
	    maxid + 1;
	memset(&w, 0, sizeof(w));
	w.fn = fn;
	w.arg = arg;
	while (w.got < q->page && hi > minid) {
		if (scanned >= STORE_CONSOLE_SCAN_MAX) {
			*next_before = hi;
			return IH_OK;
		}
		lo = hi - STORE_CONSOLE_WINDOW;
		rc = st->ops->console_window(st, q, hi, lo, q->page - w.got,
		    window_row, &w, err, errlen);
		if (rc != IH_OK)
			return rc;
		scanned += STORE_CONSOLE_WINDOW;
		hi = w.got >= q->page ? w.last : lo;
	}
	if (hi > minid)
		*next_before = hi;
	return IH_OK;
}

int
store_console_last_received(struct store *st, const char *provider,
    int64_t *ms, char *err, size_t errlen)
{
	*ms = 0;
	return st->ops->console_last(st, provider, ms, err, errlen);
}

int
store_console_last_of_type(struct store *st, const char *provider,
    const char *event_type, int64_t *ms, char *err, size_t errlen)
{
	*ms = 0;
	return st->ops->console_last_type(st, provider, event_type, ms, err,
	    errlen);
}

int
store_plan_line(char *buf, size_t len, size_t *used, const char *name,
    const char *line)
{
	int n;

	n = snprintf(buf + *used, len - *used, "%s: %s\n", name, line);
	if (n < 0 || (size_t)n >= len - *used)
		return IH_ETOOBIG;
	*used += (size_t)n;
	return IH_OK;
}

int
store_console_explain(struct store *st, char *buf, size_t len, char *err,
    size_t errlen)
{
	if (len == 0)
		return IH_EINVAL;
	buf[0] = '\0';
	return st->ops->console_explain(st, buf, len, err, errlen);
}
