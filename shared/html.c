/* html.c -- a bounded page buffer and HTML escaping. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "html.h"
#include "ih.h"
#include "utf8.h"

void
html_init(struct html *h, size_t max)
{
	memset(h, 0, sizeof(*h));
	h->max = max;
}

void
html_free(struct html *h)
{
	free(h->p);
	memset(h, 0, sizeof(*h));
}

void
html_reset(struct html *h)
{
	h->len = 0;
	h->full = 0;
	h->nomem = 0;
	if (h->p != NULL)
		h->p[0] = '\0';
}

int
html_full(const struct html *h)
{
	return h->full || h->nomem;
}

/* Makes room for n more bytes and a NUL; 0 when it cannot. */
static int
room(struct html *h, size_t n)
{
	size_t want, cap;
	char *p;

	if (h->full || h->nomem)
		return 0;
	if (n > h->max || h->len > h->max - n) {
		h->full = 1;
		return 0;
	}
	want = h->len + n + 1;
	if (want <= h->cap)
		return 1;
	cap = h->cap > 0 ? h->cap : 4096;
	while (cap < want)
		cap *= 2;
	p = realloc(h->p, cap);
	if (p == NULL) {
		h->nomem = 1;
		return 0;
	}
	h->p = p;
	h->cap = cap;
	return 1;
}

void
html_rawn(struct html *h, const char *s, size_t n)
{
	if (!room(h, n))
		return;
	memcpy(h->p + h->len, s, n);
	h->len += n;
	h->p[h->len] = '\0';
}

void
html_raw(struct html *h, const char *s)
{
	html_rawn(h, s, strlen(s));
}

void
html_printf(struct html *h, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	html_rawn(h, buf, (size_t)n < sizeof(buf) ? (size_t)n :
	    sizeof(buf) - 1);
}

void
html_esc_n(struct html *h, const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, run = 0, n;
	const char *ent;
	uint32_t cp;

	while (i < len) {
		ent = NULL;
		n = 1;
		switch (u[i]) {
		case '&': ent = "&amp;"; break;
		case '<': ent = "&lt;"; break;
		case '>': ent = "&gt;"; break;
		case '"': ent = "&quot;"; break;
		case '\'': ent = "&#39;"; break;
		case '\t': case '\n': break;
		default:
			if (u[i] < 0x20 || u[i] == 0x7f)
				ent = "\xef\xbf\xbd";
			else {
				n = utf8_decode(u + i, len - i, &cp);
				if (n == 0) {
					ent = "\xef\xbf\xbd";
					n = 1;
				}
			}
		}
		if (ent == NULL) {
			run += n;
			i += n;
			continue;
		}
		html_rawn(h, s + i - run, run);
		run = 0;
		html_raw(h, ent);
		i += n;
	}
	html_rawn(h, s + i - run, run);
}

void
html_esc(struct html *h, const char *s)
{
	if (s != NULL)
		html_esc_n(h, s, strlen(s));
}

void
html_url(struct html *h, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	char e[3];

	for (; s != NULL && *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;

		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
		    (c >= '0' && c <= '9') || c == '-' || c == '.' ||
		    c == '_' || c == '~') {
			html_rawn(h, s, 1);
			continue;
		}
		e[0] = '%';
		e[1] = hex[c >> 4];
		e[2] = hex[c & 15];
		html_rawn(h, e, 3);
	}
}
