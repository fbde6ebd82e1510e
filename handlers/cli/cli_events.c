/*
 * cli_events.c -- what idemhook list, show, verify and replay share:
 * the PROVIDER EVENT_ID arguments and an event's metadata as JSON.
 * Values that came from the network (ids, types, errors) are printed
 * with control bytes masked, so that a crafted event cannot drive the
 * operator's terminal.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cli_args.h"
#include "cli_events.h"
#include "cli_text.h"
#include "idemhook.h"
#include "ih.h"
#include "store.h"

/*
 * Writes the event's metadata as one JSON object: the fields of list
 * --json, and the "event" of show --json.  Times are Unix ms, null when
 * unset.
 */
void
cli_event_json(FILE *f, const struct store_row *row)
{
	fputs("{\"provider\": ", f);
	cli_put_json(f, row->provider);
	cli_json_field(f, "account", row->account);
	cli_json_field(f, "event_id", row->event_id);
	cli_json_field(f, "type", row->event_type);
	cli_json_field(f, "subtype", row->subtype);
	cli_json_field(f, "order_key", row->order_key);
	cli_json_field(f, "status", row->status);
	cli_json_field(f, "api_version", row->api_version);
	cli_json_field(f, "source_account", row->source_account);
	/* A Stripe thin event not fetched yet (store_thin.h). */
	fprintf(f, ", \"needs_fetch\": %s", row->needs_fetch ? "true" :
	    "false");
	fprintf(f, ", \"received_at\": %lld, \"last_seen_at\": %lld, "
	    "\"duplicates\": %lld, \"attempts\": %lld, "
	    "\"next_attempt_at\": %lld", (long long)row->received_at,
	    (long long)row->last_seen_at, (long long)row->duplicates,
	    (long long)row->attempts, (long long)row->next_attempt_at);
	cli_json_ms(f, "done_at", row->done_at);
	cli_json_ms(f, "purged_at", row->purged_at);
	cli_json_ms(f, "lease_until", row->lease_until);
	cli_json_field(f, "lease_owner", row->lease_owner);
	cli_json_field(f, "last_error", row->last_error);
	if (row->has_payload)
		fprintf(f, ", \"payload_bytes\": %lld}",
		    (long long)row->payload_len);
	else
		fputs(", \"payload_bytes\": null}", f);
}

/*
 * Parses "[FLAG]... [--] PROVIDER EVENT_ID", where flags is a NULL-ended
 * list of flag names and set[i] becomes 1 for each flags[i] given.
 * Returns -1 to go on, else the exit code (after --help, or a usage
 * error, printed).
 */
int
cli_event_args(int argc, char **argv, const char *const *flags, int *set,
    const char **provider, const char **event_id, void (*usage)(FILE *))
{
	const char *pos[2] = { NULL, NULL };
	int a, i, n = 0, bad = 0, opts = 1, known;

	for (a = 1; a < argc; a++) {
		known = 0;
		if (opts && strcmp(argv[a], "--") == 0) {
			opts = 0;
			continue;
		}
		if (opts && strcmp(argv[a], "--help") == 0) {
			usage(stdout);
			return CLI_EXIT_OK;
		}
		for (i = 0; opts && flags != NULL && flags[i] != NULL; i++)
			if (strcmp(argv[a], flags[i]) == 0) {
				set[i] = 1;
				known = 1;
			}
		if (known)
			continue;
		if ((opts && argv[a][0] == '-') || n >= 2) {
			if (argv[a][0] == '-' && n >= 1)
				cli_errorf("%s: an event id starting with - "
				    "goes after --", argv[0]);
			bad = 1;
		} else
			pos[n++] = argv[a];
	}
	if (bad || n != 2) {
		usage(stderr);
		return CLI_EXIT_USAGE;
	}
	*provider = pos[0];
	*event_id = pos[1];
	if (cli_provider_index(*provider) < 0)
		return CLI_EXIT_USAGE;
	return -1;
}
