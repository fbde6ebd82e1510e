/*
 * html.h -- a bounded output buffer for the console's pages, and HTML
 * escaping.
 *
 * Every value that comes from the store or the request goes through
 * html_esc() (or html_esc_n() for bytes of a given length): & < > " '
 * become entities, and bytes that are not valid UTF-8 text (and control
 * characters other than tab and newline) become U+FFFD, so that no
 * payload can close an element, open a script or break an attribute.
 * The buffer grows up to its cap; past it, writes are dropped and
 * html_full() tells, so that a page is cut, never overrun.
 */
#ifndef IH_HTML_H
#define IH_HTML_H

#include <stddef.h>

#include "ih.h"

struct html {
	char	*p;
	size_t	 len;
	size_t	 cap;	/* allocated */
	size_t	 max;	/* most bytes it may hold */
	int	 full;	/* a write was dropped */
	int	 nomem;
};

void	html_init(struct html *h, size_t max);
void	html_free(struct html *h);
/* Drops what h holds, keeping its memory. */
void	html_reset(struct html *h);
int	html_full(const struct html *h);

/* Appends raw markup (trusted, written by the program). */
void	html_raw(struct html *h, const char *s);
void	html_rawn(struct html *h, const char *s, size_t n);
void	html_printf(struct html *h, const char *fmt, ...) IH_PRINTF(2, 3);

/* Appends s (len bytes), escaped for text and attribute values. */
void	html_esc_n(struct html *h, const char *s, size_t len);
/* The same for a NUL-terminated s; NULL appends nothing. */
void	html_esc(struct html *h, const char *s);

/*
 * Appends s percent-encoded for a URL path segment or query value:
 * everything but A-Z a-z 0-9 - . _ ~ becomes %XX.
 */
void	html_url(struct html *h, const char *s);

#endif
