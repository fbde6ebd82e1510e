/*
 * request.h -- one HTTP request as the web server hands it over through
 * the CGI variables: method, headers, and a body read up to a limit.
 *
 * The same code serves FastCGI and plain CGI; only the two callbacks
 * differ.  Header lookups take the HTTP name ("Stripe-Signature") and
 * find the CGI variable (HTTP_STRIPE_SIGNATURE), so names match whatever
 * their case on the wire.
 *
 * The request owns its body buffer, which is reused by the next request
 * of the same process (request_free() releases it).  The body is checked
 * against the limit from CONTENT_LENGTH before any of it is read, and is
 * carried as pointer plus length: it may hold any bytes.
 */
#ifndef IH_REQUEST_H
#define IH_REQUEST_H

#include <stddef.h>

#define REQUEST_HEADER_NAME_MAX	128

struct request_io {
	/* Returns the CGI variable name, or NULL. */
	const char	*(*param)(void *arg, const char *name);
	/* Reads up to len bytes of body; returns the count, 0 at the end. */
	size_t		 (*read)(void *arg, void *buf, size_t len);
	void		 *arg;
};

struct request {
	struct request_io	 io;
	const char		*method;	/* "POST"; never NULL */
	const char		*content_type;	/* may be NULL */
	unsigned char		*body;		/* body_len bytes, then NUL */
	size_t			 body_len;
	size_t			 body_cap;
	int			 stream_done;	/* the body's end was read */
};

/* Prepares r for a new request read through io; keeps the buffer. */
void	request_begin(struct request *r, const struct request_io *io);

/*
 * Returns the value of the header called name (as sent on the wire), or
 * NULL.  Names longer than REQUEST_HEADER_NAME_MAX are never found.
 */
const char *request_header(const struct request *r, const char *name);

/*
 * Reads the body announced by CONTENT_LENGTH, at most max bytes.  With
 * no CONTENT_LENGTH (a chunked request passed on by the server) it reads
 * to the end of the stream, still at most max bytes.  Returns IH_OK;
 * IH_ETOOBIG (before reading anything when the length is announced) when
 * the body is over max; IH_EINVAL when CONTENT_LENGTH is not a number or
 * fewer bytes arrive than announced; IH_ENOMEM.  The buffer always holds
 * a NUL after the body, which is not counted in body_len.
 */
int	request_read_body(struct request *r, size_t max);

/*
 * Reads and discards what is left of the body, at most cap bytes.  A
 * CGI program that exits with its stdin unread makes some servers
 * (Apache's mod_cgid) drop the answer it already wrote.
 */
void	request_drain(struct request *r, size_t cap);

/* Releases the body buffer. */
void	request_free(struct request *r);

#endif
