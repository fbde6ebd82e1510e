/*
 * cli_replay.c -- idemhook replay: one event or a filtered set made due
 * again, with the refusals (being processed, purged, a replay that
 * could take more than meant) and the command lines to run instead.
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
#include "cli_replay.h"
#include "cli_text.h"
#include "clock.h"
#include "headers.h"
#include "ih.h"
#include "json.h"
#include "provider.h"
#include "providers.h"
#include "request.h"
#include "store.h"

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
		rc = store_show_account(st, pos[0], c->account, pos[1],
		    replay_probe, &rs, err, sizeof(err));
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
		/* One event: of the account named, else the default one. */
		f.account = account_or_default(c->account);
	} else
		f.account = c->account;
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
