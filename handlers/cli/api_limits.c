/* api_limits.c -- the API client's timeouts from the settings. */
#include <stdio.h>

#include "api_limits.h"
#include "cli_args.h"
#include "ih.h"

/* One setting in seconds, lo to hi; *out is left alone when unset. */
static int
seconds(struct cli *c, const char *name, long lo, long hi, long *out,
    char *err, size_t errlen)
{
	const char *v = cli_setting(c, name);

	if (v == NULL || *v == '\0')
		return IH_OK;
	if (cli_parse_long(v, lo, hi, out) == 0)
		return IH_OK;
	/* The value is not shown: it may be anything. */
	snprintf(err, errlen, "%s: not a whole number of seconds from %ld "
	    "to %ld", name, lo, hi);
	return IH_ECONFIG;
}

int
api_limits_read(struct cli *c, struct api_http *h, char *err,
    size_t errlen)
{
	long t = h->timeout_s, ct = -1;
	int rc;

	rc = seconds(c, "IDEMHOOK_API_TIMEOUT", 1, API_TIMEOUT_MAX_S, &t,
	    err, errlen);
	if (rc == IH_OK)
		rc = seconds(c, "IDEMHOOK_API_CONNECT_TIMEOUT", 1, t, &ct,
		    err, errlen);
	if (rc != IH_OK)
		return rc;
	h->timeout_s = t;
	if (ct > 0)
		h->connect_timeout_s = ct;
	else if (h->connect_timeout_s > t)
		h->connect_timeout_s = t;
	return IH_OK;
}
