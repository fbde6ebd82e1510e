/*
 * cli_args.h -- the one argument parser of the idemhook command: options
 * ("--name VALUE", "--name=VALUE"), numbers, times, event filters and
 * provider names.  Every subcommand parses its argv with these, so that
 * all take the same forms and print the same errors.  Each function
 * prints its own error message (stderr) and reports failure in its
 * return value; none allocates.
 */
#ifndef IH_CLI_ARGS_H
#define IH_CLI_ARGS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "store.h"

#define CLI_TIME_MAX	32	/* "2024-05-01T12:00:00Z" and a NUL */

/*
 * Matches argv[*a] against the option name, as "--name VALUE" or
 * "--name=VALUE".  Returns 1 and sets *val (advancing *a past a separate
 * value), 0 when it is another argument, -1 when the value is missing
 * (the message is printed).
 */
int	cli_opt(int argc, char **argv, int *a, const char *name,
	    const char **val);

/*
 * Takes the global options --config and --db out of argv[from..argc),
 * where they follow the command's name ("idemhook copy --db OLD ..."),
 * setting *config and *db, and closes the gap.  A stand-alone "--" ends
 * the search.  Returns the new argc, or -1 (message printed) for a
 * missing value or an option given twice.
 */
int	cli_globals_after(int argc, char **argv, int from,
	    const char **config, const char **db);

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

/* Returns the index in providers_all of name, or -1 (printed). */
int	cli_provider_index(const char *name);

/*
 * For an argument a command does not take: with arg "--help", prints
 * usage to stdout and returns CLI_EXIT_OK; else prints it to stderr and
 * returns CLI_EXIT_USAGE.
 */
int	cli_help_or_usage(const char *arg, void (*usage)(FILE *));

#endif
