/*
 * respond.h -- the HTTP answers every idemhook endpoint gives.
 *
 * Every answer is a CGI response (a Status header, then the body) with a
 * small JSON body: {"status":"accepted"}, {"status":"duplicate"}, or
 * {"status":"error","error":"<code>"}.  The status codes are the
 * contract in handlers/README.md (HTTP contract); nothing here ever
 * answers with a redirect.
 */
#ifndef IH_RESPOND_H
#define IH_RESPOND_H

#include <stddef.h>

struct respond_io {
	/* Writes len bytes; returns the count written. */
	size_t	(*write)(void *arg, const void *p, size_t len);
	void	 *arg;
};

struct respond {
	int		 status;	/* HTTP status code */
	const char	*body_status;	/* "accepted", "duplicate", "error" */
	const char	*error;		/* error code, or NULL */
	const char	*allow;		/* Allow header, or NULL */
	int		 retry_after;	/* seconds, or 0 for none */
};

/* Returns the reason phrase for an HTTP status code. */
const char *respond_reason(int status);

/*
 * Writes the response described by rsp.  Returns IH_OK, IH_EIO when the
 * writer fell short, IH_EINVAL when a field is malformed.
 */
int	respond_send(const struct respond_io *io, const struct respond *rsp);

#endif
