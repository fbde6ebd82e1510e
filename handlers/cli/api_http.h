/*
 * api_http.h -- the idemhook command's one HTTP client for the
 * providers' own APIs (catch-up and health), on libcurl.
 *
 * Every call verifies TLS (peer and host name), has a connect timeout
 * and a timeout for the whole call, follows no redirect (so the key is
 * never sent to another host), and keeps at most body_max bytes of an
 * answer.  A URL must be https, or plain http to a loopback address only
 * (the tests' stand-ins).  The credential travels in the one header the
 * provider reads it from (api_call.auth_name), is never logged, printed
 * or put in an error message; URLs in messages pass through ih_redact().
 *
 * 429 and 5xx answers, GitHub's exhausted rate limit (403 or 429 with
 * X-RateLimit-Remaining: 0) and network failures (not a certificate
 * that does not verify, nor a call that timed out: a stall is not
 * waited for twice) are retried, at most
 * max_tries calls in all, after Retry-After, the rate limit's reset, or
 * an exponential backoff (1 s, 2 s, 4 s ...), each wait at most
 * wait_max_s: a longer one is not waited for, and the call fails.
 *
 * A struct api_http belongs to one thread; it keeps its connection
 * between calls.  Failures return an IH_* code with a message in err.
 */
#ifndef IH_API_HTTP_H
#define IH_API_HTTP_H

#include <signal.h>
#include <stddef.h>

#define API_HTTP_BODY_MAX	(32L * 1024 * 1024)
#define API_HTTP_URL_MAX	2048
#define API_HTTP_ERR_MAX	512

struct api_http {
	void	*curl;		/* CURL * */
	long	 timeout_s;	/* one call, connection included */
	long	 connect_timeout_s;
	int	 max_tries;
	long	 wait_max_s;	/* longest wait before a retry */
	size_t	 body_max;
	const char *agent;	/* User-Agent, "idemhook (catch-up)" */
	long	 calls;		/* HTTP requests made */
	long	 retries;	/* of which retries */
	/* Set: the call in flight, or the wait, ends at once (IH_EIO,
	 * "stopped"); NULL: never (idemhook work's health thread sets it). */
	const volatile sig_atomic_t *stop;
};

/* One request.  Nothing here is copied or kept after the call. */
struct api_call {
	const char		*method;	/* "GET", "POST", "PUT" */
	const char		*url;
	const char		*auth_name;	/* "Authorization", or NULL */
	const char		*auth_value;	/* the secret header value */
	const char *const	*headers;	/* "Name: value", or NULL */
	const char		*body;		/* JSON, or NULL */
	size_t			 body_len;
};

struct api_resp {
	long	 status;
	char	*body;		/* malloc'd, NUL-terminated, len bytes */
	size_t	 len;
	char	 next[API_HTTP_URL_MAX];	/* Link rel="next", or "" */
	long	 retry_after_s;	/* -1 when absent */
	long	 rl_remaining;	/* X-RateLimit-Remaining, -1 when absent */
	long long rl_reset;	/* X-RateLimit-Reset (Unix s), -1 */
};

/*
 * Sets h up with the defaults (timeout 30 s, connect 10 s: the
 * command's settings change them, api_limits.h; 4 tries,
 * waits up to 60 s, body_max API_HTTP_BODY_MAX).  Returns IH_OK or
 * IH_ENOMEM.
 */
int	api_http_init(struct api_http *h);
void	api_http_free(struct api_http *h);

/*
 * Makes the call, retried as the header says, and fills *r with the last
 * answer, whatever its status.  Returns IH_OK; IH_EINVAL for a URL this
 * client refuses; IH_ETOOBIG for an answer over body_max; IH_EIO when no
 * answer came (DNS, connection, TLS, timeout) or the retries ran out on
 * 429/5xx (then *r holds the last answer); IH_ENOMEM.  On failure err
 * holds a message safe to print.
 */
int	api_http_call(struct api_http *h, const struct api_call *c,
	    struct api_resp *r, char *err, size_t errlen);
void	api_resp_free(struct api_resp *r);

/*
 * Checks that url is one this client calls: https, or http to 127.0.0.1,
 * ::1 or localhost.  Returns IH_OK or IH_EINVAL with the reason in err.
 */
int	api_http_url_ok(const char *url, char *err, size_t errlen);

/*
 * Writes s percent-encoded for a URL's path or query into out.  Returns
 * IH_OK, IH_ETOOBIG or IH_ENOMEM.
 */
int	api_http_escape(const char *s, char *out, size_t outlen);

#endif
