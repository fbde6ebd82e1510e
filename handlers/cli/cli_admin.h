/*
 * cli_admin.h -- what the operator's subcommands (list, show, verify,
 * replay, purge, stats, check) share: option and time parsing, safe
 * output of values that came from the network, and settings lookup.
 *
 * Exit codes of every subcommand: CLI_EXIT_OK, CLI_EXIT_FAIL (the store
 * failed, or the command found a problem: an invalid signature, a bad
 * setting), CLI_EXIT_USAGE (bad arguments).
 */
#ifndef IH_CLI_ADMIN_H
#define IH_CLI_ADMIN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cli.h"
#include "cli_text.h"
#include "store.h"

#define CLI_EXIT_OK	0
#define CLI_EXIT_FAIL	1
#define CLI_EXIT_USAGE	2

#define CLI_TIME_MAX	32	/* "2024-05-01T12:00:00Z" and a NUL */

/*
 * Matches argv[*a] against the option name, as "--name VALUE" or
 * "--name=VALUE".  Returns 1 and sets *val (advancing *a past a separate
 * value), 0 when it is another argument, -1 when the value is missing
 * (the message is printed).
 */
int	cli_opt(int argc, char **argv, int *a, const char *name,
	    const char **val);

/* Parses a decimal in [min, max] into *out; 0 or -1. */
int	cli_parse_long(const char *s, long min, long max, long *out);

/*
 * Parses a time for --since and --until into Unix ms: Unix seconds
 * ("1714560000"), an ISO 8601 date or time in UTC ("2024-05-01",
 * "2024-05-01T12:00", "2024-05-01T12:00:00Z"), or an age before now_ms
 * ("90s", "15m", "24h", "7d").  Returns 0 or -1.
 */
int	cli_parse_time(const char *s, int64_t now_ms, int64_t *out);

/* Writes ms as "2024-05-01T12:00:00Z", or "-" when ms is 0. */
void	cli_format_time(int64_t ms, char *buf, size_t len);

/*
 * Parses the options every event filter takes (--provider, --type,
 * --status, --since, --until, --limit) at argv[*a] into f.  Returns 1 when
 * it took one, 0 when argv[*a] is another argument, -1 on a bad value
 * (printed).
 */
int	cli_filter_opt(int argc, char **argv, int *a, int64_t now_ms,
	    struct store_filter *f);

/* Returns a setting from the environment, then the config file, or NULL. */
const char *cli_setting(struct cli *c, const char *name);

/* Returns the index in providers_all of name, or -1 (printed). */
int	cli_provider_index(const char *name);

int	cli_list(struct cli *c, int argc, char **argv);
int	cli_show(struct cli *c, int argc, char **argv);
int	cli_verify(struct cli *c, int argc, char **argv);
int	cli_replay(struct cli *c, int argc, char **argv);
int	cli_purge(struct cli *c, int argc, char **argv);
int	cli_stats(struct cli *c, int argc, char **argv);
int	cli_check(struct cli *c, int argc, char **argv);
/* idemhook console-password (cli_console.c). */
int	cli_console_password(struct cli *c, int argc, char **argv);

/* idemhook copy (cli_copy.c). */
int	cli_copy(struct cli *c, int argc, char **argv);

/* idemhook objects and idemhook object (cli_objects.c). */
int	cli_objects(struct cli *c, int argc, char **argv);
int	cli_object(struct cli *c, int argc, char **argv);

#endif
