/*
 * cli_admin.c -- the operator's subcommands of idemhook beyond init and
 * work: list, show, verify, replay, purge, stats, check.
 */
#include <stddef.h>

#include "cli.h"

const struct cli_cmd cli_admin_cmds[] = {
	{ NULL, NULL, NULL }
};
