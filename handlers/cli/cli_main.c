/*
 * cli_main.c -- the operator's command: one store, every provider.  Its
 * main(), the table of subcommands, and the two that run the pipeline:
 *
 *   idemhook init                 create or migrate the store
 *   idemhook work [--once] ...    process due events
 *
 * The other subcommands live one group a file: cli_list.c, cli_show.c,
 * cli_verify.c and cli_replay.c (one each, sharing cli_events.c),
 * cli_maint.c (purge, stats), cli_check.c (check), cli_console.c
 * (console-password), cli_copy.c (copy), cli_backup.c (backup,
 * restore); all parse their arguments with cli_args.c.
 *
 * The context the subcommands share (settings, the store) is idemhook.c's
 * (idemhook.h).
 *
 * Exit codes: 0 success; 1 the store or an event failed; 2 usage or
 * configuration error.
 */
#include <sys/stat.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "alert.h"
#include "alert_held.h"
#include "config.h"
#include "config_find.h"
#include "dispatch.h"
#include "forward.h"
#include "harden.h"
#include "ih.h"
#include "log.h"
#include "providers.h"
#include "redact.h"
#include "settings.h"
#include "store.h"

#include "api_accounts.h"
#include "cli_account.h"
#include "cli_args.h"
#include "cli_backup.h"
#include "cli_catchup.h"
#include "cli_health.h"
#include "cli_check.h"
#include "cli_console.h"
#include "cli_copy.h"
#include "cli_list.h"
#include "cli_maint.h"
#include "cli_objects.h"
#include "cli_replay.h"
#include "cli_show.h"
#include "cli_smoke.h"
#include "cli_text.h"
#include "cli_verify.h"
#include "idemhook.h"
#include "thin_fetch.h"

/* Set by SIGINT/SIGTERM: finish the event in hand, then stop. */
static volatile sig_atomic_t stop_requested;

static void
on_stop(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static int
cmd_init(struct cli *c, int argc, char **argv)
{
	struct store *st;
	char shown[REDACT_URI_MAX];
	int rc;

	if (argc > 1 && strcmp(argv[1], "--help") == 0) {
		printf("usage: idemhook init\n\n"
		    "Creates the store named by IDEMHOOK_DB (default %s),\n"
		    "owner-only, or migrates it to this version's schema.\n"
		    "Running it again changes nothing.\n", IH_DEFAULT_DB);
		return 0;
	}
	rc = cli_store(c, &st);
	if (rc != IH_OK)
		return rc == IH_ECONFIG ? 2 : 1;
	printf("store %s ready (schema version %d, %s)\n",
	    ih_redact(c->db_path, shown, sizeof(shown)), STORE_SCHEMA_VERSION,
	    strcmp(store_backend(st), "sqlite") == 0 ? "WAL" : "PostgreSQL");
	return 0;
}

static void
work_usage(FILE *f)
{
	fprintf(f, "usage: idemhook work [--once] [--provider NAME] "
	    "[--interval SECONDS]\n\n"
	    "Processes due events, oldest first: received ones, failed ones\n"
	    "whose retry time has come, and ones whose lease expired.\n"
	    "  --once           stop when nothing is due (for cron)\n"
	    "  --provider NAME  only this provider's events\n"
	    "  --interval S     seconds between polls when idle "
	    "(default 1)\n"
	    "Several workers may run at once: each event is claimed by one.\n");
}

/*
 * IDEMHOOK_<PROVIDER>_BADSIG_ALERT (else IDEMHOOK_BADSIG_ALERT): refused
 * signatures that raise the alarm, 0 (off) when unset or bad; and
 * IDEMHOOK_BADSIG_WINDOW, its window in minutes (1 to 60, default 60).
 */
static void
badsig_settings(struct cli *c, const char *provider, long *threshold,
    long *minutes)
{
	char name[96], up[32];
	const char *v;
	size_t i;

	for (i = 0; provider[i] != '\0' && i < sizeof(up) - 1; i++)
		up[i] = (char)(provider[i] >= 'a' && provider[i] <= 'z' ?
		    provider[i] - 'a' + 'A' : provider[i]);
	up[i] = '\0';
	snprintf(name, sizeof(name), "IDEMHOOK_%s_BADSIG_ALERT", up);
	v = cli_setting(c, name);
	if (v == NULL)
		v = cli_setting(c, "IDEMHOOK_BADSIG_ALERT");
	if (v == NULL || cli_parse_long(v, 0, 1000000000L, threshold) != 0)
		*threshold = 0;
	v = cli_setting(c, "IDEMHOOK_BADSIG_WINDOW");
	if (v == NULL || cli_parse_long(v, 1, 60, minutes) != 0)
		*minutes = 60;
}

static int
cmd_work(struct cli *c, int argc, char **argv)
{
	const struct config *cfg;
	struct dispatch d;
	struct store *st;
	struct timespec nap;
	char owner[128], err[STORE_ERR_MAX], *end;
	const char *only = NULL;
	const char *v;
	double interval = 1.0;
	long done = 0;
	size_t i;
	struct log_dest ld;
	struct alert_silence silence;
	struct alert_badsig badsig;
	struct alert_held held;
	struct thin_fetch thin;
	struct forward_pause pauses[CLI_MAX_PROVIDERS];
	long found, threshold, minutes, health_s = 0;
	int64_t release_at[CLI_MAX_PROVIDERS];
	static struct cli_health_round health;
	int once = 0, any, rc, a, r, ret = 0, health_on = 0;

	for (a = 1; a < argc; a++) {
		r = cli_opt(argc, argv, &a, "--provider", &only);
		if (r == 0)
			r = cli_opt(argc, argv, &a, "--interval", &v) * 2;
		if (r == 2) {
			errno = 0;
			interval = strtod(v, &end);
			if (errno != 0 || *end != '\0' || interval < 0.01 ||
			    interval > 3600) {
				fprintf(stderr, "idemhook: --interval takes "
				    "seconds from 0.01 to 3600\n");
				return CLI_EXIT_USAGE;
			}
		}
		if (r > 0)
			continue;
		if (r == 0 && strcmp(argv[a], "--once") == 0)
			once = 1;
		else if (r == 0 && strcmp(argv[a], "--help") == 0) {
			work_usage(stdout);
			return CLI_EXIT_OK;
		} else {
			work_usage(stderr);
			return CLI_EXIT_USAGE;
		}
	}
	if (only != NULL && providers_find(only) == NULL) {
		cli_errorf("no provider called %s", only);
		return 2;
	}
	if (cli_store(c, &st) != IH_OK)
		return 1;
	/* Stripe's thin events: fetched here, never in a receiver. */
	rc = thin_fetch_open(&thin, c);
	if (rc != IH_OK) {
		thin_fetch_close(&thin);
		return rc == IH_ECONFIG ? CLI_EXIT_USAGE : 1;
	}
	/* The processing lines go where the receivers send theirs. */
	log_dest_init(&ld);
	if (cli_config(c, 0, &cfg) == IH_OK &&
	    log_dest_set(&ld, cfg->log, err, sizeof(err)) != IH_OK)
		fprintf(stderr, "idemhook: %s\n", err);
	dispatch_owner(owner, sizeof(owner));
	memset(&silence, 0, sizeof(silence));
	memset(&badsig, 0, sizeof(badsig));
	memset(&held, 0, sizeof(held));
	memset(release_at, 0, sizeof(release_at));
	memset(pauses, 0, sizeof(pauses));
	/* IDEMHOOK_HEALTH_INTERVAL: idemhook health's checks, with alerts. */
	v = cli_setting(c, "IDEMHOOK_HEALTH_INTERVAL");
	if (v != NULL && cli_parse_long(v, 0, 86400, &health_s) != 0) {
		cli_errorf("IDEMHOOK_HEALTH_INTERVAL takes 0 to 86400 s");
		ret = CLI_EXIT_USAGE;
		goto out;
	}
	signal(SIGINT, on_stop);
	signal(SIGTERM, on_stop);
	signal(SIGPIPE, SIG_IGN);
	/* Off the processing path: a slow API stalls no provider's events. */
	if (health_s > 0) {
		rc = cli_health_start(&health, c, only, health_s, once);
		if (rc != IH_OK) {
			ret = rc == IH_ECONFIG ? 2 : 1;
			goto out;
		}
		health_on = 1;
	}
	while (!stop_requested) {
		any = 0;
		for (i = 0; providers_all[i] != NULL && !stop_requested; i++) {
			if (only != NULL &&
			    strcmp(providers_all[i]->name, only) != 0)
				continue;
			if (cli_config(c, i, &cfg) != IH_OK) {
				ret = 2;
				goto out;
			}
			d.st = st;
			d.p = providers_all[i];
			d.cfg = cfg;
			d.owner = owner;
			d.log = log_dest_sink(&ld, &log_stderr);
			d.pause = i < CLI_MAX_PROVIDERS ? &pauses[i] : NULL;
			/* IDEMHOOK_SILENCE_ALERT: one alert per silence. */
			if (alert_silence_check(&silence, i, cfg,
			    providers_all[i]->name, st, clock_wall_ms(), d.log,
			    err, sizeof(err)) != IH_OK)
				cli_errorf("work: silence check: %s", err);
			badsig_settings(c, providers_all[i]->name, &threshold,
			    &minutes);
			if (alert_badsig_check(&badsig, i, cfg,
			    providers_all[i]->name, st, threshold, minutes,
			    clock_wall_ms(), d.log, err, sizeof(err)) != IH_OK)
				cli_errorf("work: signature check: %s", err);
			/*
			 * Held events the API confirms, a minute apart, of
			 * every account with a key or the App.
			 */
			if (i < CLI_MAX_PROVIDERS && (release_at[i] == 0 ||
			    clock_wall_ms() - release_at[i] >=
			    ALERT_HELD_CHECK_MS)) {
				release_at[i] = clock_wall_ms();
				(void)api_accounts_release(c, i, d.log);
			}
			/* Events held back (version.h, hold_replays). */
			if (alert_held_check(&held, i, cfg,
			    providers_all[i]->name, st, clock_wall_ms(), d.log,
			    err, sizeof(err)) != IH_OK)
				cli_errorf("work: held check: %s", err);
			rc = thin_fetch_ready(&thin, st,
			    providers_all[i]->name, d.log, err, sizeof(err));
			if (rc != IH_OK)
				cli_errorf("work: thin events: %s", err);
			found = 0;
			rc = dispatch_drain(&d, 0, &stop_requested, &found,
			    err, sizeof(err));
			any += found;
			done += found;
			if (rc != IH_OK) {
				cli_errorf("work: %s", err);
				ret = 1;
				goto out;
			}
		}
		if (!any && once)
			break;
		if (!any) {
			nap.tv_sec = (time_t)interval;
			nap.tv_nsec = (long)((interval - (double)nap.tv_sec) *
			    1e9);
			nanosleep(&nap, NULL);
		}
	}
out:
	/* --once: the round ends; a stop or a failure stops it. */
	if (health_on)
		cli_health_end(&health, once && !stop_requested && ret == 0);
	/* A failed run says so on stdout too, and exits non-zero. */
	if (once && ret == 0 && thin.failed > 0) {
		printf("processed %ld event(s); FAILED: the fetch of %ld thin "
		    "event(s) failed (see the log): they are retried\n", done,
		    thin.failed);
		ret = CLI_EXIT_FAIL;
	} else if (once && ret == 0)
		printf("processed %ld event(s)\n", done);
	else if (once)
		printf("processed %ld event(s); FAILED: see the error above\n",
		    done);
	thin_fetch_close(&thin);
	log_dest_close(&ld);
	return ret;
}

/* Every subcommand, in the order usage lists them. */
static const struct cli_cmd commands[] = {
	{ "init", cmd_init, "create or migrate the store", 0 },
	{ "work", cmd_work, "process due events (--once for cron)", 0 },
	{ "check", cli_check,
	    "audit secrets, file modes, WAL, document root", 0 },
	{ "list", cli_list, "list events (filters; table or --json)", 0 },
	{ "show", cli_show,
	    "one event: metadata, attempts, headers, payload", 0 },
	{ "verify", cli_verify, "re-check a stored event's signature", 0 },
	{ "replay", cli_replay, "re-queue one event or a filtered set", 0 },
	{ "purge", cli_purge, "apply retention: payloads, then tombstones", 0 },
	{ "stats", cli_stats,
	    "per-provider figures (--json, --prometheus)", 0 },
	{ "console-password", cli_console_password,
	    "hash the console's password (read on stdin)", 1 },
	{ "copy", cli_copy, "copy the store into PostgreSQL (--to URI)", 0 },
	{ "backup", cli_backup, "a checked copy of the live store (cron)", 0 },
	{ "restore", cli_restore, "put a backup in place of the store", 0 },
	{ "objects", cli_objects, "objects' current state (orders, ...)", 0 },
	{ "object", cli_object,
	    "one object: state and history with verdicts", 0 },
	{ "catch-up", cli_catchup, "record what the providers' APIs sent and "
	    "we lack", 0 },
	{ "health", cli_health, "the endpoint as each provider sees it", 0 },
	{ "smoke", cli_smoke, "test an endpoint through the web server: "
	    "accepted, duplicate, 401", 0 },
};

#define NCOMMANDS	(sizeof(commands) / sizeof(commands[0]))

static void
usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: idemhook [--config FILE] [--db PATH] COMMAND "
	    "[ARGS]\n\ncommands:\n");
	for (i = 0; i < NCOMMANDS; i++)
		fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].help);
	fprintf(f, "\n--account NAME: list, show, verify, replay, purge, "
	    "stats, objects, object,\ncatch-up and smoke see that account only "
	    "(handlers/README.md, Accounts).\n");
	fprintf(f, "\n'idemhook COMMAND --help' describes one command.\n"
	    "Exit codes: 0 success, 1 failure, 2 usage or configuration "
	    "error.\n");
}

int
main(int argc, char **argv)
{
	struct cli c;
	const char *config = NULL, *db = NULL;
	char err[256];
	size_t i;
	int a, r = 0, rc = CLI_EXIT_USAGE;

	/* Before any secret is read: no core file, no ptrace. */
	if (harden_process(err, sizeof(err)) != IH_OK)
		fprintf(stderr, "idemhook: cannot disable core dumps: %s\n",
		    err);
	for (a = 1; a < argc && argv[a][0] == '-'; a++) {
		r = cli_opt(argc, argv, &a, "--config", &config);
		if (r == 0)
			r = cli_opt(argc, argv, &a, "--db", &db);
		if (r > 0)
			continue;
		if (r == 0 && (strcmp(argv[a], "--help") == 0 ||
		    strcmp(argv[a], "-h") == 0)) {
			usage(stdout);
			return CLI_EXIT_OK;
		}
		break;
	}
	if (r < 0 || a >= argc || argv[a][0] == '-') {
		usage(stderr);
		return CLI_EXIT_USAGE;
	}
	for (i = 0; i < NCOMMANDS; i++)
		if (strcmp(argv[a], commands[i].name) == 0)
			break;
	if (i == NCOMMANDS) {
		cli_errorf("no command called %s", argv[a]);
		usage(stderr);
		return CLI_EXIT_USAGE;
	}
	/* Global options may also follow the command's name. */
	argc = cli_globals_after(argc, argv, a + 1, &config, &db);
	if (argc < 0) {
		usage(stderr);
		return CLI_EXIT_USAGE;
	}
	memset(&c, 0, sizeof(c));
	/* --account NAME, for the commands that read events (account.h). */
	argc = cli_account_arg(argc, argv, a + 1, commands[i].name,
	    &c.account);
	if (argc < 0)
		return CLI_EXIT_USAGE;
	c.no_settings = commands[i].no_settings;
	/* A command's --help reads no settings file (idemhook.h). */
	for (r = a + 1; r < argc && strcmp(argv[r], "--") != 0; r++)
		if (strcmp(argv[r], "--help") == 0)
			c.help = 1;
	c.gargc = argc;
	c.gargv = argv;
	if (cli_init(&c, config, db) != IH_OK) {
		cli_free(&c);
		return CLI_EXIT_USAGE;
	}
	c.gargc = a;
	rc = commands[i].fn(&c, argc - a, argv + a);
	if (c.help && rc == CLI_EXIT_OK)
		cli_account_help(stdout, commands[i].name);
	cli_free(&c);
	return rc;
}
