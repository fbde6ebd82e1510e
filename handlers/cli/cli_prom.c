/* cli_prom.c -- idemhook stats: Prometheus lines, waiting and attempts. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "account_name.h"
#include "cli_prom.h"
#include "cli_text.h"
#include "store.h"

void
cli_prom_label(const char *s)
{
	const char *run = s;

	for (; *s != '\0'; s++) {
		if (*s != '\\' && *s != '"' && *s != '\n')
			continue;
		cli_put_text(stdout, run, (size_t)(s - run), 0);
		printf("\\%c", *s == '\n' ? 'n' : *s);
		run = s + 1;
	}
	cli_put_text(stdout, run, (size_t)(s - run), 0);
}

void
cli_prom_head(const char *name, const char *type, const char *help)
{
	printf("# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* account: its label, left out for the default one (as before accounts). */
void
cli_prom_value(const char *name, const char *provider, const char *account,
    const char *label, const char *value, double v)
{
	printf("%s{provider=\"", name);
	cli_prom_label(provider);
	printf("\"");
	if (account != NULL && strcmp(account, ACCOUNT_DEFAULT) != 0) {
		printf(",account=\"");
		cli_prom_label(account);
		printf("\"");
	}
	if (label != NULL)
		printf(",%s=\"%s\"", label, value);
	if (isnan(v))
		printf("} NaN\n");
	else if (v == (double)(int64_t)v && v < 9007199254740992.0)
		printf("} %.0f\n", v);
	else
		printf("} %.9g\n", v);
}

void
cli_waiting_json(const struct store_stats *x)
{
	printf("\"waiting\": {\"order\": %lld, \"retry\": %lld, "
	    "\"paused\": %lld, \"concurrency\": %lld, \"rate\": %lld}, ",
	    (long long)x->wait_order, (long long)x->wait_retry,
	    (long long)x->wait_paused, (long long)x->wait_concurrency,
	    (long long)x->wait_rate);
	if (x->forward_paused < 0)
		printf("\"forward_paused\": null, ");
	else
		printf("\"forward_paused\": %s, ", x->forward_paused ? "true" :
		    "false");
	printf("\"attempts\": {\"count\": %lld, ", (long long)x->attempt_n);
	if (x->attempt_p50_ms < 0)
		printf("\"p50\": null, \"p99\": null}, ");
	else
		printf("\"p50\": %lld, \"p99\": %lld}, ",
		    (long long)x->attempt_p50_ms,
		    (long long)x->attempt_p99_ms);
}

void
cli_waiting_prom(const struct store_stats *s, size_t n)
{
	size_t i;

	cli_prom_head("idemhook_waiting_events", "gauge", "Pending events "
	    "waiting, of any age, by why: behind an earlier event of their "
	    "object (order), for a retry (retry), or held back by their "
	    "forwarding destination (paused, concurrency, rate).");
	for (i = 0; i < n; i++) {
		cli_prom_value("idemhook_waiting_events", s[i].provider,
		    s[i].account, "reason", "order", (double)s[i].wait_order);
		cli_prom_value("idemhook_waiting_events", s[i].provider,
		    s[i].account, "reason", "retry", (double)s[i].wait_retry);
		cli_prom_value("idemhook_waiting_events", s[i].provider,
		    s[i].account, "reason", "paused",
		    (double)s[i].wait_paused);
		cli_prom_value("idemhook_waiting_events", s[i].provider,
		    s[i].account, "reason", "concurrency",
		    (double)s[i].wait_concurrency);
		cli_prom_value("idemhook_waiting_events", s[i].provider,
		    s[i].account, "reason", "rate", (double)s[i].wait_rate);
	}
	cli_prom_head("idemhook_forward_paused", "gauge", "1 while the "
	    "forwarding destination is paused (its probe alone is "
	    "delivered), 0 otherwise; no sample when not forwarded.");
	for (i = 0; i < n; i++)
		if (s[i].forward_paused >= 0)
			cli_prom_value("idemhook_forward_paused",
			    s[i].provider, s[i].account, NULL, NULL,
			    (double)s[i].forward_paused);
	cli_prom_head("idemhook_attempt_duration_seconds", "summary",
	    "Durations of the attempts started in the window (a forwarded "
	    "event's: its delivery).");
	for (i = 0; i < n; i++) {
		cli_prom_value("idemhook_attempt_duration_seconds",
		    s[i].provider, s[i].account, "quantile", "0.5",
		    s[i].attempt_p50_ms < 0 ? NAN :
		    (double)s[i].attempt_p50_ms / 1000.0);
		cli_prom_value("idemhook_attempt_duration_seconds",
		    s[i].provider, s[i].account, "quantile", "0.99",
		    s[i].attempt_p99_ms < 0 ? NAN :
		    (double)s[i].attempt_p99_ms / 1000.0);
		cli_prom_value("idemhook_attempt_duration_seconds_count",
		    s[i].provider, s[i].account, NULL, NULL,
		    (double)s[i].attempt_n);
	}
}

void
cli_waiting_table(const struct store_stats *s, size_t n, int width)
{
	char p50[24], p99[24];
	size_t i, len;

	printf("\nwaiting (pending, any age) and attempts (started in the "
	    "window)\n%-*s %10s %10s %10s %9s %9s %8s %8s %8s %8s\n", width,
	    "PROVIDER", "WAIT-ORDER", "WAIT-RETRY", "WAIT-PAUSE", "WAIT-CONC",
	    "WAIT-RATE", "FORWARD", "ATTEMPTS", "P50", "P99");
	for (i = 0; i < n; i++) {
		snprintf(p50, sizeof(p50), "-");
		snprintf(p99, sizeof(p99), "-");
		if (s[i].attempt_p50_ms >= 0) {
			snprintf(p50, sizeof(p50), "%lldms",
			    (long long)s[i].attempt_p50_ms);
			snprintf(p99, sizeof(p99), "%lldms",
			    (long long)s[i].attempt_p99_ms);
		}
		len = cli_clean_width(s[i].provider);
		cli_put_clean(stdout, s[i].provider);
		if (strcmp(s[i].account, ACCOUNT_DEFAULT) != 0) {
			printf("/");
			cli_put_clean(stdout, s[i].account);
			len += 1 + cli_clean_width(s[i].account);
		}
		printf("%*s%10lld %10lld %10lld %9lld %9lld %8s %8lld %8s "
		    "%8s\n", (int)((size_t)width + 1 > len ? (size_t)width +
		    1 - len : 1), "", (long long)s[i].wait_order,
		    (long long)s[i].wait_retry, (long long)s[i].wait_paused,
		    (long long)s[i].wait_concurrency,
		    (long long)s[i].wait_rate,
		    s[i].forward_paused < 0 ? "-" : s[i].forward_paused ?
		    "paused" : "running", (long long)s[i].attempt_n, p50, p99);
	}
}
