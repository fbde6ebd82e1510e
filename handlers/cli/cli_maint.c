/*
 * cli_maint.c -- retention and figures: idemhook purge and stats.
 *
 * Retention keeps two promises at once: payloads (personal data) go
 * after IDEMHOOK_RETENTION_DAYS (dead letters only with --include-dead,
 * so that none vanishes before someone looked at it), while each event's
 * (provider, event_id) row stays as a tombstone for at least the
 * provider's redelivery window, so that a late redelivery is still
 * answered as a duplicate rather than processed twice.
 */
#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "account.h"
#include "cli_args.h"
#include "cli_maint.h"
#include "cli_prom.h"
#include "cli_sigfails.h"
#include "cli_text.h"
#include "clock.h"
#include "ih.h"
#include "providers.h"
#include "store.h"
#include "store_version.h"

#define DAY_MS			(86400LL * 1000)
#define PURGE_DEFAULT_PAYLOAD	30
#define PURGE_DEFAULT_TOMBSTONE	30
#define PURGE_MAX_DAYS		36500
/* Providers times accounts (one row each). */
#define STATS_MAX		1024

/*
 * How long each provider may redeliver an event: Stripe resends by hand
 * for 30 days, Asaas keeps events 14 days, GitHub redelivers by hand for
 * 30 days.  Others take PURGE_DEFAULT_TOMBSTONE.
 */
static const struct {
	const char	*provider;
	long		 days;
} tombstone_days[] = {
	{ "stripe", 30 },
	{ "asaas", 14 },
	{ "github", 30 },
};

static long
builtin_tombstone(const char *provider)
{
	size_t i;

	for (i = 0; i < sizeof(tombstone_days) / sizeof(tombstone_days[0]);
	    i++)
		if (strcmp(tombstone_days[i].provider, provider) == 0)
			return tombstone_days[i].days;
	return PURGE_DEFAULT_TOMBSTONE;
}

/*
 * Reads IDEMHOOK_<PROVIDER>_<key>, else IDEMHOOK_<key>, as days into
 * *days (unchanged when neither is set); "forever" is -1 when allowed.
 * Returns 0, or -1 with the cause printed.
 */
static int
days_setting(struct cli *c, const char *provider, const char *key,
    long min, int forever, long *days)
{
	char name[128], up[64];
	const char *v;
	size_t i;

	for (i = 0; provider[i] != '\0' && i + 1 < sizeof(up); i++)
		up[i] = (char)toupper((unsigned char)provider[i]);
	up[i] = '\0';
	snprintf(name, sizeof(name), "IDEMHOOK_%s_%s", up, key);
	v = cli_setting(c, name);
	if (v == NULL) {
		snprintf(name, sizeof(name), "IDEMHOOK_%s", key);
		v = cli_setting(c, name);
	}
	if (v == NULL)
		return 0;
	if (forever && strcmp(v, "forever") == 0) {
		*days = -1;
		return 0;
	}
	if (cli_parse_long(v, min, PURGE_MAX_DAYS, days) != 0) {
		cli_errorf("purge: %s=%s: give days from %ld to %d%s", name, v,
		    min, PURGE_MAX_DAYS,
		    forever ? ", or forever" : "");
		return -1;
	}
	return 0;
}

static void
purge_usage(FILE *f)
{
	fprintf(f, "usage: idemhook purge [--provider NAME] "
	    "[--payload-days N] [--include-dead]\n"
	    "                     [--dry-run]\n\n"
	    "Applies retention to done and quarantined events (others are "
	    "never\ntouched; dead letters stay whole until replayed):\n"
	    "  - drops the payload of events received more than N days ago\n"
	    "    (--payload-days, else IDEMHOOK_<PROVIDER>_RETENTION_DAYS,\n"
	    "    IDEMHOOK_RETENTION_DAYS, default %d; 0 drops every finished "
	    "payload);\n"
	    "  - deletes the row once also last seen longer ago than the "
	    "provider's\n"
	    "    redelivery window (IDEMHOOK_<PROVIDER>_TOMBSTONE_DAYS, "
	    "IDEMHOOK_TOMBSTONE_DAYS,\n"
	    "    default Stripe 30, GitHub 30, Asaas 14, others %d; "
	    "\"forever\" keeps rows),\n"
	    "    so that a late redelivery is still answered duplicate.\n"
	    "Works in short transactions: safe from cron while the "
	    "receivers run.\n"
	    "  --include-dead  purge dead events on the same schedule "
	    "(they are lost\n                  for replay)\n"
	    "  --dry-run       count what would go, change nothing\n",
	    PURGE_DEFAULT_PAYLOAD, PURGE_DEFAULT_TOMBSTONE);
}

int
cli_purge(struct cli *c, int argc, char **argv)
{
	struct store_purge p;
	struct store *st;
	const char *only = NULL, *v;
	char err[STORE_ERR_MAX], t1[CLI_TIME_MAX], t2[CLI_TIME_MAX];
	long payload_days, row_days, cli_days = -1;
	int64_t now = clock_wall_ms();
	int a, r, dry_run = 0, include_dead = 0, i, status = CLI_EXIT_OK;

	for (a = 1; a < argc; a++) {
		r = cli_opt(argc, argv, &a, "--provider", &only);
		if (r == 0)
			r = cli_opt(argc, argv, &a, "--payload-days", &v) * 2;
		if (r < 0)
			return CLI_EXIT_USAGE;
		if (r == 1 && cli_provider_index(only) < 0)
			return CLI_EXIT_USAGE;
		if (r == 2 && cli_parse_long(v, 0, PURGE_MAX_DAYS,
		    &cli_days) != 0) {
			fprintf(stderr, "idemhook: purge: --payload-days "
			    "takes days from 0 to %d\n", PURGE_MAX_DAYS);
			return CLI_EXIT_USAGE;
		}
		if (r > 0)
			continue;
		if (strcmp(argv[a], "--dry-run") == 0)
			dry_run = 1;
		else if (strcmp(argv[a], "--include-dead") == 0)
			include_dead = 1;
		else
			return cli_help_or_usage(argv[a], purge_usage);
	}
	if (cli_store(c, &st) != IH_OK)
		return CLI_EXIT_FAIL;
	for (i = 0; providers_all[i] != NULL; i++) {
		if (only != NULL && strcmp(only, providers_all[i]->name) != 0)
			continue;
		payload_days = PURGE_DEFAULT_PAYLOAD;
		row_days = builtin_tombstone(providers_all[i]->name);
		if (days_setting(c, providers_all[i]->name, "RETENTION_DAYS",
		    0, 0, &payload_days) != 0 ||
		    days_setting(c, providers_all[i]->name, "TOMBSTONE_DAYS",
		    1, 1, &row_days) != 0)
			return CLI_EXIT_USAGE;
		if (cli_days >= 0)
			payload_days = cli_days;
		if (row_days >= 0 &&
		    row_days < builtin_tombstone(providers_all[i]->name))
			fprintf(stderr, "idemhook: purge: warning: %s rows "
			    "kept %ld days, less than its %ld-day redelivery "
			    "window: a later redelivery would be processed "
			    "again\n", providers_all[i]->name, row_days,
			    builtin_tombstone(providers_all[i]->name));
		memset(&p, 0, sizeof(p));
		p.provider = providers_all[i]->name;
		p.account = c->account;
		p.payload_before_ms = now - payload_days * DAY_MS;
		p.row_before_ms = row_days < 0 ? 0 : now - row_days * DAY_MS;
		p.batch = 500;
		p.dry_run = dry_run;
		p.include_dead = include_dead;
		if (store_purge(st, &p, err, sizeof(err)) != IH_OK) {
			cli_errorf("purge: %s: %s", p.provider, err);
			status = CLI_EXIT_FAIL;
			continue;
		}
		cli_format_time(p.payload_before_ms, t1, sizeof(t1));
		cli_format_time(p.row_before_ms, t2, sizeof(t2));
		printf("%s: %s %ld payload(s) received before %s (%ld d); "
		    "%s %ld row(s) last seen before %s (%s%ld d)\n",
		    p.provider, dry_run ? "would drop" : "dropped",
		    p.payloads, t1, payload_days,
		    dry_run ? "would delete" : "deleted", p.rows,
		    row_days < 0 ? "never" : t2,
		    row_days < 0 ? "kept forever, " : "",
		    row_days < 0 ? 0 : row_days);
		if (p.dead_kept > 0)
			printf("%s: kept %ld dead event(s) received before %s: "
			    "replay them (idemhook list --status dead "
			    "--provider %s), or purge with --include-dead\n",
			    p.provider, p.dead_kept, t1, p.provider);
	}
	return status;
}

/* --------------------------------------------------------------- stats */

struct stats_state {
	const char		*account;	/* --account, or NULL */
	size_t			n;
	struct store_stats	s[STATS_MAX];
};

static int
stats_add(void *arg, const struct store_stats *x)
{
	struct stats_state *ss = arg;

	if (ss->account != NULL && strcmp(ss->account, x->account) != 0)
		return IH_OK;
	if (ss->n >= STATS_MAX)
		return IH_ETOOBIG;
	ss->s[ss->n++] = *x;
	return IH_OK;
}

static double
dup_rate(const struct store_stats *x)
{
	int64_t deliveries = x->events + x->duplicates;

	return deliveries > 0 ? (double)x->duplicates / (double)deliveries :
	    0.0;
}

static void
json_ms(const char *name, int64_t v, int none_below_zero, const char *sep)
{
	if (none_below_zero && v < 0)
		printf("\"%s\": null%s", name, sep);
	else
		printf("\"%s\": %lld%s", name, (long long)v, sep);
}

static void
stats_json(const struct stats_state *ss, int64_t since, int64_t until,
    int64_t now)
{
	const struct store_stats *x;
	size_t i;

	printf("{\"since\": %lld, \"until\": %lld, \"providers\": [",
	    (long long)since, (long long)until);
	for (i = 0; i < ss->n; i++) {
		x = &ss->s[i];
		printf("%s\n  {\"provider\": ", i > 0 ? "," : "");
		cli_put_json(stdout, x->provider);
		printf(", \"account\": ");
		cli_put_json(stdout, x->account);
		printf(", \"received\": %lld, \"duplicates\": %lld, "
		    "\"duplicate_rate\": %.6f,\n   \"status\": {"
		    "\"received\": %lld, \"processing\": %lld, \"done\": %lld, "
		    "\"failed\": %lld, \"dead\": %lld, "
		    "\"quarantined\": %lld},\n"
		    "   \"latency_ms\": {\"count\": %lld, ",
		    (long long)x->events, (long long)x->duplicates,
		    dup_rate(x), (long long)x->received,
		    (long long)x->processing, (long long)x->done,
		    (long long)x->failed, (long long)x->dead,
		    (long long)x->quarantined, (long long)x->latency_n);
		json_ms("p50", x->p50_ms, 1, ", ");
		json_ms("p95", x->p95_ms, 1, ", ");
		json_ms("p99", x->p99_ms, 1, "},\n   ");
		printf("\"pending\": %lld, \"held\": %lld, ",
		    (long long)x->pending, (long long)x->held);
		cli_waiting_json(x);
		if (x->oldest_pending_ms > 0)
			printf("\"oldest_pending_at\": %lld, "
			    "\"oldest_pending_age_s\": %lld}",
			    (long long)x->oldest_pending_ms,
			    (long long)((now - x->oldest_pending_ms) / 1000));
		else
			printf("\"oldest_pending_at\": null, "
			    "\"oldest_pending_age_s\": null}");
	}
	/* The object is closed after its "versions" (versions_print()). */
	printf("\n]");
}

static void
stats_prometheus(const struct stats_state *ss, int64_t since, int64_t until,
    int64_t now)
{
	static const char *const states[] = { "received", "processing",
	    "done", "failed", "dead", "quarantined" };
	static const char *const quantiles[] = { "0.5", "0.95", "0.99" };
	const struct store_stats *x;
	double q[3];
	int64_t by[6];
	size_t i, j;

	cli_prom_head("idemhook_window_seconds", "gauge",
	    "Length of the window the other figures cover.");
	printf("idemhook_window_seconds %.3f\n",
	    (double)(until - since) / 1000.0);
	cli_prom_head("idemhook_events_total", "gauge", "Events first received "
	    "in the window, by their status now.");
	for (i = 0; i < ss->n; i++) {
		x = &ss->s[i];
		by[0] = x->received;
		by[1] = x->processing;
		by[2] = x->done;
		by[3] = x->failed;
		by[4] = x->dead;
		by[5] = x->quarantined;
		for (j = 0; j < 6; j++)
			cli_prom_value("idemhook_events_total", x->provider,
			    x->account, "status", states[j], (double)by[j]);
	}
	cli_prom_head("idemhook_duplicates_total", "gauge", "Redeliveries of "
	    "events first received in the window.");
	for (i = 0; i < ss->n; i++)
		cli_prom_value("idemhook_duplicates_total", ss->s[i].provider,
		    ss->s[i].account, NULL, NULL,
		    (double)ss->s[i].duplicates);
	cli_prom_head("idemhook_duplicate_ratio", "gauge", "Share of "
	    "deliveries in the window that were duplicates.");
	for (i = 0; i < ss->n; i++)
		cli_prom_value("idemhook_duplicate_ratio", ss->s[i].provider,
		    ss->s[i].account, NULL, NULL, dup_rate(&ss->s[i]));
	cli_prom_head("idemhook_processing_latency_seconds", "summary",
	    "From receipt to done, for done events received in the window.");
	for (i = 0; i < ss->n; i++) {
		x = &ss->s[i];
		q[0] = x->p50_ms < 0 ? NAN : (double)x->p50_ms / 1000.0;
		q[1] = x->p95_ms < 0 ? NAN : (double)x->p95_ms / 1000.0;
		q[2] = x->p99_ms < 0 ? NAN : (double)x->p99_ms / 1000.0;
		for (j = 0; j < 3; j++)
			cli_prom_value("idemhook_processing_latency_seconds",
			    x->provider, x->account, "quantile",
			    quantiles[j], q[j]);
		cli_prom_value("idemhook_processing_latency_seconds_sum",
		    x->provider, x->account, NULL, NULL,
		    (double)x->latency_sum_ms / 1000.0);
		cli_prom_value("idemhook_processing_latency_seconds_count",
		    x->provider, x->account, NULL, NULL,
		    (double)x->latency_n);
	}
	cli_prom_head("idemhook_pending_events", "gauge", "Events received, "
	    "processing or failed, of any age.");
	for (i = 0; i < ss->n; i++)
		cli_prom_value("idemhook_pending_events", ss->s[i].provider,
		    ss->s[i].account, NULL, NULL, (double)ss->s[i].pending);
	cli_prom_head("idemhook_held_now_events", "gauge", "Events held, of "
	    "any age: processed only once released.");
	for (i = 0; i < ss->n; i++)
		cli_prom_value("idemhook_held_now_events", ss->s[i].provider,
		    ss->s[i].account, NULL, NULL, (double)ss->s[i].held);
	cli_waiting_prom(ss->s, ss->n);
	cli_prom_head("idemhook_oldest_pending_age_seconds", "gauge", "Age of "
	    "the oldest pending event; 0 when none.");
	for (i = 0; i < ss->n; i++)
		cli_prom_value("idemhook_oldest_pending_age_seconds",
		    ss->s[i].provider, ss->s[i].account, NULL, NULL,
		    ss->s[i].oldest_pending_ms > 0 ?
		    (double)(now - ss->s[i].oldest_pending_ms) / 1000.0 : 0.0);
}

static void
ms_cell(char *buf, size_t len, int64_t ms)
{
	if (ms < 0)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%lldms", (long long)ms);
}

/* The width of a row's first cell: provider, or provider/account. */
static size_t
stats_name_len(const struct store_stats *x)
{
	size_t len = cli_clean_width(x->provider);

	if (strcmp(x->account, ACCOUNT_DEFAULT) != 0)
		len += 1 + cli_clean_width(x->account);
	return len;
}

/*
 * The first column's width: the longest name, at least 10, so that the
 * columns after it line up whether accounts are shown or not.
 */
static int
stats_name_width(const struct stats_state *ss)
{
	size_t i, w = 10;

	for (i = 0; i < ss->n; i++)
		if (stats_name_len(&ss->s[i]) > w)
			w = stats_name_len(&ss->s[i]);
	return (int)w;
}

static void
stats_table(const struct stats_state *ss, int64_t since, int64_t until)
{
	const struct store_stats *x;
	char a[CLI_TIME_MAX], b[CLI_TIME_MAX], p50[24], p95[24], p99[24];
	size_t i;
	int width = stats_name_width(ss);

	cli_format_time(since, a, sizeof(a));
	cli_format_time(until, b, sizeof(b));
	printf("events received from %s to %s (pending: any age)\n\n", a, b);
	printf("%-*s %8s %6s %6s %6s %6s %6s %6s %7s %6s %8s %8s %8s  %s\n",
	    width, "PROVIDER", "RECEIVED", "DUPS", "DUP%", "DONE", "FAILED",
	    "DEAD", "QUAR", "PENDING", "HELD", "P50", "P95", "P99",
	    "OLDEST PENDING");
	for (i = 0; i < ss->n; i++) {
		x = &ss->s[i];
		ms_cell(p50, sizeof(p50), x->p50_ms);
		ms_cell(p95, sizeof(p95), x->p95_ms);
		ms_cell(p99, sizeof(p99), x->p99_ms);
		cli_format_time(x->oldest_pending_ms, a, sizeof(a));
		cli_put_clean(stdout, x->provider);
		/* An account's row: provider/account (account.h). */
		if (strcmp(x->account, ACCOUNT_DEFAULT) != 0) {
			printf("/");
			cli_put_clean(stdout, x->account);
		}
		printf("%*s", width + 1 - (int)stats_name_len(x), "");
		printf("%8lld %6lld %5.1f%% %6lld %6lld %6lld %6lld %7lld "
		    "%6lld %8s %8s %8s  %s\n", (long long)x->events,
		    (long long)x->duplicates, dup_rate(x) * 100.0,
		    (long long)x->done, (long long)x->failed,
		    (long long)x->dead, (long long)x->quarantined,
		    (long long)x->pending, (long long)x->held, p50, p95, p99,
		    a);
	}
	if (ss->n == 0)
		printf("(no events)\n");
	else
		cli_waiting_table(ss->s, ss->n, width);
}

/* How versions_row() prints: a table, JSON or Prometheus. */
enum ver_mode {
	VER_TABLE,
	VER_JSON,
	VER_PROM_EVENTS,
	VER_PROM_HELD
};

struct ver_state {
	enum ver_mode	mode;
	long		n;
};

static int
versions_row(void *arg, const struct store_version_count *c)
{
	struct ver_state *vs = arg;
	const char *v = c->api_version != NULL ? c->api_version : "";
	size_t len;

	if (vs->mode == VER_JSON) {
		printf("%s\n  {\"provider\": ", vs->n > 0 ? "," : "");
		cli_put_json(stdout, c->provider);
		printf(", \"api_version\": ");
		if (c->api_version != NULL)
			cli_put_json(stdout, c->api_version);
		else
			printf("null");
		printf(", \"events\": %lld, \"held\": %lld}",
		    (long long)c->events, (long long)c->held);
	} else if (vs->mode == VER_PROM_EVENTS)
		cli_prom_value("idemhook_events_by_version_total", c->provider,
		    NULL, "api_version", v, (double)c->events);
	else if (vs->mode == VER_PROM_HELD)
		cli_prom_value("idemhook_held_events", c->provider, NULL,
		    "api_version", v, (double)c->held);
	else {
		len = cli_clean_width(c->provider);
		cli_put_clean(stdout, c->provider);
		printf("%*s", (int)(len < 10 ? 11 - len : 1), "");
		len = cli_clean_width(*v != '\0' ? v : "-");
		cli_put_clean(stdout, *v != '\0' ? v : "-");
		printf("%*s", (int)(len < 24 ? 25 - len : 1), "");
		printf("%8lld %6lld\n", (long long)c->events,
		    (long long)c->held);
	}
	vs->n++;
	return IH_OK;
}

/*
 * The events of the window by API version (issue 30), after the figures
 * per provider: a table, the "versions" of the JSON object (which it
 * closes), or two Prometheus families.
 */
static int
versions_print(struct store *st, const char *provider, int64_t since,
    int64_t until, int json, int prom, char *err, size_t errlen)
{
	struct ver_state vs;
	int rc;

	memset(&vs, 0, sizeof(vs));
	if (prom) {
		cli_prom_head("idemhook_events_by_version_total", "gauge",
		    "Events first received in the window, by API version.");
		vs.mode = VER_PROM_EVENTS;
		rc = store_versions(st, provider, since, until, versions_row,
		    &vs, err, errlen);
		if (rc != IH_OK)
			return rc;
		cli_prom_head("idemhook_held_events", "gauge", "Of those, the "
		    "events held for their version (status held).");
		vs.mode = VER_PROM_HELD;
		return store_versions(st, provider, since, until,
		    versions_row, &vs, err, errlen);
	}
	if (json)
		printf(", \"versions\": [");
	else
		printf("\nby API version\n%-10s %-24s %8s %6s\n", "PROVIDER",
		    "API VERSION", "EVENTS", "HELD");
	vs.mode = json ? VER_JSON : VER_TABLE;
	rc = store_versions(st, provider, since, until, versions_row, &vs,
	    err, errlen);
	if (json)
		printf("\n]}\n");
	return rc;
}

static void
stats_usage(FILE *f)
{
	fprintf(f, "usage: idemhook stats [--provider NAME] [--since WHEN] "
	    "[--until WHEN]\n"
	    "                      [--json | --prometheus]\n\n"
	    "Per provider, for events first received in the window (default "
	    "the last\n24 hours): received, duplicates (later deliveries) "
	    "and their share of\nall deliveries, status now (done, failed, "
	    "dead, quarantined, ...),\nprocessing latency p50/p95/p99 "
	    "(received to done, nearest rank); and, of\nany age, the pending "
	    "events and the oldest of them, and the held ones\n(HELD). Then "
	    "the events of the window by API version, and how many of\nthem "
	    "are held. Last, the deliveries refused for their signature in "
	    "the\nlast hour and the last day, whatever the window.\n"
	    "  WHEN          Unix seconds, ISO date or time in UTC, or an age "
	    "(24h, 7d)\n"
	    "  --json        one JSON object\n"
	    "  --prometheus  Prometheus text exposition format "
	    "(idemhook_events_total, ...)\n");
}

int
cli_stats(struct cli *c, int argc, char **argv)
{
	struct stats_state *ss = NULL;
	struct store_filter f;
	struct store *st;
	char err[STORE_ERR_MAX];
	int64_t now = clock_wall_ms(), since, until;
	int a, r, json = 0, prom = 0, rc, status = CLI_EXIT_FAIL;

	memset(&f, 0, sizeof(f));
	for (a = 1; a < argc; a++) {
		r = cli_filter_opt(argc, argv, &a, now, &f);
		if (r < 0)
			return CLI_EXIT_USAGE;
		if (r > 0 && (f.event_type != NULL || f.status != NULL ||
		    f.limit != 0)) {
			stats_usage(stderr);
			return CLI_EXIT_USAGE;
		}
		if (r > 0)
			continue;
		if (strcmp(argv[a], "--json") == 0)
			json = 1;
		else if (strcmp(argv[a], "--prometheus") == 0)
			prom = 1;
		else
			return cli_help_or_usage(argv[a], stats_usage);
	}
	if (json && prom) {
		fprintf(stderr, "idemhook: stats: --json or --prometheus, not "
		    "both\n");
		return CLI_EXIT_USAGE;
	}
	since = f.since_ms > 0 ? f.since_ms : now - DAY_MS;
	until = f.until_ms > 0 ? f.until_ms : now + 1;
	if (cli_store(c, &st) != IH_OK)
		return CLI_EXIT_FAIL;
	ss = calloc(1, sizeof(*ss));
	if (ss == NULL) {
		fprintf(stderr, "idemhook: stats: out of memory\n");
		return CLI_EXIT_FAIL;
	}
	ss->account = c->account;
	snprintf(err, sizeof(err), "more than %d providers and accounts",
	    STATS_MAX);
	rc = store_stats(st, f.provider, since, until, stats_add, ss, err,
	    sizeof(err));
	if (rc != IH_OK) {
		cli_errorf("stats: %s", err);
		goto out;
	}
	if (json)
		stats_json(ss, since, until, now);
	else if (prom)
		stats_prometheus(ss, since, until, now);
	else
		stats_table(ss, since, until);
	rc = cli_sigfails_print(c, st, f.provider, now, json ?
	    CLI_SIGFAILS_JSON : prom ? CLI_SIGFAILS_PROM : CLI_SIGFAILS_TABLE,
	    err, sizeof(err));
	if (rc == IH_OK)
		rc = versions_print(st, f.provider, since, until, json, prom,
		    err, sizeof(err));
	if (rc != IH_OK) {
		cli_errorf("stats: %s", err);
		goto out;
	}
	status = CLI_EXIT_OK;
out:
	free(ss);
	return status;
}
