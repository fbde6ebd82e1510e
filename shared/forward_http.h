/*
 * forward_http.h -- the one POST of a forwarded event (forward.h), on
 * libcurl: TLS verified (peer and host name), no redirect followed, a
 * connect timeout and one for the whole call, at most
 * FORWARD_ANSWER_MAX bytes of the answer read.  A URL is https, or plain
 * http to a loopback host.  No retry here: the processing machinery
 * retries the attempt.  Messages never hold a header's value.
 *
 * forward_http_none.c stands in when the build has no libcurl (the
 * static build, NO_CURL=1): every URL is refused there, so that a
 * forwarding setting fails loudly instead of doing nothing.
 */
#ifndef IH_FORWARD_HTTP_H
#define IH_FORWARD_HTTP_H

#include <stddef.h>

#define FORWARD_URL_MAX	2048
#define FORWARD_ANSWER_MAX	(64L * 1024)	/* answer bytes read */

/* One request; nothing is kept after the call. */
struct forward_http_req {
	const char		*url;
	const char		*headers;	/* "Name: value\n" lines */
	const unsigned char	*body;
	size_t			 body_len;
	long			 timeout_s;
};

struct forward_http_resp {
	long	 status;		/* 0: no answer */
	long	 retry_after_s;		/* -1 when absent */
	char	 answer[256];		/* its first bytes, raw */
	size_t	 answer_len;
};

/*
 * Checks url as a destination.  Returns IH_OK, or IH_ECONFIG with the
 * reason in err (which never holds the URL's user information).
 */
int	forward_http_url_ok(const char *url, char *err, size_t errlen);

/*
 * POSTs req and fills *r.  Returns IH_OK when an answer came, whatever
 * its status; IH_EIO when none did (DNS, connection, TLS, timeout, an
 * answer over the cap), the reason in err; IH_ENOMEM.
 */
int	forward_http_post(const struct forward_http_req *req,
	    struct forward_http_resp *r, char *err, size_t errlen);

#endif
