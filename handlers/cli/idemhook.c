/*
 * idemhook.c -- the idemhook command's context (idemhook.h): the settings
 * per provider and the one store, opened once and shared by the
 * subcommands.  main(), the table of subcommands, init and work are in
 * cli_main.c; the other subcommands one group a file (see cli_main.c).
 *
 * Settings come from the environment and the file named by
 * IDEMHOOK_CONFIG (or --config), exactly as the receivers read them, so
 * the command sees the same store, secrets and actions.
 */
#include <sys/stat.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "config_find.h"
#include "harden.h"
#include "ih.h"
#include "providers.h"
#include "settings.h"
#include "store.h"

#include "cli_text.h"
#include "idemhook.h"

extern char **environ;

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

/*
 * After a settings file in a fixed place was refused: root meets the
 * programs' user's file, and the way on is to run as that user.
 */
static void
find_hint(char **argv, int argc)
{
	char name[256], home[4096];
	struct stat sb;
	int a;

	if (geteuid() != 0 || stat(CONFIG_FIND_SYSTEM, &sb) != 0 ||
	    sb.st_uid == 0 || config_find_user((unsigned)sb.st_uid, name,
	    sizeof(name), home, sizeof(home)) != IH_OK)
		return;
	fprintf(stderr, "idemhook: that file is the programs' user's: run "
	    "the command as that user,\n  runuser -u %s --", name);
	for (a = 0; a < argc; a++)
		fprintf(stderr, " %s", argv[a]);
	fprintf(stderr, "\n  or name a file root may use with "
	    "--config FILE\n");
}

int
cli_init(struct cli *c, const char *config_path, const char *db_path)
{
	char err[512];
	const char *path;
	int rc;

	/* main() has zeroed c and set what it knows of the command. */
	c->db_override = db_path;
	rc = config_vars_from_env(&c->env, environ);
	if (rc != IH_OK)
		return rc;
	/* Actions and children get no secret from the original block. */
	harden_scrub_environ(environ);
	if (c->help)
		return IH_OK;
	path = config_path != NULL ? config_path :
	    config_vars_get(&c->env, "IDEMHOOK_CONFIG");
	c->config_from = config_path != NULL ? "--config" : "IDEMHOOK_CONFIG";
	/*
	 * As the receivers do: the fixed places only when nothing was given,
	 * neither an IDEMHOOK_* variable nor --db.  A command that needs no
	 * settings (console-password) skips a file it cannot use.
	 */
	if ((path == NULL || *path == '\0') && db_path == NULL &&
	    config_find_wanted(&c->env)) {
		rc = config_find(c->config_found, sizeof(c->config_found),
		    err, sizeof(err));
		if (rc == IH_ECONFIG && !c->no_settings) {
			fprintf(stderr, "idemhook: %s\n", err);
			find_hint(c->gargv, c->gargc);
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
		/*
		 * --db goes through the same checks as IDEMHOOK_DB; with
		 * --account, the account's own settings and secrets.
		 */
		rc = settings_load_account(&c->cfg[i], providers_all[i]->name,
		    providers_all[i]->secret_var, c->account, &front, &c->env,
		    &c->file, err, sizeof(err));
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
		o.durable_as = store_durable_as(cfg->synchronous);
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
			if (strstr(cfg->db_path, "sslmode=verify-full") != NULL)
				fprintf(stderr, "idemhook: sslmode=verify-full "
				    "needs the server's CA in "
				    "~/.postgresql/root.crt and a certificate "
				    "for its name; on a local socket leave "
				    "sslmode out\n");
			return rc;
		}
		c->db_path = cfg->db_path;
	}
	*out = c->st;
	return IH_OK;
}

const char *
cli_setting(struct cli *c, const char *name)
{
	struct config_source src[2];

	src[0].get = config_vars_get;
	src[0].arg = &c->env;
	src[1].get = config_vars_get;
	src[1].arg = &c->file;
	return config_lookup(src, 2, name);
}
