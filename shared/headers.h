/*
 * headers.h -- the kept headers: the few request headers a provider
 * needs to verify an event again (its signature, timestamp, id), stored
 * with the event as "Name: value\n" lines in the provider's order.
 *
 * This module is the format's only writer and only reader: the
 * receivers write it (headers_keep), the replay check looks for one of
 * its lines (headers_line), and the operator's command reads it back
 * (headers_next) and turns names into CGI variables (headers_cgi_name),
 * as request.c looks them up.
 */
#ifndef IH_HEADERS_H
#define IH_HEADERS_H

#include <stddef.h>

#include "request.h"

/* Room for "HTTP_" and a header name of REQUEST_HEADER_NAME_MAX. */
#define HEADERS_CGI_NAME_MAX	(REQUEST_HEADER_NAME_MAX + 6)

/*
 * Writes the headers of r named in names (NULL-terminated, may be NULL)
 * that the request has, as lines, into buf of cap bytes ("" when none).
 * Returns IH_OK, or IH_ETOOBIG when they do not fit.
 */
int	headers_keep(const struct request *r, const char *const *names,
	    char *buf, size_t cap);

/*
 * Writes "\nName: value\n" into buf: one kept line as it appears inside
 * the stored text with its neighbours' newlines.  Returns IH_OK or
 * IH_ETOOBIG.
 */
int	headers_line(const char *name, const char *value, char *buf,
	    size_t cap);

/* One stored line, borrowed from the text. */
struct headers_field {
	const char	*name;
	size_t		 name_len;
	const char	*value;		/* "" for a line without ": " */
	size_t		 value_len;
	int		 valued;	/* the line had ": " */
};

/*
 * Reads the next non-empty line of the stored text at *pos into *f and
 * moves *pos past it.  Returns 1 for a line, 0 at the end.  A line
 * without ": " is a name with an empty value.
 */
int	headers_next(const char **pos, struct headers_field *f);

/*
 * Writes the CGI variable of header name (name_len bytes): "HTTP_" and
 * the name upper-cased, '-' as '_'.  Returns IH_OK, or IH_EINVAL for an
 * empty name or one longer than REQUEST_HEADER_NAME_MAX.
 */
int	headers_cgi_name(const char *name, size_t name_len, char *out,
	    size_t cap);

#endif
