/*
 * store_kept.h -- an event's kept headers (headers.h) read alone, for a
 * process that holds the claimed event and needs its headers again
 * (forwarding, forward.h), without reading its payload a second time.
 */
#ifndef IH_STORE_KEPT_H
#define IH_STORE_KEPT_H

#include <stddef.h>
#include <stdint.h>

#include "store.h"

/*
 * Sets *out to a copy (malloc'd, the caller frees it) of the kept headers
 * of the event at rowid, "" when it has none.  Returns IH_OK,
 * IH_ENOTFOUND when there is no such event, IH_ENOMEM, or IH_ESTORE with
 * the cause in err.
 */
int	store_kept_headers(struct store *st, int64_t rowid, char **out,
	    char *err, size_t errlen);

#endif
