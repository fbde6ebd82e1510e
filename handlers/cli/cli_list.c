/*
 * cli_list.c -- idemhook list: events, newest first, as an aligned
 * table (two passes, so memory stays bounded whatever the limit) or a
 * JSON array.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "account.h"
#include "cli_args.h"
#include "cli_events.h"
#include "cli_list.h"
#include "cli_text.h"
#include "clock.h"
#include "headers.h"
#include "ih.h"
#include "json.h"
#include "provider.h"
#include "providers.h"
#include "request.h"
#include "store.h"
#include "store_dest.h"
#include "store_waiting.h"

#define LIST_COLS	7

static const char *const list_head[LIST_COLS] = { "RECEIVED", "PROVIDER",
    "EVENT_ID", "TYPE", "STATUS", "ATTEMPTS", "DUPS" };

struct list_state {
	struct store	*st;
	int64_t	 now;
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
	/* An account's events show as provider/account (account.h). */
	if (row->account != NULL && strcmp(row->account,
	    ACCOUNT_DEFAULT) != 0) {
		snprintf(cells[1], CLI_TIME_MAX, "%s/%s", row->provider,
		    row->account);
		text[1] = cells[1];
	} else
		text[1] = row->provider;
	cli_format_time(row->received_at, cells[0], CLI_TIME_MAX);
	snprintf(cells[5], CLI_TIME_MAX, "%lld", (long long)row->attempts);
	snprintf(cells[6], CLI_TIME_MAX, "%lld", (long long)row->duplicates);
	text[0] = cells[0];
	text[2] = row->event_id;
	text[3] = row->event_type;
	text[4] = row->status;
	/* A thin event idemhook work has yet to fetch (show says why). */
	if (row->needs_fetch) {
		snprintf(cells[4], CLI_TIME_MAX, "%s (waits for fetch)",
		    row->status);
		text[4] = cells[4];
	}
	text[5] = cells[5];
	text[6] = cells[6];
}

/*
 * Why a due event still waits on its forwarding destination
 * (store_dest.h), after "    waiting: ".
 */
static int
list_held(const struct list_state *ls, const struct store_row *row)
{
	struct store_dest_state ds;
	char err[STORE_ERR_MAX];
	const char *why;

	if (store_dest_state(ls->st, row->provider, row->account, ls->now,
	    &ds, err, sizeof(err)) != IH_OK) {
		cli_errorf("list: %s", err);
		return IH_ESTORE;
	}
	why = store_dest_why(&ds, row->rowid, ls->now);
	if (why == NULL)
		return IH_OK;
	if (strcmp(why, "paused") == 0) {
		printf("    waiting: paused, its destination after failed "
		    "deliveries");
		if (ds.probe_id[0] != '\0') {
			printf("; the probe is ");
			cli_put_clean(stdout, ds.probe_id);
		}
		printf("\n");
	} else if (strcmp(why, "concurrency") == 0)
		printf("    waiting: concurrency, %lld deliveries in flight to "
		    "its destination (at most %ld)\n",
		    (long long)ds.in_flight, ds.concurrency);
	else
		printf("    waiting: rate, its destination's next delivery "
		    "in %lld ms\n", (long long)(ds.next_at - ls->now));
	return IH_OK;
}

/*
 * Why a pending event waits, on a line of its own under its row:
 * behind an earlier unfinished event of its object (its order key,
 * forward.h), for its retry, or held by its forwarding destination.
 */
static int
list_waiting(const struct list_state *ls, const struct store_row *row)
{
	char id[256], err[STORE_ERR_MAX], at[CLI_TIME_MAX];

	id[0] = '\0';
	if (row->order_key != NULL && (strcmp(row->status, "received") == 0 ||
	    strcmp(row->status, "failed") == 0) &&
	    store_behind(ls->st, row->rowid, id, sizeof(id), err,
	    sizeof(err)) != IH_OK) {
		cli_errorf("list: %s", err);
		return IH_ESTORE;
	}
	if (id[0] != '\0') {
		printf("    waiting: behind ");
		cli_put_clean(stdout, id);
		printf(", an earlier event of its object\n");
	} else if (strcmp(row->status, "failed") == 0 &&
	    row->next_attempt_at > ls->now) {
		cli_format_time(row->next_attempt_at, at, sizeof(at));
		printf("    waiting: its retry, at %s\n", at);
	} else if (strcmp(row->status, "received") == 0 ||
	    strcmp(row->status, "failed") == 0)
		return list_held(ls, row);
	return IH_OK;
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
		cli_event_json(stdout, row);
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
	/* A held event's reason, on a line of its own under its row. */
	if (!ls->measure && strcmp(row->status, "held") == 0 &&
	    row->last_error != NULL) {
		printf("    held: ");
		cli_put_clean(stdout, row->last_error);
		printf("\n");
	}
	if (!ls->measure && list_waiting(ls, row) != IH_OK)
		return IH_ESTORE;
	ls->n++;
	return IH_OK;
}

static void
list_usage(FILE *f)
{
	fprintf(f, "usage: idemhook list [--provider NAME] [--type TYPE] "
	    "[--status STATUS]\n"
	    "                     [--since WHEN] [--until WHEN] "
	    "[--limit N] [--needs-fetch]\n"
	    "                     [--source-account ID] [--json]\n\n"
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
	    "  --needs-fetch  only Stripe thin events still waiting for "
	    "idemhook work\n"
	    "            to fetch them\n"
	    "  --source-account ID  the events of one Stripe Connect account "
	    "(acct_...)\n"
	    "  --json    one object per event: provider, event_id, type, "
	    "status, times in Unix ms,\n"
	    "            needs_fetch, ...\n");
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
		if (r == 0)
			r = cli_opt(argc, argv, &a, "--source-account",
			    &f.source_account);
		if (r < 0)
			return CLI_EXIT_USAGE;
		if (r > 0)
			continue;
		if (strcmp(argv[a], "--json") == 0)
			ls.json = 1;
		else if (strcmp(argv[a], "--needs-fetch") == 0)
			f.needs_fetch = 1;
		else
			return cli_help_or_usage(argv[a], list_usage);
	}
	if (!ls.json && f.limit == 0)
		f.limit = 100;
	f.account = c->account;
	if (cli_store(c, &st) != IH_OK)
		return CLI_EXIT_FAIL;
	ls.st = st;
	ls.now = clock_wall_ms();
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
