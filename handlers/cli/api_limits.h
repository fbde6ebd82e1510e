/*
 * api_limits.h -- the settings that bound each call to a provider's API
 * (idemhook catch-up, idemhook health and idemhook work's health
 * checks), read by the command only:
 *
 *   IDEMHOOK_API_TIMEOUT          the longest one request may take,
 *                                 connection included (seconds, 1 to
 *                                 600, default 30); a request that
 *                                 stalls this long is not tried again
 *   IDEMHOOK_API_CONNECT_TIMEOUT  the longest its connection may take
 *                                 (seconds, 1 to IDEMHOOK_API_TIMEOUT,
 *                                 default 10, or the timeout if lower)
 *
 * An answer is never kept past API_HTTP_BODY_MAX (32 MiB), which is not
 * a setting.  A value that is not a whole number in range is refused
 * with one line naming the setting: the command does not run with a
 * limit it was not given.
 */
#ifndef IH_API_LIMITS_H
#define IH_API_LIMITS_H

#include <stddef.h>

#include "api_http.h"
#include "idemhook.h"

#define API_TIMEOUT_MAX_S	600

/*
 * Sets h's timeouts from c's settings.  Returns IH_OK, or IH_ECONFIG
 * with a message naming the setting in err.
 */
int	api_limits_read(struct cli *c, struct api_http *h, char *err,
	    size_t errlen);

#endif
