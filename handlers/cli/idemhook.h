/*
 * idemhook.h -- the idemhook command's context (idemhook.c): the
 * settings per provider (--db, then the environment, then the config
 * file, exactly as the receivers layer them) and one store, opened once
 * and shared by the subcommands; and the shape of the command table.
 *
 * Exit codes of every subcommand: CLI_EXIT_OK, CLI_EXIT_FAIL (the store
 * failed, or the command found a problem: an invalid signature, a bad
 * setting), CLI_EXIT_USAGE (bad arguments or configuration).  Errors are
 * printed to stderr by the function that meets them.
 */
#ifndef IH_IDEMHOOK_H
#define IH_IDEMHOOK_H

#include <stddef.h>

#include "config.h"
#include "config_vars.h"
#include "store.h"

#define CLI_EXIT_OK	0
#define CLI_EXIT_FAIL	1
#define CLI_EXIT_USAGE	2

#define CLI_MAX_PROVIDERS	16

struct cli {
	struct config_vars	 env;
	struct config_vars	 file;
	const char		*db_override;	/* --db */
	const char		*config_path; /* --config, IDEMHOOK_CONFIG */
	const char		*config_from;	/* how config_path was chosen */
	char			 config_found[4096]; /* config_find's answer */
	int			 loaded[CLI_MAX_PROVIDERS];
	struct config		 cfg[CLI_MAX_PROVIDERS]; /* by providers_all */
	struct store		*st;
	const char		*db_path;
	/* The program and its global options as given, for advice. */
	int			 gargc;
	char			**gargv;
	int			 no_settings;	/* the command needs none */
	int			 help;	/* --help given: no file is read */
	const char		*account;	/* --account, or NULL */
};

/*
 * One subcommand: argv[0] is its name; returns a CLI_EXIT_* code.  The
 * table of them all is in cli_main.c.
 */
struct cli_cmd {
	const char	*name;
	int		(*fn)(struct cli *c, int argc, char **argv);
	const char	*help;
	int		 no_settings;	/* runs without a settings file */
};

/*
 * c zeroed by the caller, with no_settings, help, gargc and gargv set.
 * With help, only the environment is read: no settings file is looked
 * for or read, so that a command's --help answers wherever it runs (as
 * root, whom a fixed place's file may be refused to; with a broken file).
 */
int	cli_init(struct cli *c, const char *config_path, const char *db_path);
void	cli_free(struct cli *c);
/* The settings of providers_all[i]; errors are printed. */
int	cli_config(struct cli *c, size_t i, const struct config **out);
/* Opens the store once; errors are printed with their fix. */
int	cli_store(struct cli *c, struct store **out);
/* Returns a setting from the environment, then the config file, or NULL. */
const char *cli_setting(struct cli *c, const char *name);

#endif
