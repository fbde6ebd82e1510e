/*
 * store_waiting.h -- why a pending event waits (forward.h: an object's
 * events are claimed one at a time, in the order received), for the
 * operator's list and console.  One read, outside any transaction.
 */
#ifndef IH_STORE_WAITING_H
#define IH_STORE_WAITING_H

#include <stddef.h>
#include <stdint.h>

#include "store.h"

/*
 * Writes to id (cap bytes, cut to fit) the event id of the oldest
 * unfinished (not done, dead nor quarantined) earlier event of the same
 * provider, account and order key as the event at rowid, or "" when
 * there is none (or no such event, or it has no order key).  Returns
 * IH_OK or IH_ESTORE with the cause in err.
 */
int	store_behind(struct store *st, int64_t rowid, char *id, size_t cap,
	    char *err, size_t errlen);

#endif
