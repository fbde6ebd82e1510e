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

#include "cli_admin.h"
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

static int
list_row(void *arg, const struct store_row *row)
{
	struct list_state *ls = arg;
	char cells[LIST_COLS][CLI_TIME_MAX];
	const char *text[LIST_COLS];
	size_t i, len;

	if (ls->json) {
		printf("%s  %s", ls->n > 0 ? ",\n" : "", row->json);
		ls->n++;
		return IH_OK;
	}
	list_cells(row, cells, text);
	for (i = 0; i < LIST_COLS; i++) {
		len = strlen(text[i]);
		if (ls->measure) {
			if (len > ls->width[i])
				ls->width[i] = len;
			continue;
		}
		cli_put_clean(stdout, text[i]);
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
	    "Lists events, oldest first, as an aligned table or a JSON "
	    "array.\n"
	    "  --status  received, processing, done, failed, dead or "
	    "quarantined\n"
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
		r = cli_filter_opt(argc, argv, &a, store_now_ms(), &f);
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
		fprintf(stderr, "idemhook: list: %s\n", err);
		return CLI_EXIT_FAIL;
	}
	return CLI_EXIT_OK;
}

/* ---------------------------------------------------------------- show */

struct show_state {
	struct store	*st;
	int		 raw;
	int		 signatures;	/* print the signature header's value */
	const struct provider *p;	/* or NULL */
	int		 rc;
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
	printf("  #%-3lld %s  %s  %-7s ", (long long)at->attempt, s, e,
	    at->outcome != NULL ? at->outcome : "-");
	cli_put_clean(stdout, at->error != NULL ? at->error : "");
	printf("\n");
	return IH_OK;
}

/* Writes the payload, bytes that would drive a terminal escaped. */
static void
show_payload(const unsigned char *p, int64_t len)
{
	int64_t i;

	for (i = 0; i < len; i++) {
		if ((p[i] < 0x20 && p[i] != '\n' && p[i] != '\t') ||
		    p[i] == 0x7f)
			printf("\\x%02x", p[i]);
		else
			putchar(p[i]);
	}
	if (len > 0 && p[len - 1] != '\n')
		putchar('\n');
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
		if (!ss->signatures && ss->p != NULL &&
		    ss->p->sig_header != NULL && colon != NULL &&
		    n == strlen(ss->p->sig_header) &&
		    strncasecmp(h, ss->p->sig_header, n) == 0) {
			printf("%s: (masked; show --signatures prints it)\n",
			    ss->p->sig_header);
			continue;
		}
		show_payload((const unsigned char *)h, (int64_t)(end - h));
	}
}

static int
show_row(void *arg, const struct store_row *row)
{
	struct show_state *ss = arg;
	char n[64];

	if (ss->raw) {
		if (row->payload == NULL) {
			snprintf(ss->err, sizeof(ss->err), "the payload was "
			    "purged by retention");
			return IH_ENOTFOUND;
		}
		fwrite(row->payload, 1, (size_t)row->payload_len, stdout);
		return IH_OK;
	}
	show_field("provider", row->provider);
	show_field("event_id", row->event_id);
	show_field("type", row->event_type);
	show_field("subtype", row->subtype);
	show_field("order_key", row->order_key);
	show_field("status", row->status);
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
		show_payload(row->payload, row->payload_len);
	}
	return IH_OK;
}

static void
show_usage(FILE *f)
{
	fprintf(f, "usage: idemhook show [--raw] [--signatures] PROVIDER "
	    "EVENT_ID\n\n"
	    "Prints the event's metadata, its processing attempts, the last "
	    "error,\nthe headers stored to re-verify it, and its payload.\n"
	    "  --raw         write the payload's bytes exactly and nothing "
	    "else\n"
	    "  --signatures  print the signature or token header's value, "
	    "masked\n                by default\n");
}

/*
 * Parses "[FLAG] PROVIDER EVENT_ID".  Returns -1 to go on, else the exit
 * code (after --help, or a usage error, printed).
 */
static int
event_args(int argc, char **argv, const char *flag, int *flagged,
    const char **provider, const char **event_id, void (*usage)(FILE *))
{
	const char *pos[2] = { NULL, NULL };
	int a, n = 0, bad = 0;

	*flagged = 0;
	for (a = 1; a < argc; a++) {
		if (strcmp(argv[a], "--help") == 0) {
			usage(stdout);
			return CLI_EXIT_OK;
		} else if (flag != NULL && strcmp(argv[a], flag) == 0)
			*flagged = 1;
		else if (argv[a][0] == '-' || n >= 2)
			bad = 1;
		else
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
	char **args = NULL;
	int a, n = 0, rc;

	memset(&ss, 0, sizeof(ss));
	/* --signatures is taken out here; event_args() knows one flag. */
	args = calloc((size_t)argc + 1, sizeof(*args));
	if (args == NULL) {
		fprintf(stderr, "idemhook: show: out of memory\n");
		return CLI_EXIT_FAIL;
	}
	for (a = 0; a < argc; a++) {
		if (a > 0 && strcmp(argv[a], "--signatures") == 0)
			ss.signatures = 1;
		else
			args[n++] = argv[a];
	}
	rc = event_args(n, args, "--raw", &ss.raw, &provider, &event_id,
	    show_usage);
	free(args);
	if (rc >= 0)
		return rc;
	ss.p = providers_find(provider);
	if (cli_store(c, &ss.st) != IH_OK)
		return CLI_EXIT_FAIL;
	rc = store_show(ss.st, provider, event_id, show_row, &ss, ss.err,
	    sizeof(ss.err));
	if (rc != IH_OK) {
		fprintf(stderr, "idemhook: show: %s%s\n", ss.err,
		    rc == IH_ENOTFOUND && !ss.raw ? " (idemhook list "
		    "--provider NAME shows what is stored)" : "");
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
	char		 var[VERIFY_HEADERS_MAX]
			    [REQUEST_HEADER_NAME_MAX + 6];
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
	char *line = sr->text, *nl, *colon;
	size_t len, i;

	while (*line != '\0') {
		nl = strchr(line, '\n');
		if (nl != NULL)
			*nl = '\0';
		colon = strstr(line, ": ");
		len = colon != NULL ? (size_t)(colon - line) : 0;
		if (len > 0 && len <= REQUEST_HEADER_NAME_MAX &&
		    sr->n < VERIFY_HEADERS_MAX) {
			memcpy(sr->var[sr->n], "HTTP_", 5);
			for (i = 0; i < len; i++)
				sr->var[sr->n][5 + i] = line[i] == '-' ? '_' :
				    (char)toupper((unsigned char)line[i]);
			sr->var[sr->n][5 + len] = '\0';
			sr->value[sr->n] = colon + 2;
			sr->n++;
		} else if (len > 0)
			return -1;
		if (nl == NULL)
			break;
		line = nl + 1;
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
	fprintf(f, "usage: idemhook verify PROVIDER EVENT_ID\n\n"
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
	int rc, flag, status = CLI_EXIT_FAIL;

	rc = event_args(argc, argv, NULL, &flag, &provider, &event_id,
	    verify_usage);
	if (rc >= 0)
		return rc;
	p = providers_all[cli_provider_index(provider)];
	if (p->kept_headers == NULL || p->kept_headers[0] == NULL) {
		fprintf(stderr, "idemhook: verify: %s events cannot be "
		    "re-verified: %s authenticates each delivery with a "
		    "static token\nheader, not a signature over the body, and "
		    "the token is not stored.\n", p->name, p->name);
		return CLI_EXIT_FAIL;
	}
	if (cli_config(c, (size_t)cli_provider_index(provider), &cfg) !=
	    IH_OK)
		return CLI_EXIT_USAGE;
	if (cfg->nsecrets == 0) {
		fprintf(stderr, "idemhook: verify: no secret configured: set "
		    "%s in the environment or the IDEMHOOK_CONFIG file\n",
		    p->secret_var);
		return CLI_EXIT_USAGE;
	}
	if (cli_store(c, &st) != IH_OK)
		return CLI_EXIT_FAIL;
	sr = calloc(1, sizeof(*sr));
	if (sr == NULL) {
		fprintf(stderr, "idemhook: verify: out of memory\n");
		goto out;
	}
	rc = store_show(st, provider, event_id, stored_row, sr, sr->err,
	    sizeof(sr->err));
	if (rc != IH_OK) {
		fprintf(stderr, "idemhook: verify: %s\n", sr->err);
		goto out;
	}
	if (sr->purged) {
		fprintf(stderr, "idemhook: verify: the payload of %s %s was "
		    "purged by retention; nothing left to verify\n", provider,
		    event_id);
		goto out;
	}
	if (stored_parse(sr) != 0) {
		fprintf(stderr, "idemhook: verify: the stored headers are "
		    "malformed\n");
		goto out;
	}
	if (json_open(&js) != IH_OK) {
		fprintf(stderr, "idemhook: verify: out of memory\n");
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
	pr.now = time(NULL);
	pr.check_time = 0;
	pr.json = js;
	rc = p->verify(&pr, &why);
	if (rc == IH_OK) {
		printf("valid: %s ", provider);
		cli_put_clean(stdout, event_id);
		printf(": the stored signature matches a configured secret\n");
		status = CLI_EXIT_OK;
	} else {
		printf("INVALID: %s ", provider);
		cli_put_clean(stdout, event_id);
		printf(": %s\n", why != NULL ? why : "signature does not "
		    "match");
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

	printf("%s %s ", rs->dry_run ? "would requeue" : "requeued",
	    row->provider);
	cli_put_clean(stdout, row->event_id);
	printf(" ");
	cli_put_clean(stdout, row->event_type);
	if (rs->dry_run)
		printf(" (%s)", row->status);
	printf("\n");
	return IH_OK;
}

static void
replay_usage(FILE *f)
{
	fprintf(f, "usage: idemhook replay [--dry-run] PROVIDER EVENT_ID\n"
	    "       idemhook replay [--dry-run] --status STATUS "
	    "[--provider NAME] [--type TYPE]\n"
	    "                       [--since WHEN] [--until WHEN] "
	    "[--limit N]\n\n"
	    "Makes events due again: status received, next attempt now, "
	    "attempts\ncounted from zero; idemhook work then processes them.\n"
	    "A filter needs --status (done, failed, dead or "
	    "quarantined), so that done events are never\nreplayed by "
	    "accident.  Events being processed, already due, or whose\n"
	    "payload was purged are left alone.  Each replay is one atomic "
	    "update.\n"
	    "  --dry-run  list what would be requeued, change nothing\n"
	    "Actions run again; local effects already recorded are not "
	    "repeated.\n");
}

/* Refuses, with the reason, a single event replay cannot take. */
static int
replay_refuse(const struct replay_state *rs, const char *provider,
    const char *event_id)
{
	char t[CLI_TIME_MAX];

	if (!rs->found) {
		fprintf(stderr, "idemhook: replay: no %s event with id %s "
		    "(idemhook list --provider %s shows what is stored)\n",
		    provider, event_id, provider);
		return CLI_EXIT_FAIL;
	}
	if (strcmp(rs->status, "received") == 0) {
		printf("%s %s is already due; idemhook work will process it\n",
		    provider, event_id);
		return CLI_EXIT_OK;
	}
	if (strcmp(rs->status, "processing") == 0) {
		cli_format_time(rs->lease_until, t, sizeof(t));
		fprintf(stderr, "idemhook: replay: %s %s is being processed "
		    "by %s (lease until %s); replay it once that attempt "
		    "ends\n", provider, event_id, rs->owner, t);
		return CLI_EXIT_FAIL;
	}
	if (rs->purged) {
		fprintf(stderr, "idemhook: replay: the payload of %s %s was "
		    "purged by retention; there is nothing to process\n",
		    provider, event_id);
		return CLI_EXIT_FAIL;
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
	long count;
	int a, r, n = 0, filtered = 0, rc;

	memset(&f, 0, sizeof(f));
	memset(&rs, 0, sizeof(rs));
	for (a = 1; a < argc; a++) {
		r = cli_filter_opt(argc, argv, &a, store_now_ms(), &f);
		if (r < 0)
			return CLI_EXIT_USAGE;
		if (r > 0) {
			filtered = 1;
			continue;
		}
		if (strcmp(argv[a], "--dry-run") == 0)
			rs.dry_run = 1;
		else if (strcmp(argv[a], "--help") == 0) {
			replay_usage(stdout);
			return CLI_EXIT_OK;
		} else if (argv[a][0] != '-' && n < 2)
			pos[n++] = argv[a];
		else {
			replay_usage(stderr);
			return CLI_EXIT_USAGE;
		}
	}
	if ((n != 0 && (n != 2 || filtered)) || (n == 0 && !filtered)) {
		fprintf(stderr, "idemhook: replay: give either PROVIDER "
		    "EVENT_ID, or filter options with --status\n");
		replay_usage(stderr);
		return CLI_EXIT_USAGE;
	}
	if (n == 2 && cli_provider_index(pos[0]) < 0)
		return CLI_EXIT_USAGE;
	if (n == 0 && (f.status == NULL || strcmp(f.status, "received") ==
	    0 || strcmp(f.status, "processing") == 0)) {
		fprintf(stderr, "idemhook: replay: a filter needs --status "
		    "done, failed, dead or quarantined\n");
		return CLI_EXIT_USAGE;
	}
	if (cli_store(c, &st) != IH_OK)
		return CLI_EXIT_FAIL;
	if (n == 2) {
		rc = store_show(st, pos[0], pos[1], replay_probe, &rs, err,
		    sizeof(err));
		if (rc != IH_OK && rc != IH_ENOTFOUND) {
			fprintf(stderr, "idemhook: replay: %s\n", err);
			return CLI_EXIT_FAIL;
		}
		r = replay_refuse(&rs, pos[0], pos[1]);
		if (r >= 0)
			return r;
		f.provider = pos[0];
		f.event_id = pos[1];
		f.status = rs.status;
	}
	rc = store_requeue(st, &f, rs.dry_run, store_now_ms(), replay_row,
	    &rs, &count, err, sizeof(err));
	if (rc != IH_OK) {
		fprintf(stderr, "idemhook: replay: %s\n", err);
		return CLI_EXIT_FAIL;
	}
	if (n == 2 && count == 0) {
		fprintf(stderr, "idemhook: replay: %s %s changed while "
		    "replaying; look at it again with idemhook show\n",
		    pos[0], pos[1]);
		return CLI_EXIT_FAIL;
	}
	printf("%ld event(s) %s\n", count, rs.dry_run ? "would be requeued" :
	    "requeued; idemhook work processes them");
	return CLI_EXIT_OK;
}
