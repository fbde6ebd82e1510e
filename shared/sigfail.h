/*
 * sigfail.h -- counts of refused signatures per provider, for the alarm
 * on a burst of them (a secret rotated on one side only looks like
 * silence to the application while the provider sees 401s for hours).
 *
 * The receivers note each delivery whose signature or token does not
 * verify in "<store>-sigfail", a small file beside a SQLite store
 * (created 0600, never followed through a symbolic link): per provider,
 * a count per minute for the last SIGFAIL_MINUTES minutes.  Nothing of
 * the request is kept, only the count; the store is not written.
 * idemhook work reads the counts (sigfail_count()) and alerts when they
 * pass IDEMHOOK_BADSIG_ALERT while no delivery was accepted (alert.h).
 * A PostgreSQL store (several hosts) has no file beside it: there a
 * FastCGI receiver counts in memory and its writer thread adds the
 * counts to the store (store_health.h, table sigfails, migration 10)
 * at most every SIGFAIL_FLUSH_MS (sigfail_pend.h): a refusal opens no
 * connection and commits nothing.
 *
 * Every call opens, locks (flock) and closes the file, so that any
 * number of processes share it.  A receiver ignores a failure to count:
 * the delivery is refused all the same.
 */
#ifndef IH_SIGFAIL_H
#define IH_SIGFAIL_H

#include <stddef.h>
#include <stdint.h>

#include "store.h"
#include "store_health.h"

#define SIGFAIL_MINUTES		60
/* Whole hours counted too, for the console's last day. */
#define SIGFAIL_HOURS		24
#define SIGFAIL_PROVIDERS	16

/*
 * Adds one refused signature for provider at now_ms to the counts
 * beside the store db_path.  Returns IH_OK (also for a PostgreSQL
 * store, where nothing is counted), or IH_EIO with the cause in err.
 */
int	sigfail_note(const char *db_path, const char *provider, int64_t now_ms,
	    char *err, size_t errlen);

/*
 * Sets *count to the refused signatures of provider in the last minutes
 * before now_ms (past SIGFAIL_MINUTES, in whole hours, at most
 * SIGFAIL_HOURS), and *first_ms to the start of the oldest minute or
 * hour counted (0 when none).  st, when not NULL, is the store db_path
 * names: a PostgreSQL one is asked; a SQLite one, or none, means the
 * file, where a missing file is no count.  Returns IH_OK, IH_EIO or
 * IH_ESTORE.
 */
int	sigfail_count(struct store *st, const char *db_path,
	    const char *provider, int64_t now_ms, long minutes, long *count,
	    int64_t *first_ms, char *err, size_t errlen);

/*
 * Calls fn per provider with refused signatures counted, with those of
 * the last hour and of the last SIGFAIL_HOURS hours before now_ms (in
 * whole hours): from st when it is a PostgreSQL store, else from the
 * file beside db_path (none: no call).  Returns IH_OK, IH_EIO,
 * IH_ESTORE, or what fn returned.
 */
int	sigfail_sums(struct store *st, const char *db_path, int64_t now_ms,
	    store_sigfail_fn fn, void *arg, char *err, size_t errlen);

#endif
