/*
 * api_none.c -- the HTTP client of a build without libcurl (NO_CURL=1,
 * the static programs): every call is refused with the reason, so that
 * catch-up and health say what they need instead of failing to link.
 * libcurl's dependencies (Kerberos, LDAP, ...) have no static archives
 * on Debian, as for libpq.
 */
#include <stdio.h>
#include <string.h>

#include "api_http.h"
#include "ih.h"

static const char why[] = "this idemhook was built without libcurl "
    "(NO_CURL=1, as the static build is): catch-up and health need the "
    "dynamic build";

int
api_http_init(struct api_http *h)
{
	memset(h, 0, sizeof(*h));
	return IH_OK;
}

void
api_http_free(struct api_http *h)
{
	(void)h;
}

void
api_resp_free(struct api_resp *r)
{
	(void)r;
}

int
api_http_call(struct api_http *h, const struct api_call *c,
    struct api_resp *r, char *err, size_t errlen)
{
	(void)h;
	(void)c;
	memset(r, 0, sizeof(*r));
	snprintf(err, errlen, "%s", why);
	return IH_ECONFIG;
}

int
api_http_url_ok(const char *url, char *err, size_t errlen)
{
	(void)url;
	(void)err;
	(void)errlen;
	return IH_OK;
}

int
api_http_escape(const char *s, char *out, size_t outlen)
{
	if (strlen(s) >= outlen)
		return IH_ETOOBIG;
	memcpy(out, s, strlen(s) + 1);
	return IH_OK;
}
