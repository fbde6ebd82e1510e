/*
 * cli_events.c -- the operator's view of single events: idemhook list,
 * show, verify and replay.  Values that came from the network (ids,
 * types, errors) are printed with control bytes masked, so that a
 * crafted event cannot drive the operator's terminal.
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
#include "cli_text.h"
#include "clock.h"
#include "headers.h"
#include "ih.h"
#include "json.h"
#include "provider.h"
#include "providers.h"
#include "request.h"
#include "store.h"

/* ---------------------------------------------------------------- list */

#define LIST_COLS	7

static const char *const list_head[LIST_COLS] = { "RECEIVED", "PROVIDER",
    "EVENT_ID", "TYPE", "STATUS", "ATTEMPTS", "DUPS" };

struct list_state {
	int	 json;
	int	 measure;	/* first pass: widths only */
	size_t	 width[LIST_COLS];
	long	 n;
};

/* Writes ", \"name\": ms", or null when ms is 0 (unset). */
static void
json_time(FILE *f, const char *name, int64_t ms)
{
	if (ms > 0)
		fprintf(f, ", \"%s\": %lld", name, (long long)ms);
	else
		fprintf(f, ", \"%s\": null", name);
}

/* Writes ", \"name\": " and the text as JSON (null when NULL). */
static void
json_text(FILE *f, const char *name, const char *text)
{
	fprintf(f, ", \"%s\": ", name);
	cli_put_json(f, text);
}

/* The row's table cells, in list_head's order. */
static void
list_cells(const struct store_row *row, char cells[LIST_COLS][CLI_TIME_MAX],
    const char *text[LIST_COLS])
{
	cli_format_time(row->received_at, cells[0], CLI_TIME_MAX);
	snprintf(cells[5], CLI_TIME_MAX, "%lld", (long long)row->attempts);
	snprintf(cells[6], CLI_TIME_MAX, "%lld", (long long)row->duplicates);
	text[0] = cells[0];
	text[1] = row->provider;
	text[2] = row->event_id;
	text[3] = row->event_type;
	text[4] = row->status;
	text[5] = cells[5];
	text[6] = cells[6];
}

/*
 * Writes the event's metadata as one JSON object: the fields of list
 * --json, and the "event" of show --json.  Times are Unix ms, null when
 * unset.
 */
static void
event_json(FILE *f, const struct store_row *row)
{
	fputs("{\"provider\": ", f);
	cli_put_json(f, row->provider);
	json_text(f, "event_id", row->event_id);
	json_text(f, "type", row->event_type);
	json_text(f, "subtype", row->subtype);
	json_text(f, "order_key", row->order_key);
	json_text(f, "status", row->status);
	json_text(f, "api_version", row->api_version);
	fprintf(f, ", \"received_at\": %lld, \"last_seen_at\": %lld, "
	    "\"duplicates\": %lld, \"attempts\": %lld, "
	    "\"next_attempt_at\": %lld", (long long)row->received_at,
	    (long long)row->last_seen_at, (long long)row->duplicates,
	    (long long)row->attempts, (long long)row->next_attempt_at);
	json_time(f, "done_at", row->done_at);
	json_time(f, "purged_at", row->purged_at);
	json_time(f, "lease_until", row->lease_until);
	json_text(f, "lease_owner", row->lease_owner);
	json_text(f, "last_error", row->last_error);
	if (row->has_payload)
		fprintf(f, ", \"payload_bytes\": %lld}",
		    (long long)row->payload_len);
	else
		fputs(", \"payload_bytes\": null}", f);
}

static int
list_row(void *arg, const struct store_row *row)
{
	struct list_state *ls = arg;
	char cells[LIST_COLS][CLI_TIME_MAX];
	const char *text[LIST_COLS];
	size_t i, len;

	if (ls->json) {
		printf("%s  ", ls->n > 0 ? ",\n" : "");
		event_json(stdout, row);
		ls->n++;
		return IH_OK;
	}
	list_cells(row, cells, text);
	for (i = 0; i < LIST_COLS; i++) {
		if (ls->measure) {
			len = cli_clean_width(text[i]);
			if (len > ls->width[i])
				ls->width[i] = len;
			continue;
		}
		cli_put_text(stdout, text[i], strlen(text[i]), 0);
		len = cli_clean_width(text[i]);
		if (i + 1 < LIST_COLS)
			printf("%*s", (int)(ls->width[i] > len ?
			    ls->width[i] - len + 2 : 2), "");
	}
	if (!ls->measure)
		printf("\n");
	ls->n++;
	return IH_OK;
}

static void
list_usage(FILE *f)
{
	fprintf(f, "usage: idemhook list [--provider NAME] [--type TYPE] "
	    "[--status STATUS]\n"
	    "                     [--since WHEN] [--until WHEN] "
	    "[--limit N] [--json]\n\n"
	    "Lists events, newest first, as an aligned table or a JSON "
	    "array.\n"
	    "  --status  received, processing, done, failed, dead, "
	    "quarantined or held\n"
	    "  --since   events received at or after WHEN; --until before "
	    "WHEN\n"
	    "            WHEN: Unix seconds, ISO date or time in UTC "
	    "(2024-05-01,\n"
	    "            2024-05-01T12:00:00Z) or an age (90m, 24h, 7d)\n"
	    "  --limit   at most N events (default 100 in a table, all "
	    "with --json)\n"
	    "  --json    one object per event: provider, event_id, type, "
	    "status, times in Unix ms, ...\n");
}

int
cli_list(struct cli *c, int argc, char **argv)
{
	struct store_filter f;
	struct list_state ls;
	struct store *st;
	char err[STORE_ERR_MAX];
	size_t i;
	int a, r, rc;

	memset(&f, 0, sizeof(f));
	memset(&ls, 0, sizeof(ls));
	for (a = 1; a < argc; a++) {
		r = cli_filter_opt(argc, argv, &a, clock_wall_ms(), &f);
		if (r < 0)
			return CLI_EXIT_USAGE;
		if (r > 0)
			continue;
		if (strcmp(argv[a], "--json") == 0)
			ls.json = 1;
		else if (strcmp(argv[a], "--help") == 0) {
			list_usage(stdout);
			return CLI_EXIT_OK;
		} else {
			list_usage(stderr);
			return CLI_EXIT_USAGE;
		}
	}
	if (!ls.json && f.limit == 0)
		f.limit = 100;
	if (cli_store(c, &st) != IH_OK)
		return CLI_EXIT_FAIL;
	if (ls.json) {
		printf("[\n");
		rc = store_list(st, &f, list_row, &ls, err, sizeof(err));
		printf("%s]\n", ls.n > 0 ? "\n" : "");
	} else {
		/* Two passes keep memory bounded whatever the limit. */
		for (i = 0; i < LIST_COLS; i++)
			ls.width[i] = strlen(list_head[i]);
		ls.measure = 1;
		rc = store_list(st, &f, list_row, &ls, err, sizeof(err));
		if (rc == IH_OK) {
			for (i = 0; i < LIST_COLS; i++)
				printf("%-*s%s", i + 1 < LIST_COLS ?
				    (int)ls.width[i] : 0, list_head[i],
				    i + 1 < LIST_COLS ? "  " : "\n");
			ls.measure = 0;
			ls.n = 0;
			rc = store_list(st, &f, list_row, &ls, err,
			    sizeof(err));
		}
	}
	if (rc != IH_OK) {
		cli_errorf("list: %s", err);
		return CLI_EXIT_FAIL;
	}
	return CLI_EXIT_OK;
}

/* ---------------------------------------------------------------- show */

/* show's flags, in event_args() order. */
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
	json_time(stdout, "finished_at", at->finished_at);
	json_text(stdout, "outcome", at->outcome);
	json_text(stdout, "error", at->error);
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
	event_json(stdout, row);
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
	char n[64];

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
	show_field("event_id", row->event_id);
	show_field("type", row->event_type);
	show_field("subtype", row->subtype);
	show_field("order_key", row->order_key);
	show_field("status", row->status);
	show_field("api_version", row->api_version);
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

/*
 * Parses "[FLAG]... [--] PROVIDER EVENT_ID", where flags is a NULL-ended
 * list of flag names and set[i] becomes 1 for each flags[i] given.
 * Returns -1 to go on, else the exit code (after --help, or a usage
 * error, printed).
 */
static int
event_args(int argc, char **argv, const char *const *flags, int *set,
    const char **provider, const char **event_id, void (*usage)(FILE *))
{
	const char *pos[2] = { NULL, NULL };
	int a, i, n = 0, bad = 0, opts = 1, known;

	for (a = 1; a < argc; a++) {
		known = 0;
		if (opts && strcmp(argv[a], "--") == 0) {
			opts = 0;
			continue;
		}
		if (opts && strcmp(argv[a], "--help") == 0) {
			usage(stdout);
			return CLI_EXIT_OK;
		}
		for (i = 0; opts && flags != NULL && flags[i] != NULL; i++)
			if (strcmp(argv[a], flags[i]) == 0) {
				set[i] = 1;
				known = 1;
			}
		if (known)
			continue;
		if ((opts && argv[a][0] == '-') || n >= 2) {
			if (argv[a][0] == '-' && n >= 1)
				cli_errorf("%s: an event id starting with - "
				    "goes after --", argv[0]);
			bad = 1;
		} else
			pos[n++] = argv[a];
	}
	if (bad || n != 2) {
		usage(stderr);
		return CLI_EXIT_USAGE;
	}
	*provider = pos[0];
	*event_id = pos[1];
	if (cli_provider_index(*provider) < 0)
		return CLI_EXIT_USAGE;
	return -1;
}

int
cli_show(struct cli *c, int argc, char **argv)
{
	struct show_state ss;
	const char *provider = NULL, *event_id = NULL;
	int rc;

	memset(&ss, 0, sizeof(ss));
	rc = event_args(argc, argv, show_flags, ss.flag, &provider,
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
	rc = store_show(ss.st, provider, event_id, show_row, &ss, ss.err,
	    sizeof(ss.err));
	if (rc != IH_OK) {
		cli_errorf("show: %s%s", ss.err, rc == IH_ENOTFOUND &&
		    !ss.flag[SHOW_RAW] ? " (idemhook list --provider NAME "
		    "shows what is stored)" : "");
		return CLI_EXIT_FAIL;
	}
	return CLI_EXIT_OK;
}

/* -------------------------------------------------------------- verify */

#define VERIFY_HEADERS_MAX	16
#define VERIFY_TEXT_MAX		8192

/* A stored event turned back into the request verify() expects. */
struct stored_req {
	char		 text[VERIFY_TEXT_MAX];
	size_t		 n;
	/* "HTTP_" + the header name in CGI form. */
	char		 var[VERIFY_HEADERS_MAX][HEADERS_CGI_NAME_MAX];
	const char	*value[VERIFY_HEADERS_MAX];
	unsigned char	*body;	/* a copy of the payload, then NUL */
	size_t		 body_len;
	int		 found;
	int		 purged;
	char		 err[STORE_ERR_MAX];
};

/* The CGI variables of the stored request: HTTP_* from its headers. */
static const char *
stored_param(void *arg, const char *name)
{
	struct stored_req *sr = arg;
	size_t i;

	if (strcmp(name, "REQUEST_METHOD") == 0)
		return "POST";
	for (i = 0; i < sr->n; i++)
		if (strcmp(sr->var[i], name) == 0)
			return sr->value[i];
	return NULL;
}

/* Splits the "Name: value\n" lines of sr->text into CGI names. */
static int
stored_parse(struct stored_req *sr)
{
	struct headers_field f;
	const char *pos = sr->text;
	char *end;

	while (headers_next(&pos, &f)) {
		if (!f.valued)
			continue;
		if (sr->n >= VERIFY_HEADERS_MAX ||
		    headers_cgi_name(f.name, f.name_len, sr->var[sr->n],
		    sizeof(sr->var[sr->n])) != IH_OK)
			return -1;
		/* The text is this request's copy: end the value in place. */
		end = sr->text + (f.value - sr->text) + f.value_len;
		*end = '\0';
		sr->value[sr->n] = f.value;
		sr->n++;
	}
	return 0;
}

static int
stored_row(void *arg, const struct store_row *row)
{
	struct stored_req *sr = arg;
	size_t len = strlen(row->headers);

	sr->found = 1;
	if (row->payload == NULL) {
		sr->purged = 1;
		return IH_OK;
	}
	if (len >= sizeof(sr->text)) {
		snprintf(sr->err, sizeof(sr->err), "stored headers longer "
		    "than %zu bytes", sizeof(sr->text) - 1);
		return IH_ETOOBIG;
	}
	memcpy(sr->text, row->headers, len + 1);
	sr->body = malloc((size_t)row->payload_len + 1);
	if (sr->body == NULL) {
		snprintf(sr->err, sizeof(sr->err), "out of memory");
		return IH_ENOMEM;
	}
	memcpy(sr->body, row->payload, (size_t)row->payload_len);
	sr->body[row->payload_len] = '\0';
	sr->body_len = (size_t)row->payload_len;
	return IH_OK;
}

static void
verify_usage(FILE *f)
{
	fprintf(f, "usage: idemhook verify [--] PROVIDER EVENT_ID\n\n"
	    "Re-checks the stored signature over the stored payload against "
	    "the\nsecrets configured now (IDEMHOOK_<PROVIDER>_SECRET and _2 "
	    "to _4),\nas audit proof that the event came from the provider. "
	    "Timestamps are\nnot checked against the clock.\n"
	    "Exit: 0 valid; 1 invalid, or it cannot be re-verified (Asaas "
	    "stores no\nsignature; a purged payload); 2 usage or "
	    "configuration error.\n");
}

int
cli_verify(struct cli *c, int argc, char **argv)
{
	struct stored_req *sr = NULL;
	struct provider_req pr;
	struct request req;
	const struct provider *p;
	const struct config *cfg;
	struct store *st;
	struct json *js = NULL;
	const char *provider = NULL, *event_id = NULL, *why = "";
	int rc, status = CLI_EXIT_FAIL;

	rc = event_args(argc, argv, NULL, NULL, &provider, &event_id,
	    verify_usage);
	if (rc >= 0)
		return rc;
	p = providers_all[cli_provider_index(provider)];
	if (p->kept_headers == NULL || p->kept_headers[0] == NULL) {
		cli_errorf("verify: %s events cannot be re-verified: %s "
		    "authenticates each delivery with a static token\n"
		    "header, not a signature over the body, and the token is "
		    "not stored.", p->name, p->name);
		return CLI_EXIT_FAIL;
	}
	if (cli_config(c, (size_t)cli_provider_index(provider), &cfg) !=
	    IH_OK)
		return CLI_EXIT_USAGE;
	if (cfg->nsecrets == 0) {
		cli_errorf("verify: no secret configured: set %s in the "
		    "environment or the IDEMHOOK_CONFIG file", p->secret_var);
		return CLI_EXIT_USAGE;
	}
	if (cli_store(c, &st) != IH_OK)
		return CLI_EXIT_FAIL;
	sr = calloc(1, sizeof(*sr));
	if (sr == NULL) {
		cli_errorf("verify: out of memory");
		goto out;
	}
	rc = store_show(st, provider, event_id, stored_row, sr, sr->err,
	    sizeof(sr->err));
	if (rc != IH_OK) {
		cli_errorf("verify: %s", sr->err);
		goto out;
	}
	if (sr->purged) {
		cli_errorf("verify: the payload of %s %s was purged by "
		    "retention; nothing left to verify", provider, event_id);
		goto out;
	}
	if (stored_parse(sr) != 0) {
		cli_errorf("verify: the stored headers are malformed");
		goto out;
	}
	if (json_open(&js) != IH_OK) {
		cli_errorf("verify: out of memory");
		goto out;
	}
	memset(&req, 0, sizeof(req));
	req.io.param = stored_param;
	req.io.arg = sr;
	req.method = "POST";
	req.body = sr->body;
	req.body_len = sr->body_len;
	memset(&pr, 0, sizeof(pr));
	pr.req = &req;
	pr.cfg = cfg;
	pr.now = clock_wall_s();
	pr.check_time = 0;
	pr.json = js;
	/* Recorded by catch-up: trusted by its API call, never signed. */
	if (request_header(&req, "Idemhook-Source") != NULL) {
		cli_printf(stdout, "UNSIGNED: %s %s: recorded by catch-up "
		    "from the provider's API; nothing to verify\n", provider,
		    event_id);
		goto out;
	}
	rc = p->verify(&pr, &why);
	if (rc == IH_OK) {
		cli_printf(stdout, "valid: %s %s: the stored signature "
		    "matches a configured secret\n", provider, event_id);
		status = CLI_EXIT_OK;
	} else {
		cli_printf(stdout, "INVALID: %s %s: %s\n", provider, event_id,
		    why != NULL ? why : "signature does not match");
	}
out:
	json_close(js);
	if (sr != NULL)
		free(sr->body);
	free(sr);
	return status;
}

/* -------------------------------------------------------------- replay */

struct replay_state {
	int	 dry_run;
	int	 found;
	char	 status[16];
	int	 purged;
	char	 owner[128];
	int64_t	 lease_until;
};

static int
replay_probe(void *arg, const struct store_row *row)
{
	struct replay_state *rs = arg;

	rs->found = 1;
	snprintf(rs->status, sizeof(rs->status), "%s", row->status);
	rs->purged = !row->has_payload;
	snprintf(rs->owner, sizeof(rs->owner), "%s",
	    row->lease_owner != NULL ? row->lease_owner : "");
	rs->lease_until = row->lease_until;
	return IH_OK;
}

static int
replay_row(void *arg, const struct store_row *row)
{
	struct replay_state *rs = arg;

	cli_printf(stdout, "%s %s %s %s%s%s%s\n", rs->dry_run ?
	    "would requeue" : "requeued", row->provider, row->event_id,
	    row->event_type, rs->dry_run ? " (" : "",
	    rs->dry_run ? row->status : "", rs->dry_run ? ")" : "");
	return IH_OK;
}

static void
replay_usage(FILE *f)
{
	fprintf(f, "usage: idemhook replay [--dry-run] [--] PROVIDER "
	    "EVENT_ID\n"
	    "       idemhook replay [--dry-run] --status STATUS [--all] "
	    "[--provider NAME]\n"
	    "                       [--type TYPE] [--since WHEN] "
	    "[--until WHEN] [--limit N]\n"
	    "       idemhook replay --dry-run [filters]\n\n"
	    "Makes events due again: status received, next attempt now, "
	    "attempts\ncounted from zero; idemhook work then processes them.\n"
	    "A filtered replay needs --status (done, failed, dead or "
	    "quarantined);\n--status done also needs another filter, or "
	    "--all, so that done events\nare never replayed by accident.  "
	    "Events being processed, already due,\nor whose payload was "
	    "purged are left alone.  Each replay is one atomic\nupdate.\n"
	    "  --dry-run  list what would be requeued, change nothing (any "
	    "filters,\n             --status optional: done, failed, dead and "
	    "quarantined events)\n"
	    "  --all      replay every event of that status\n"
	    "  --         what follows is PROVIDER EVENT_ID, even if it starts "
	    "with -\n"
	    "Actions run again; local effects already recorded are not "
	    "repeated.\n");
}

/*
 * Appends word to buf (of len bytes, *off used) as one shell word,
 * quoted when it holds anything but plain characters.
 */
static void
shell_word(char *buf, size_t len, size_t *off, const char *word)
{
	const char *p;
	int n, plain = *word != '\0';

	for (p = word; *p != '\0'; p++)
		if (strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZ"
		    "abcdefghijklmnopqrstuvwxyz0123456789_./:=@%+,-",
		    *p) == NULL)
			plain = 0;
	if (*off >= len)
		return;
	n = snprintf(buf + *off, len - *off, "%s%s", *off > 0 ? " " : "",
	    plain ? word : "'");
	*off += n > 0 ? (size_t)n : 0;
	for (p = word; !plain && *p != '\0' && *off < len; p++) {
		if (*p == '\'')
			n = snprintf(buf + *off, len - *off, "'\\''");
		else
			n = snprintf(buf + *off, len - *off, "%c", *p);
		*off += n > 0 ? (size_t)n : 0;
	}
	if (!plain && *off < len) {
		n = snprintf(buf + *off, len - *off, "'");
		*off += n > 0 ? (size_t)n : 0;
	}
}

/*
 * Writes into buf the command line as given (program, global options,
 * "replay", its arguments without --dry-run), with dry_run and extra
 * (two words, or NULL) added after "replay".
 */
static void
replay_command(const struct cli *c, int argc, char **argv, int dry_run,
    const char *extra1, const char *extra2, char *buf, size_t len)
{
	size_t off = 0;
	int a;

	buf[0] = '\0';
	for (a = 0; a < c->gargc; a++)
		shell_word(buf, len, &off, c->gargv[a]);
	if (c->gargc == 0)
		shell_word(buf, len, &off, "idemhook");
	shell_word(buf, len, &off, argv[0]);
	if (dry_run)
		shell_word(buf, len, &off, "--dry-run");
	if (extra1 != NULL)
		shell_word(buf, len, &off, extra1);
	if (extra2 != NULL)
		shell_word(buf, len, &off, extra2);
	for (a = 1; a < argc; a++)
		if (strcmp(argv[a], "--dry-run") != 0)
			shell_word(buf, len, &off, argv[a]);
	if (off >= len && len > 4)
		memcpy(buf + len - 4, "...", 4);
}

/* Refuses, with the reason, a single event replay cannot take. */
static int
replay_refuse(const struct replay_state *rs, const char *provider,
    const char *event_id)
{
	char t[CLI_TIME_MAX];

	if (!rs->found) {
		cli_errorf("replay: no %s event with id %s (idemhook list "
		    "--provider %s shows what is stored)", provider, event_id,
		    provider);
		return CLI_EXIT_FAIL;
	}
	if (strcmp(rs->status, "received") == 0) {
		cli_printf(stdout, "%s %s is already due; idemhook work will "
		    "process it\n", provider, event_id);
		return CLI_EXIT_OK;
	}
	if (strcmp(rs->status, "processing") == 0) {
		cli_format_time(rs->lease_until, t, sizeof(t));
		cli_errorf("replay: %s %s is being processed by %s (lease "
		    "until %s); replay it once that attempt ends", provider,
		    event_id, rs->owner, t);
		return CLI_EXIT_FAIL;
	}
	if (rs->purged) {
		cli_errorf("replay: the payload of %s %s was purged by "
		    "retention; there is nothing to process", provider,
		    event_id);
		return CLI_EXIT_FAIL;
	}
	return -1;
}

/*
 * Refuses a filtered replay that could requeue more than meant: one
 * without --status (a dry run may), or --status done narrowed by nothing
 * else without --all.  Returns -1 to go on, else the exit code, with
 * the commands to run instead printed.
 */
static int
replay_guard(const struct cli *c, int argc, char **argv,
    const struct store_filter *f, int dry_run, int all)
{
	char cmd1[1024], cmd2[1024];
	/* The console applies the same rule (store_bulk_check()). */
	enum store_bulk b = store_bulk_check(f, all);

	if (b == STORE_BULK_NOT_REPLAYABLE) {
		cli_errorf("replay: --status %s events are already due or "
		    "being processed; give done, failed, dead or quarantined",
		    f->status);
		return CLI_EXIT_USAGE;
	}
	if (dry_run)
		return -1;
	if (b == STORE_BULK_NO_STATUS) {
		replay_command(c, argc, argv, 1, NULL, NULL, cmd1,
		    sizeof(cmd1));
		replay_command(c, argc, argv, 0, "--status", "dead", cmd2,
		    sizeof(cmd2));
		cli_errorf("replay: a filtered replay needs --status (done, "
		    "failed, dead or quarantined),\nso that done events are "
		    "never replayed by accident.  To see what it would make "
		    "due again:\n    %s\nthen replay one status, for "
		    "example:\n    %s", cmd1, cmd2);
		return CLI_EXIT_USAGE;
	}
	if (b == STORE_BULK_DONE_ALL) {
		replay_command(c, argc, argv, 1, NULL, NULL, cmd1,
		    sizeof(cmd1));
		replay_command(c, argc, argv, 0, "--all", NULL, cmd2,
		    sizeof(cmd2));
		cli_errorf("replay: --status done with no other filter would "
		    "run the actions of every\ndone event again.  Narrow it "
		    "(--provider, --type, --since, --until); see\nwhat it "
		    "would take with:\n    %s\nor, to replay every done "
		    "event:\n    %s", cmd1, cmd2);
		return CLI_EXIT_USAGE;
	}
	return -1;
}

int
cli_replay(struct cli *c, int argc, char **argv)
{
	struct store_filter f;
	struct replay_state rs;
	struct store *st;
	const char *pos[2] = { NULL, NULL };
	char err[STORE_ERR_MAX];
	long count, batches;
	int a, r, n = 0, filtered = 0, all = 0, opts = 1, rc;

	memset(&f, 0, sizeof(f));
	memset(&rs, 0, sizeof(rs));
	for (a = 1; a < argc; a++) {
		if (opts && strcmp(argv[a], "--") == 0) {
			opts = 0;
			continue;
		}
		r = opts ? cli_filter_opt(argc, argv, &a, clock_wall_ms(), &f) :
		    0;
		if (r < 0)
			return CLI_EXIT_USAGE;
		if (r > 0) {
			filtered = 1;
			continue;
		}
		if (opts && strcmp(argv[a], "--dry-run") == 0)
			rs.dry_run = 1;
		else if (opts && strcmp(argv[a], "--all") == 0)
			all = 1;
		else if (opts && strcmp(argv[a], "--help") == 0) {
			replay_usage(stdout);
			return CLI_EXIT_OK;
		} else if ((!opts || argv[a][0] != '-') && n < 2)
			pos[n++] = argv[a];
		else {
			if (argv[a][0] == '-' && n == 1)
				cli_errorf("replay: an event id starting with "
				    "- goes after --");
			replay_usage(stderr);
			return CLI_EXIT_USAGE;
		}
	}
	if ((n != 0 && (n != 2 || filtered || all)) ||
	    (n == 0 && !filtered && !rs.dry_run && !all)) {
		cli_errorf("replay: give either PROVIDER EVENT_ID, or filter "
		    "options with --status");
		replay_usage(stderr);
		return CLI_EXIT_USAGE;
	}
	if (n == 2 && cli_provider_index(pos[0]) < 0)
		return CLI_EXIT_USAGE;
	if (n == 0) {
		r = replay_guard(c, argc, argv, &f, rs.dry_run, all);
		if (r >= 0)
			return r;
	}
	if (cli_store(c, &st) != IH_OK)
		return CLI_EXIT_FAIL;
	if (n == 2) {
		rc = store_show(st, pos[0], pos[1], replay_probe, &rs, err,
		    sizeof(err));
		if (rc != IH_OK && rc != IH_ENOTFOUND) {
			cli_errorf("replay: %s", err);
			return CLI_EXIT_FAIL;
		}
		r = replay_refuse(&rs, pos[0], pos[1]);
		if (r >= 0)
			return r;
		f.provider = pos[0];
		f.event_id = pos[1];
		f.status = rs.status;
	}
	rc = store_requeue_batches(st, &f, rs.dry_run, clock_wall_ms(),
	    replay_row, &rs, &count, &batches, err, sizeof(err));
	if (rc != IH_OK) {
		cli_errorf("replay: %s", err);
		return CLI_EXIT_FAIL;
	}
	if (n == 2 && count == 0) {
		cli_errorf("replay: %s %s changed while replaying; look at it "
		    "again with idemhook show", pos[0], pos[1]);
		return CLI_EXIT_FAIL;
	}
	if (rs.dry_run)
		printf("%ld event(s) would be requeued\n", count);
	else
		printf("%ld event(s) requeued in %ld transaction(s); idemhook "
		    "work processes them\n", count, batches);
	return CLI_EXIT_OK;
}
