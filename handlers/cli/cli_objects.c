/*
 * cli_objects.c -- idemhook objects and idemhook object: the current
 * state of the objects the switches keep (object.h), and one object's
 * history with the guard's verdict for each event.  Every value came
 * from the network, so it goes out through cli_text.h's masking.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "account.h"
#include "cli_args.h"
#include "cli_objects.h"
#include "cli_text.h"
#include "clock.h"
#include "ih.h"
#include "store.h"

struct objects_state {
	int	json;
	long	n;
};

static void
objects_usage(FILE *f)
{
	fprintf(f, "usage: idemhook objects [--provider NAME] [--kind KIND] "
	    "[--status STATUS]\n"
	    "                        [--since WHEN] [--limit N] [--json]\n\n"
	    "Lists the current state of the objects the providers' events "
	    "set\n(subscriptions, orders, payments, issues, ...), by "
	    "provider, kind and id.\n"
	    "  --since   objects changed at or after WHEN (Unix seconds, "
	    "ISO date or\n"
	    "            time in UTC, or an age: 90m, 24h, 7d)\n"
	    "  --limit   at most N objects (default 100 in a table, all "
	    "with --json)\n"
	    "  --json    one object per row: provider, account, kind, "
	    "object_id, status,\n            deleted, source_at, "
	    "event_id, changed_at (Unix ms) and object\n            (its "
	    "JSON)\n");
}

static void
object_usage(FILE *f)
{
	fprintf(f, "usage: idemhook object PROVIDER KIND ID [--json]\n\n"
	    "Shows one object's current state and every event that touched "
	    "it, with\nthe ordering guard's verdict: applied, stale (older "
	    "than the state) or\ntied (same time, lower tie-break).\n");
}

/*
 * Writes the object's JSON (valid JSON, as the strict parser accepted
 * it) so that a terminal cannot act on it, as cli_json_text() does for
 * strings: DEL, C1 controls and bidirectional overrides, which JSON
 * allows raw inside strings, become \uXXXX escapes (the same string),
 * and a CR between tokens a space.  Text that is not UTF-8 (a store
 * changed by hand) is written as null.
 */
static void
put_object_json(FILE *f, const char *json, size_t len)
{
	const unsigned char *p = (const unsigned char *)json;
	size_t i;

	if (json == NULL || !cli_utf8_ok(json, len)) {
		fputs("null", f);
		return;
	}
	for (i = 0; i < len; i++) {
		if (p[i] == 0x7f)
			fputs("\\u007f", f);
		else if (p[i] < 0x20 && p[i] != '\n' && p[i] != '\t')
			fputc(' ', f);
		else if (p[i] == 0xc2 && i + 1 < len && p[i + 1] >= 0x80 &&
		    p[i + 1] <= 0x9f) {
			fprintf(f, "\\u%04x", p[i + 1]);
			i++;
		} else if (p[i] == 0xe2 && i + 2 < len && ((p[i + 1] == 0x80 &&
		    p[i + 2] >= 0xaa && p[i + 2] <= 0xae) ||
		    (p[i + 1] == 0x81 && p[i + 2] >= 0xa6 &&
		    p[i + 2] <= 0xa9))) {
			fprintf(f, "\\u%04x", 0x2000 | (p[i + 1] & 0x3f) << 6 |
			    (p[i + 2] & 0x3f));
			i += 2;
		} else
			fputc(p[i], f);
	}
}

static void
put_time(int64_t ms)
{
	char t[CLI_TIME_MAX];

	cli_format_time(ms, t, sizeof(t));
	printf("%s", t);
}

static int
objects_row(void *arg, const struct store_object *o)
{
	struct objects_state *s = arg;

	if (s->json) {
		printf("%s{\"provider\":", s->n > 0 ? ",\n" : "");
		cli_put_json(stdout, o->provider);
		printf(",\"account\":");
		cli_put_json(stdout, o->account);
		printf(",\"kind\":");
		cli_put_json(stdout, o->kind);
		printf(",\"object_id\":");
		cli_put_json(stdout, o->object_id);
		printf(",\"status\":");
		cli_put_json(stdout, o->status);
		printf(",\"deleted\":%s,\"source_at\":%lld,\"event_id\":",
		    o->deleted ? "true" : "false", (long long)o->source_ms);
		cli_put_json(stdout, o->event_id);
		printf(",\"created_at\":%lld,\"changed_at\":%lld,\"object\":",
		    (long long)o->created_ms, (long long)o->changed_ms);
		put_object_json(stdout, o->json, o->json_len);
		printf("}");
	} else {
		/* Two accounts may hold one object id: the row says whose. */
		cli_printf(stdout, "%-9s %-12s %-16s %-28s %-14s %-3s ",
		    o->provider, o->account, o->kind, o->object_id,
		    o->status[0] != '\0' ? o->status : "-",
		    o->deleted ? "yes" : "no");
		put_time(o->source_ms);
		printf("  ");
		cli_put_clean(stdout, o->event_id);
		printf("\n");
	}
	s->n++;
	return IH_OK;
}

/* The options with a value, in objects_opt()'s order. */
static const char *const objects_opts[] = { "--provider", "--kind",
    "--status", "--since", "--limit", NULL };

/* Takes option i's value v into f; 0, or -1 (printed). */
static int
objects_opt(struct store_object_filter *f, size_t i, const char *v)
{
	long n;

	switch (i) {
	case 0:
		f->provider = v;
		return 0;
	case 1:
		f->kind = v;
		return 0;
	case 2:
		f->status = v;
		return 0;
	case 3:
		if (cli_parse_time(v, clock_wall_ms(), &f->since_ms) == 0)
			return 0;
		cli_errorf("objects: bad --since %s", v);
		return -1;
	default:
		if (cli_parse_long(v, 1, 1000000000L, &n) != 0) {
			cli_errorf("objects: bad --limit %s", v);
			return -1;
		}
		f->limit = n;
		return 0;
	}
}

int
cli_objects(struct cli *c, int argc, char **argv)
{
	struct store_object_filter f;
	struct objects_state s;
	struct store *st;
	char err[STORE_ERR_MAX];
	const char *v = NULL;
	size_t i;
	int a, r, rc;

	memset(&f, 0, sizeof(f));
	memset(&s, 0, sizeof(s));
	for (a = 1; a < argc; a++) {
		r = 0;
		for (i = 0; objects_opts[i] != NULL && r == 0; i++)
			r = cli_opt(argc, argv, &a, objects_opts[i], &v);
		if (r < 0)
			return CLI_EXIT_USAGE;
		if (r > 0) {
			if (objects_opt(&f, i - 1, v) != 0)
				return CLI_EXIT_USAGE;
		} else if (strcmp(argv[a], "--json") == 0) {
			s.json = 1;
		} else {
			return cli_help_or_usage(argv[a], objects_usage);
		}
	}
	if (!s.json && f.limit == 0)
		f.limit = 100;
	f.account = c->account;
	if (cli_store(c, &st) != IH_OK)
		return CLI_EXIT_FAIL;
	if (s.json)
		printf("[\n");
	else
		printf("%-9s %-12s %-16s %-28s %-14s %-3s %-20s  %s\n",
		    "PROVIDER", "ACCOUNT", "KIND", "ID", "STATUS", "DEL",
		    "SOURCE TIME", "EVENT");
	rc = store_objects(st, &f, objects_row, &s, err, sizeof(err));
	if (s.json)
		printf("%s]\n", s.n > 0 ? "\n" : "");
	if (rc != IH_OK) {
		cli_errorf("objects: %s", err);
		return CLI_EXIT_FAIL;
	}
	return CLI_EXIT_OK;
}

static int
history_row(void *arg, const struct store_object_event *e)
{
	struct objects_state *s = arg;

	if (s->json) {
		printf("%s{\"event_id\":", s->n > 0 ? "," : "");
		cli_put_json(stdout, e->event_id);
		printf(",\"event_type\":");
		cli_put_json(stdout, e->event_type);
		printf(",\"status\":");
		cli_put_json(stdout, e->status);
		printf(",\"source_at\":%lld,\"deleted\":%s,\"verdict\":",
		    (long long)e->source_ms, e->deleted ? "true" : "false");
		cli_put_json(stdout, e->verdict);
		printf(",\"recorded_at\":%lld}", (long long)e->recorded_ms);
	} else {
		printf("  %-8s ", e->verdict);
		put_time(e->source_ms);
		cli_printf(stdout, "  %-14s %s  %s\n", e->status[0] != '\0' ?
		    e->status : "-", e->event_type, e->event_id);
	}
	s->n++;
	return IH_OK;
}

/* Prints the object's state; its history follows. */
static int
object_state(void *arg, const struct store_object *o)
{
	struct objects_state *s = arg;

	if (s->json) {
		s->n = 0;
		printf("{\"object\":");
		objects_row(s, o);
		s->n = 0;
		return IH_OK;
	}
	cli_printf(stdout, "%-11s %s %s %s\n", "object", o->provider,
	    o->kind, o->object_id);
	cli_printf(stdout, "%-11s %s\n", "account", o->account);
	cli_printf(stdout, "%-11s %s%s\n", "status", o->status,
	    o->deleted ? " (deleted)" : "");
	printf("%-11s ", "source time");
	put_time(o->source_ms);
	printf(" (%lld)\n", (long long)o->source_ms);
	cli_printf(stdout, "%-11s %s\n", "set by", o->event_id);
	printf("%-11s ", "changed");
	put_time(o->changed_ms);
	printf("\n%-11s %s\n", "json", o->json != NULL ? "" : "-");
	if (o->json != NULL)
		cli_put_text(stdout, o->json, o->json_len, CLI_TEXT_LINES);
	printf("\n");
	s->n = 1;
	return IH_OK;
}

int
cli_object(struct cli *c, int argc, char **argv)
{
	struct store_object_filter f;
	struct objects_state s;
	struct store *st;
	char err[STORE_ERR_MAX];
	const char *pos[3];
	int a, npos = 0, rc;

	memset(&f, 0, sizeof(f));
	memset(&s, 0, sizeof(s));
	for (a = 1; a < argc; a++) {
		if (strcmp(argv[a], "--json") == 0)
			s.json = 1;
		else if (strcmp(argv[a], "--help") == 0) {
			object_usage(stdout);
			return CLI_EXIT_OK;
		} else if (argv[a][0] != '-' && npos < 3)
			pos[npos++] = argv[a];
		else {
			object_usage(stderr);
			return CLI_EXIT_USAGE;
		}
	}
	if (npos != 3) {
		object_usage(stderr);
		return CLI_EXIT_USAGE;
	}
	f.provider = pos[0];
	f.account = account_or_default(c->account);
	f.kind = pos[1];
	f.object_id = pos[2];
	if (cli_store(c, &st) != IH_OK)
		return CLI_EXIT_FAIL;
	s.n = -1;
	rc = store_objects(st, &f, object_state, &s, err, sizeof(err));
	if (rc == IH_OK && s.n < 0) {
		cli_errorf("object: no %s %s with id %s", pos[0], pos[1],
		    pos[2]);
		return CLI_EXIT_FAIL;
	}
	if (rc == IH_OK) {
		printf(s.json ? ",\"history\":[" : "history\n");
		s.n = 0;
		rc = store_object_history(st, pos[0], f.account, pos[1],
		    pos[2], history_row, &s, err, sizeof(err));
		printf(s.json ? "]}\n" : "");
	}
	if (rc != IH_OK) {
		cli_errorf("object: %s", err);
		return CLI_EXIT_FAIL;
	}
	return CLI_EXIT_OK;
}
