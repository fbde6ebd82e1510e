/*
 * cli_check_sources.c -- idemhook check's opening lines: where the
 * settings came from (cli_check_sources.h).
 */
#include <limits.h>
#include <stdio.h>
#include <unistd.h>

#include "cli_check_sources.h"
#include "config_find.h"

/*
 * Says what the settings were read from, and as whom: the file (and how
 * it was chosen), and the names (never the values) of the IDEMHOOK_*
 * variables in the environment.  Root reads files that the programs'
 * user may not, so a check run as root is flagged.
 */
void
cli_check_sources(const struct cli *c)
{
	char name[256] = "?", home[PATH_MAX] = "~";
	size_t i;

	config_find_user((unsigned)geteuid(), name, sizeof(name), home,
	    sizeof(home));
	printf("settings: read as user %s (uid %u)\n", name, geteuid());
	if (c->config_path != NULL)
		printf("settings: file %s (%s)\n", c->config_path,
		    c->config_from != NULL ? c->config_from : "?");
	else
		printf("settings: no file (IDEMHOOK_CONFIG unset; none at "
		    "%s/%s or %s)\n", home, CONFIG_FIND_USER,
		    CONFIG_FIND_SYSTEM);
	printf("settings: environment:");
	for (i = 0; i < c->env.n; i++)
		printf(" %s", c->env.names[i]);
	printf("%s\n", c->env.n == 0 ? " no IDEMHOOK_* variable" : "");
	if (geteuid() == 0)
		printf("note: run as root, which can read what the programs' "
		    "user may not: run check as that user too (runuser -u "
		    "www-data -- idemhook check)\n");
}
