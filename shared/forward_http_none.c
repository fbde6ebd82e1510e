/* forward_http_none.c -- no HTTP client in this build: no forwarding. */
#include <stdio.h>

#include "forward_http.h"
#include "ih.h"

int
forward_http_url_ok(const char *url, char *err, size_t errlen)
{
	(void)url;
	snprintf(err, errlen, "is set, but this build of idemhook has no "
	    "HTTP client (the static build): forwarding needs the dynamic "
	    "build");
	return IH_ECONFIG;
}

int
forward_http_post(const struct forward_http_req *req,
    struct forward_http_resp *r, char *err, size_t errlen)
{
	(void)req;
	r->status = 0;
	r->retry_after_s = -1;
	r->answer_len = 0;
	snprintf(err, errlen, "this build has no HTTP client");
	return IH_EIO;
}
