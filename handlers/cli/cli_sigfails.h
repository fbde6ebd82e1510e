/*
 * cli_sigfails.h -- the refused signatures per provider in idemhook
 * stats, as the console shows them: those of the last hour and of the
 * last 24 hours (whole hours), whatever the stats window, since only
 * those are kept (sigfail.h: the file beside a SQLite store, the table
 * sigfails of a PostgreSQL one).
 */
#ifndef IH_CLI_SIGFAILS_H
#define IH_CLI_SIGFAILS_H

#include <stdint.h>

#include "idemhook.h"

enum cli_sigfails_mode {
	CLI_SIGFAILS_TABLE,
	CLI_SIGFAILS_JSON,	/* a member of the open object */
	CLI_SIGFAILS_PROM
};

/*
 * Prints the counts of provider (every provider when NULL) at now_ms to
 * stdout in mode: a table section, the JSON member
 * ', "refused_signatures": [...]', or the Prometheus family
 * idemhook_refused_signatures{provider,window="1h"|"24h"}.  Returns
 * IH_OK, or a failure with the cause in err.
 */
int	cli_sigfails_print(struct cli *c, struct store *st,
	    const char *provider, int64_t now_ms, enum cli_sigfails_mode mode,
	    char *err, size_t errlen);

#endif
