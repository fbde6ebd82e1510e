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
 * A PostgreSQL store has no file beside it: nothing is counted there.
 *
 * Every call opens, locks (flock) and closes the file, so that any
 * number of processes share it.  A receiver ignores a failure to count:
 * the delivery is refused all the same.
 */
#ifndef IH_SIGFAIL_H
#define IH_SIGFAIL_H

#include <stddef.h>
#include <stdint.h>

#define SIGFAIL_MINUTES		60
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
 * (at most SIGFAIL_MINUTES) before now_ms, and *first_ms to the start of
 * the oldest minute counted (0 when none).  A missing file is no count.
 * Returns IH_OK or IH_EIO.
 */
int	sigfail_count(const char *db_path, const char *provider,
	    int64_t now_ms, long minutes, long *count, int64_t *first_ms,
	    char *err, size_t errlen);

#endif
