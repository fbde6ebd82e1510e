/*
 * cli.h -- what the idemhook command's subcommands share: the settings
 * (environment, then the config file) per provider, and one store.
 */
#ifndef IH_CLI_H
#define IH_CLI_H

#include <stddef.h>

#include "config.h"
#include "store.h"

#define CLI_MAX_PROVIDERS	16

struct cli {
	struct config_vars	 env;
	struct config_vars	 file;
	const char		*db_override;	/* --db */
	const char		*config_path;	/* --config or IDEMHOOK_CONFIG */
	const char		*config_from;	/* how config_path was chosen */
	char			 config_found[4096]; /* config_find's answer */
	int			 loaded[CLI_MAX_PROVIDERS];
	struct config		 cfg[CLI_MAX_PROVIDERS]; /* by providers_all */
	struct store		*st;
	const char		*db_path;
	/* The program and its global options as given, for advice. */
	int			 gargc;
	char			**gargv;
};

struct cli_cmd {
	const char	*name;
	int		(*fn)(struct cli *c, int argc, char **argv);
	const char	*help;
};

/* The operator's subcommands (cli_admin.c); ends with a NULL name. */
extern const struct cli_cmd cli_admin_cmds[];

int	cli_init(struct cli *c, const char *config_path, const char *db_path);
void	cli_free(struct cli *c);
/* The settings of providers_all[i]; errors are printed. */
int	cli_config(struct cli *c, size_t i, const struct config **out);
/* Opens the store once; errors are printed with their fix. */
int	cli_store(struct cli *c, struct store **out);

#endif
