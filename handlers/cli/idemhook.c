/*
 * idemhook.c -- the operator's command: one store, every provider.
 *
 *   idemhook init                 create or migrate the store
 *   idemhook work [--once] ...    process due events
 *
 * Settings come from the environment and the file named by
 * IDEMHOOK_CONFIG (or --config), exactly as the receivers read them, so
 * the command sees the same store, secrets and actions.
 *
 * Exit codes: 0 success; 1 the store or an event failed; 2 usage or
 * configuration error.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "alert.h"
#include "config.h"
#include "config_find.h"
#include "dispatch.h"
#include "harden.h"
#include "ih.h"
#include "log.h"
#include "providers.h"
#include "redact.h"
#include "settings.h"
#include "store.h"

#include "cli.h"
#include "cli_text.h"

extern char **environ;

/* Set by SIGINT/SIGTERM: finish the event in hand, then stop. */
static volatile sig_atomic_t stop_requested;

static void
on_stop(int sig)
{
	(void)sig;
	stop_requested = 1;
}

void
cli_free(struct cli *c)
{
	size_t i;

	for (i = 0; i < CLI_MAX_PROVIDERS; i++)
		if (c->loaded[i])
			config_free(&c->cfg[i]);
	store_close(c->st);
	config_vars_free(&c->env);
	config_vars_free(&c->file);
	memset(c, 0, sizeof(*c));
}

int
cli_init(struct cli *c, const char *config_path, const char *db_path)
{
	char err[512];
	const char *path;
	int rc;

	memset(c, 0, sizeof(*c));
	c->db_override = db_path;
	rc = config_vars_from_env(&c->env, environ);
	if (rc != IH_OK)
		return rc;
	/* Actions and children get no secret from the original block. */
	harden_scrub_environ(environ);
	path = config_path != NULL ? config_path :
	    config_vars_get(&c->env, "IDEMHOOK_CONFIG");
	c->config_from = config_path != NULL ? "--config" : "IDEMHOOK_CONFIG";
	if (path == NULL || *path == '\0') {
		/* As the receivers do under suEXEC: the fixed places. */
		rc = config_find(c->config_found, sizeof(c->config_found),
		    err, sizeof(err));
		if (rc == IH_ECONFIG) {
			fprintf(stderr, "idemhook: %s\n", err);
			return IH_ECONFIG;
		}
		path = rc == IH_OK ? c->config_found : NULL;
		c->config_from = "found in its fixed place";
	}
	if (path != NULL && *path != '\0') {
		c->config_path = path;
		rc = config_vars_from_file(&c->file, path, err, sizeof(err));
		if (rc != IH_OK) {
			cli_errorf("%s", err);
			return IH_ECONFIG;
		}
	}
	return IH_OK;
}

/* The --db option, as a settings source in front of the others. */
static const char *
db_option(void *arg, const char *name)
{
	const struct cli *c = arg;

	return strcmp(name, "IDEMHOOK_DB") == 0 ? c->db_override : NULL;
}

int
cli_config(struct cli *c, size_t i, const struct config **out)
{
	struct config_source front = { db_option, c };
	char err[512];
	int rc;

	if (i >= CLI_MAX_PROVIDERS)
		return IH_EINVAL;
	if (!c->loaded[i]) {
		/* --db goes through the same checks as IDEMHOOK_DB. */
		rc = settings_load(&c->cfg[i], providers_all[i]->name,
		    providers_all[i]->secret_var, &front, &c->env, &c->file,
		    err, sizeof(err));
		if (rc != IH_OK) {
			cli_errorf("%s: %s", providers_all[i]->name, err);
			return IH_ECONFIG;
		}
		c->loaded[i] = 1;
	}
	*out = &c->cfg[i];
	return IH_OK;
}

int
cli_store(struct cli *c, struct store **out)
{
	const struct config *cfg;
	struct store_opts o;
	char err[STORE_ERR_MAX];
	int rc;

	if (c->st == NULL) {
		rc = cli_config(c, 0, &cfg);
		if (rc != IH_OK)
			return rc;
		o.path = cfg->db_path;
		o.durable_as = cfg->synchronous == 1 ? STORE_RELAXED :
		    STORE_DURABLE;
		o.busy_timeout_ms = cfg->busy_timeout_ms;
		rc = store_open(&o, &c->st, err, sizeof(err));
		if (rc != IH_OK) {
			fprintf(stderr, "idemhook: %s\n", err);
			fprintf(stderr, "idemhook: check IDEMHOOK_DB (or --db) "
			    "names %s\n", store_is_postgres(cfg->db_path) ?
			    "a PostgreSQL server and database this user can "
			    "reach (the password in PGPASSFILE or the "
			    "IDEMHOOK_CONFIG file)" :
			    "a file this user can create and write");
			return rc;
		}
		c->db_path = cfg->db_path;
	}
	*out = c->st;
	return IH_OK;
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

static int
cmd_work(struct cli *c, int argc, char **argv)
{
	const struct config *cfg;
	struct dispatch d;
	struct store *st;
	struct timespec nap;
	char owner[128], err[STORE_ERR_MAX], *end;
	const char *only = NULL;
	double interval = 1.0;
	long done = 0;
	size_t i;
	struct log_dest ld;
	struct alert_silence silence;
	long found;
	int once = 0, any, rc, a, ret = 0;

	for (a = 1; a < argc; a++) {
		if (strcmp(argv[a], "--once") == 0)
			once = 1;
		else if (strcmp(argv[a], "--provider") == 0 && a + 1 < argc)
			only = argv[++a];
		else if (strcmp(argv[a], "--interval") == 0 && a + 1 < argc) {
			errno = 0;
			interval = strtod(argv[++a], &end);
			if (errno != 0 || *end != '\0' || interval < 0.01 ||
			    interval > 3600) {
				fprintf(stderr, "idemhook: --interval takes "
				    "seconds from 0.01 to 3600\n");
				return 2;
			}
		} else if (strcmp(argv[a], "--help") == 0) {
			work_usage(stdout);
			return 0;
		} else {
			work_usage(stderr);
			return 2;
		}
	}
	if (only != NULL && providers_find(only) == NULL) {
		cli_errorf("no provider called %s", only);
		return 2;
	}
	if (cli_store(c, &st) != IH_OK)
		return 1;
	/* The processing lines go where the receivers send theirs. */
	log_dest_init(&ld);
	if (cli_config(c, 0, &cfg) == IH_OK &&
	    log_dest_set(&ld, cfg->log, err, sizeof(err)) != IH_OK)
		fprintf(stderr, "idemhook: %s\n", err);
	dispatch_owner(owner, sizeof(owner));
	memset(&silence, 0, sizeof(silence));
	signal(SIGINT, on_stop);
	signal(SIGTERM, on_stop);
	signal(SIGPIPE, SIG_IGN);
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
			/* IDEMHOOK_SILENCE_ALERT: one alert per silence. */
			if (alert_silence_check(&silence, i, cfg,
			    providers_all[i]->name, st, store_now_ms(), d.log,
			    err, sizeof(err)) != IH_OK)
				cli_errorf("work: silence check: %s", err);
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
	if (once)
		printf("processed %ld event(s)\n", done);
out:
	log_dest_close(&ld);
	return ret;
}

static const struct cli_cmd builtin[] = {
	{ "init", cmd_init, "create or migrate the store" },
	{ "work", cmd_work, "process due events (--once for cron)" },
};

static void
usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: idemhook [--config FILE] [--db PATH] COMMAND "
	    "[ARGS]\n\ncommands:\n");
	for (i = 0; i < sizeof(builtin) / sizeof(builtin[0]); i++)
		fprintf(f, "  %-8s %s\n", builtin[i].name, builtin[i].help);
	for (i = 0; cli_admin_cmds[i].name != NULL; i++)
		fprintf(f, "  %-8s %s\n", cli_admin_cmds[i].name,
		    cli_admin_cmds[i].help);
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
	int a = 1, rc = 2;

	/* Before any secret is read: no core file, no ptrace. */
	if (harden_process(err, sizeof(err)) != IH_OK)
		fprintf(stderr, "idemhook: cannot disable core dumps: %s\n",
		    err);
	while (a < argc && argv[a][0] == '-') {
		if (strcmp(argv[a], "--config") == 0 && a + 1 < argc) {
			config = argv[a + 1];
			a += 2;
		} else if (strcmp(argv[a], "--db") == 0 && a + 1 < argc) {
			db = argv[a + 1];
			a += 2;
		} else if (strcmp(argv[a], "--help") == 0 ||
		    strcmp(argv[a], "-h") == 0) {
			usage(stdout);
			return 0;
		} else {
			usage(stderr);
			return 2;
		}
	}
	if (a >= argc) {
		usage(stderr);
		return 2;
	}
	if (cli_init(&c, config, db) != IH_OK) {
		cli_free(&c);
		return 2;
	}
	c.gargc = a;
	c.gargv = argv;
	for (i = 0; i < sizeof(builtin) / sizeof(builtin[0]); i++)
		if (strcmp(argv[a], builtin[i].name) == 0) {
			rc = builtin[i].fn(&c, argc - a, argv + a);
			goto out;
		}
	for (i = 0; cli_admin_cmds[i].name != NULL; i++)
		if (strcmp(argv[a], cli_admin_cmds[i].name) == 0) {
			rc = cli_admin_cmds[i].fn(&c, argc - a, argv + a);
			goto out;
		}
	cli_errorf("no command called %s", argv[a]);
	usage(stderr);
out:
	cli_free(&c);
	return rc;
}
