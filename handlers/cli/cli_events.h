/*
 * cli_events.h -- what the event commands (cli_list.c, cli_show.c,
 * cli_verify.c, cli_replay.c) share: the PROVIDER EVENT_ID arguments
 * and an event's metadata as JSON (cli_events.c).  Nothing here keeps
 * state; errors are printed by the function that finds them.
 */
#ifndef IH_CLI_EVENTS_H
#define IH_CLI_EVENTS_H

#include <stdio.h>

#include "store.h"

/*
 * Parses "[FLAG]... [--] PROVIDER EVENT_ID", where flags is a NULL-ended
 * list of flag names (or NULL) and set[i] becomes 1 for each flags[i]
 * given.  *provider and *event_id point into argv.  Returns -1 to go on,
 * else the exit code (after --help, or a usage error, printed with
 * usage()).
 */
int	cli_event_args(int argc, char **argv, const char *const *flags,
	    int *set, const char **provider, const char **event_id,
	    void (*usage)(FILE *));

/*
 * Writes the row's metadata as one JSON object: the fields of list
 * --json, and the "event" of show --json.  Times are Unix ms, null when
 * unset.
 */
void	cli_event_json(FILE *f, const struct store_row *row);

#endif
