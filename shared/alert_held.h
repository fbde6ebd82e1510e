/*
 * alert_held.h -- the alert that events are held back, raised by
 * idemhook work: for their API version (version.h), or as a body already
 * recorded that came again under a new id (provider.h, hold_replays;
 * such an event's last_error holds its reason).
 *
 * IDEMHOOK_ALERT_ACTION runs with IDEMHOOK_ALERT_REASON=held and one line
 * on stdin naming the provider, how many of its events are held (counted
 * up to ALERT_HELD_COUNT_MAX), of which how many repeats, and the
 * commands that show and release them.
 * One alert per rise of that count: held events that stay held alert
 * once, and each new one alerts again.  Looks at the store at most once
 * a minute per provider.  The state is the caller's, zeroed once.  A
 * failing look-up returns IH_ESTORE with the cause in err and changes
 * nothing; a failing alert is logged by the alert's runner.
 */
#ifndef IH_ALERT_HELD_H
#define IH_ALERT_HELD_H

#include <stddef.h>
#include <stdint.h>

#include "alert.h"

#define ALERT_HELD_COUNT_MAX	1000
#define ALERT_HELD_CHECK_MS	60000

struct alert_held {
	long	alerted_n[ALERT_MAX_PROVIDERS];
	int64_t	checked_at[ALERT_MAX_PROVIDERS];
};

/* For provider (index i of the caller's list): see above. */
int	alert_held_check(struct alert_held *ah, size_t i,
	    const struct config *cfg, const char *provider, struct store *st,
	    int64_t now_ms, const struct log_sink *log, char *err,
	    size_t errlen);

#endif
