/*
 * cli_args.c -- the idemhook command's one argument parser: options,
 * numbers, times, event filters and provider names.  See cli_args.h.
 */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli_args.h"
#include "cli_text.h"
#include "idemhook.h"
#include "providers.h"

int
cli_opt(int argc, char **argv, int *a, const char *name, const char **val)
{
	const char *arg = argv[*a];
	size_t len = strlen(name);

	if (strncmp(arg, name, len) != 0)
		return 0;
	if (arg[len] == '=') {
		*val = arg + len + 1;
		return 1;
	}
	if (arg[len] != '\0')
		return 0;
	if (*a + 1 >= argc) {
		cli_errorf("%s needs a value", name);
		return -1;
	}
	*val = argv[++*a];
	return 1;
}

int
cli_globals_after(int argc, char **argv, int from, const char **config,
    const char **db)
{
	const char *v, **dst;
	int a, start, out = from, r;

	for (a = from; a < argc; a++) {
		if (strcmp(argv[a], "--") == 0) {
			while (a < argc)
				argv[out++] = argv[a++];
			break;
		}
		start = a;
		dst = config;
		r = cli_opt(argc, argv, &a, "--config", &v);
		if (r == 0) {
			dst = db;
			r = cli_opt(argc, argv, &a, "--db", &v);
		}
		if (r < 0)
			return -1;
		if (r == 0) {
			argv[out++] = argv[a];
			continue;
		}
		if (*dst != NULL) {
			cli_errorf("%.*s given twice", (int)strcspn(argv[start],
			    "="), argv[start]);
			return -1;
		}
		*dst = v;
	}
	argv[out] = NULL;
	return out;
}

int
cli_parse_long(const char *s, long min, long max, long *out)
{
	char *end;
	long long v;

	if (s == NULL || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < min || v > max)
		return -1;
	*out = (long)v;
	return 0;
}

/* Reads exactly n digits at *p into *v, moving *p on; 0 or -1. */
static int
digits(const char **p, int n, int *v)
{
	int i;

	*v = 0;
	for (i = 0; i < n; i++) {
		if ((*p)[i] < '0' || (*p)[i] > '9')
			return -1;
		*v = *v * 10 + ((*p)[i] - '0');
	}
	*p += n;
	return 0;
}

/* "YYYY-MM-DD[(T| )HH:MM[:SS]][Z]" in UTC. */
static int
parse_iso(const char *s, int64_t *out)
{
	struct tm tm;
	const char *p = s;
	int y, mo, d, h = 0, mi = 0, se = 0;
	time_t t;

	if (digits(&p, 4, &y) != 0 || *p++ != '-' ||
	    digits(&p, 2, &mo) != 0 || *p++ != '-' ||
	    digits(&p, 2, &d) != 0)
		return -1;
	if (*p == 'T' || *p == ' ') {
		p++;
		if (digits(&p, 2, &h) != 0 || *p++ != ':' ||
		    digits(&p, 2, &mi) != 0)
			return -1;
		if (*p == ':') {
			p++;
			if (digits(&p, 2, &se) != 0)
				return -1;
		}
	}
	if (*p == 'Z')
		p++;
	if (*p != '\0' || y < 1970 || mo < 1 || mo > 12 || d < 1 ||
	    d > 31 || h > 23 || mi > 59 || se > 60)
		return -1;
	memset(&tm, 0, sizeof(tm));
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = se;
	t = timegm(&tm);
	if (t == (time_t)-1)
		return -1;
	*out = (int64_t)t * 1000;
	return 0;
}

int
cli_parse_time(const char *s, int64_t now_ms, int64_t *out)
{
	char num[24];
	size_t len;
	long v, unit;

	if (s == NULL || *s == '\0')
		return -1;
	if (strchr(s, '-') != NULL)
		return parse_iso(s, out);
	len = strlen(s);
	if (len >= sizeof(num))
		return -1;
	switch (s[len - 1]) {
	case 's':
		unit = 1;
		break;
	case 'm':
		unit = 60;
		break;
	case 'h':
		unit = 3600;
		break;
	case 'd':
		unit = 86400;
		break;
	default:
		/* Unix seconds, up to the year 9999. */
		if (cli_parse_long(s, 0, 253402300799L, &v) != 0)
			return -1;
		*out = (int64_t)v * 1000;
		return 0;
	}
	memcpy(num, s, len - 1);
	num[len - 1] = '\0';
	if (cli_parse_long(num, 0, 36500L * 86400 / unit, &v) != 0)
		return -1;
	*out = now_ms - (int64_t)v * unit * 1000;
	return 0;
}

void
cli_format_time(int64_t ms, char *buf, size_t len)
{
	struct tm tm;
	time_t t = (time_t)(ms / 1000);

	if (ms <= 0 || gmtime_r(&t, &tm) == NULL ||
	    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		snprintf(buf, len, "-");
}

/* Checks that status names one of the schema's states. */
static int
valid_status(const char *status)
{
	static const char *const statuses[] = { "received", "processing",
	    "done", "failed", "dead", "quarantined", "held", NULL };
	size_t i;

	for (i = 0; statuses[i] != NULL; i++)
		if (strcmp(status, statuses[i]) == 0)
			return 1;
	cli_errorf("--status %s: give received, processing, done, failed, "
	    "dead, quarantined or held", status);
	return 0;
}

int
cli_filter_opt(int argc, char **argv, int *a, int64_t now_ms,
    struct store_filter *f)
{
	const char *v;
	int64_t *when = NULL;
	int r;

	r = cli_opt(argc, argv, a, "--provider", &f->provider);
	if (r != 0)
		return r > 0 && cli_provider_index(f->provider) < 0 ? -1 : r;
	r = cli_opt(argc, argv, a, "--type", &f->event_type);
	if (r != 0)
		return r;
	r = cli_opt(argc, argv, a, "--status", &f->status);
	if (r != 0)
		return r > 0 && !valid_status(f->status) ? -1 : r;
	r = cli_opt(argc, argv, a, "--limit", &v);
	if (r > 0 && cli_parse_long(v, 1, 100000000L, &f->limit) != 0) {
		fprintf(stderr, "idemhook: --limit takes a number from 1\n");
		return -1;
	}
	if (r != 0)
		return r;
	r = cli_opt(argc, argv, a, "--since", &v);
	if (r > 0)
		when = &f->since_ms;
	else if (r == 0) {
		r = cli_opt(argc, argv, a, "--until", &v);
		when = &f->until_ms;
	}
	if (r > 0 && cli_parse_time(v, now_ms, when) != 0) {
		cli_errorf("%s: not a time: give Unix seconds, "
		    "an ISO date in UTC (2024-05-01, 2024-05-01T12:00:00Z) "
		    "or an age (90m, 24h, 7d)", v);
		return -1;
	}
	return r;
}

int
cli_provider_index(const char *name)
{
	char known[256];
	size_t off = 0;
	int i, n;

	for (i = 0; providers_all[i] != NULL; i++)
		if (strcmp(providers_all[i]->name, name) == 0)
			return i;
	known[0] = '\0';
	for (i = 0; providers_all[i] != NULL && off < sizeof(known); i++) {
		n = snprintf(known + off, sizeof(known) - off, " %s",
		    providers_all[i]->name);
		off += n > 0 ? (size_t)n : 0;
	}
	cli_errorf("no provider called %s; known:%s", name, known);
	return -1;
}

int
cli_help_or_usage(const char *arg, void (*usage)(FILE *))
{
	if (strcmp(arg, "--help") == 0) {
		usage(stdout);
		return CLI_EXIT_OK;
	}
	usage(stderr);
	return CLI_EXIT_USAGE;
}
