/*
 * cli_show.c -- idemhook show: one event, its attempts, headers and
 * payload, as text, raw bytes or JSON; the signature header masked
 * unless asked for.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "cli_args.h"
#include "cli_events.h"
#include "cli_show.h"
#include "cli_text.h"
#include "clock.h"
#include "headers.h"
#include "ih.h"
#include "json.h"
#include "provider.h"
#include "providers.h"
#include "request.h"
#include "store.h"
#include "store_thin.h"

/* show's flags, in cli_event_args() order. */
enum { SHOW_RAW, SHOW_JSON, SHOW_SIGNATURES, SHOW_NFLAGS };

static const char *const show_flags[SHOW_NFLAGS + 1] = { "--raw", "--json",
    "--signatures", NULL };

struct show_state {
	struct store	*st;
	int		 flag[SHOW_NFLAGS];
	const struct provider *p;	/* or NULL */
	int		 rc;
	long		 n;	/* attempts written, for JSON commas */
	char		 err[STORE_ERR_MAX];
};

static void
show_field(const char *name, const char *value)
{
	printf("%-13s ", name);
	cli_put_clean(stdout, value != NULL ? value : "-");
	printf("\n");
}

static void
show_time(const char *name, int64_t ms)
{
	char t[CLI_TIME_MAX];

	cli_format_time(ms, t, sizeof(t));
	if (ms > 0)
		printf("%-13s %s (%lld)\n", name, t, (long long)ms);
	else
		printf("%-13s -\n", name);
}

static int
show_attempt(void *arg, const struct store_attempt *at)
{
	char s[CLI_TIME_MAX], e[CLI_TIME_MAX];

	(void)arg;
	cli_format_time(at->started_at, s, sizeof(s));
	cli_format_time(at->finished_at, e, sizeof(e));
	cli_printf(stdout, "  #%-3lld %s  %s  %-7s %s\n",
	    (long long)at->attempt, s, e,
	    at->outcome != NULL ? at->outcome : "-",
	    at->error != NULL ? at->error : "");
	return IH_OK;
}

/* Writes text of len bytes as lines, masked, ending in a newline. */
static void
show_text(const void *p, size_t len)
{
	cli_put_text(stdout, p, len, CLI_TEXT_LINES);
	if (len > 0 && ((const unsigned char *)p)[len - 1] != '\n')
		putchar('\n');
}

/* Whether the n-byte header name at h is the provider's signature header. */
static int
is_sig_header(const struct show_state *ss, const char *h, size_t n)
{
	return ss->p != NULL && ss->p->sig_header != NULL &&
	    n == strlen(ss->p->sig_header) &&
	    strncasecmp(h, ss->p->sig_header, n) == 0;
}

/*
 * Writes the stored headers.  The signature (or token) header's value is
 * masked unless asked for: with the payload next to it, it would be
 * everything a replay needs.
 */
static void
show_headers(const struct show_state *ss, const char *h)
{
	const char *end, *colon;
	size_t n;

	for (; *h != '\0'; h = *end != '\0' ? end + 1 : end) {
		end = strchr(h, '\n');
		if (end == NULL)
			end = h + strlen(h);
		colon = memchr(h, ':', (size_t)(end - h));
		n = colon != NULL ? (size_t)(colon - h) : 0;
		if (!ss->flag[SHOW_SIGNATURES] && is_sig_header(ss, h, n) &&
		    colon != NULL) {
			printf("%s: (masked; show --signatures prints it)\n",
			    ss->p->sig_header);
			continue;
		}
		show_text(h, (size_t)(end - h) + (*end == '\n'));
	}
}

static int
show_json_attempt(void *arg, const struct store_attempt *at)
{
	struct show_state *ss = arg;

	printf("%s\n    {\"attempt\": %lld, \"started_at\": %lld",
	    ss->n++ > 0 ? "," : "", (long long)at->attempt,
	    (long long)at->started_at);
	cli_json_ms(stdout, "finished_at", at->finished_at);
	cli_json_field(stdout, "outcome", at->outcome);
	cli_json_field(stdout, "error", at->error);
	putchar('}');
	return IH_OK;
}

/*
 * Writes the stored "name: value\n" lines as a JSON array of {"name",
 * "value"} objects, in their order; a line without ": " is a name with
 * an empty value.
 */
static void
show_json_headers(const struct show_state *ss, const char *headers)
{
	struct headers_field f;
	const char *pos = headers;
	int n = 0;

	putchar('[');
	while (headers_next(&pos, &f)) {
		printf("%s\n    {\"name\": ", n++ > 0 ? "," : "");
		cli_json_text(stdout, f.name, f.name_len);
		fputs(", \"value\": ", stdout);
		if (f.valued && !ss->flag[SHOW_SIGNATURES] &&
		    is_sig_header(ss, f.name, f.name_len))
			fputs("\"(masked)\"", stdout);
		else
			cli_json_text(stdout, f.value, f.value_len);
		putchar('}');
	}
	printf("%s]", n > 0 ? "\n  " : "");
}

/*
 * show --json: one object with the event's metadata (as list --json
 * gives it), its attempts, its stored headers and its payload: text when
 * the payload is well-formed UTF-8, else base64, as payload_encoding
 * says (null with the payload once purged).
 */
static int
show_json(struct show_state *ss, const struct store_row *row)
{
	int rc;

	fputs("{\"event\": ", stdout);
	cli_event_json(stdout, row);
	fputs(",\n  \"attempts\": [", stdout);
	ss->n = 0;
	rc = store_attempts(ss->st, row->rowid, show_json_attempt, ss,
	    ss->err, sizeof(ss->err));
	if (rc != IH_OK) {
		printf("]}\n");
		return rc;
	}
	printf("%s],\n  \"headers\": ", ss->n > 0 ? "\n  " : "");
	show_json_headers(ss, row->headers);
	if (row->payload == NULL)
		fputs(",\n  \"payload_encoding\": null, \"payload\": null}\n",
		    stdout);
	else if (cli_utf8_ok(row->payload, (size_t)row->payload_len)) {
		fputs(",\n  \"payload_encoding\": \"utf-8\", \"payload\": ",
		    stdout);
		cli_json_text(stdout, row->payload, (size_t)row->payload_len);
		fputs("}\n", stdout);
	} else {
		fputs(",\n  \"payload_encoding\": \"base64\", \"payload\": ",
		    stdout);
		cli_json_base64(stdout, row->payload,
		    (size_t)row->payload_len);
		fputs("}\n", stdout);
	}
	return IH_OK;
}

static int
show_row(void *arg, const struct store_row *row)
{
	struct show_state *ss = arg;
	char n[64], fetch[512];
	int own;

	if (ss->flag[SHOW_RAW]) {
		if (row->payload == NULL) {
			snprintf(ss->err, sizeof(ss->err), "the payload was "
			    "purged by retention");
			return IH_ENOTFOUND;
		}
		fwrite(row->payload, 1, (size_t)row->payload_len, stdout);
		return IH_OK;
	}
	if (ss->flag[SHOW_JSON])
		return show_json(ss, row);
	show_field("provider", row->provider);
	show_field("account", row->account);
	show_field("event_id", row->event_id);
	show_field("type", row->event_type);
	show_field("subtype", row->subtype);
	show_field("order_key", row->order_key);
	show_field("status", row->status);
	if (strcmp(row->status, "held") == 0)
		show_field("held", row->last_error != NULL ? row->last_error :
		    "its API version is not in the expected list");
	show_field("api_version", row->api_version);
	if (row->needs_fetch) {
		/* An account's events are fetched with its own key. */
		own = row->account != NULL &&
		    strcmp(row->account, "default") != 0;
		snprintf(fetch, sizeof(fetch), "waiting: a Stripe thin event, "
		    "which idemhook work fetches with IDEMHOOK_STRIPE_API_KEY"
		    "%s%s%s%s", own ? "@" : "", own ? row->account : "",
		    STORE_THIN_CAN_FETCH ? "" : "; ",
		    STORE_THIN_CAN_FETCH ? "" : STORE_THIN_NO_CLIENT);
		show_field("fetch", fetch);
	}
	show_time("received", row->received_at);
	show_time("last_seen", row->last_seen_at);
	snprintf(n, sizeof(n), "%lld", (long long)row->duplicates);
	show_field("duplicates", n);
	snprintf(n, sizeof(n), "%lld", (long long)row->attempts);
	show_field("attempts", n);
	show_time("next_attempt", row->next_attempt_at);
	show_field("lease_owner", row->lease_owner);
	show_time("lease_until", row->lease_until);
	show_time("done", row->done_at);
	show_time("purged", row->purged_at);
	show_field("last_error", row->last_error);
	printf("\nattempts:\n");
	ss->rc = store_attempts(ss->st, row->rowid, show_attempt, NULL,
	    ss->err, sizeof(ss->err));
	if (ss->rc != IH_OK)
		return ss->rc;
	printf("\nheaders:\n");
	if (*row->headers == '\0')
		printf("  (none stored)\n");
	else
		show_headers(ss, row->headers);
	if (row->payload == NULL)
		printf("\npayload: purged\n");
	else {
		printf("\npayload (%lld bytes):\n",
		    (long long)row->payload_len);
		show_text(row->payload, (size_t)row->payload_len);
	}
	return IH_OK;
}

static void
show_usage(FILE *f)
{
	fprintf(f, "usage: idemhook show [--raw | --json] [--signatures] [--] "
	    "PROVIDER EVENT_ID\n\n"
	    "Prints the event's metadata, its processing attempts, the last "
	    "error,\nthe headers stored to re-verify it, and its payload, "
	    "with control\ncharacters and bytes that are not UTF-8 shown as "
	    "\\xNN.\n"
	    "  --raw         write the payload's bytes exactly and nothing "
	    "else\n"
	    "  --json        one JSON object: event, attempts, headers, "
	    "payload (text,\n                or base64 when it is not UTF-8: "
	    "see payload_encoding)\n"
	    "  --signatures  print the signature or token header's value, "
	    "masked\n                by default\n"
	    "  --            what follows is PROVIDER EVENT_ID, even if it "
	    "starts with -\n");
}
int
cli_show(struct cli *c, int argc, char **argv)
{
	struct show_state ss;
	const char *provider = NULL, *event_id = NULL;
	int rc;

	memset(&ss, 0, sizeof(ss));
	rc = cli_event_args(argc, argv, show_flags, ss.flag, &provider,
	    &event_id, show_usage);
	if (rc >= 0)
		return rc;
	if (ss.flag[SHOW_RAW] && ss.flag[SHOW_JSON]) {
		cli_errorf("show: --raw or --json, not both");
		return CLI_EXIT_USAGE;
	}
	ss.p = providers_find(provider);
	if (cli_store(c, &ss.st) != IH_OK)
		return CLI_EXIT_FAIL;
	rc = store_show_account(ss.st, provider, c->account, event_id,
	    show_row, &ss, ss.err,
	    sizeof(ss.err));
	if (rc != IH_OK) {
		cli_errorf("show: %s%s", ss.err, rc == IH_ENOTFOUND &&
		    !ss.flag[SHOW_RAW] ? " (idemhook list --provider NAME "
		    "shows what is stored)" : "");
		return CLI_EXIT_FAIL;
	}
	return CLI_EXIT_OK;
}
