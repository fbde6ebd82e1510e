/* redact.c -- store locations with their passwords removed. */
#include <ctype.h>
#include <stddef.h>
#include <string.h>
#include <strings.h>

#include "form.h"
#include "ih.h"
#include "redact.h"

/* A bounded output: bytes past the end are counted, never written. */
struct out {
	char	*buf;
	size_t	 cap;		/* usable bytes, without the NUL */
	size_t	 len;
	int	 cut;
};

static void
put(struct out *o, const char *s, size_t n)
{
	size_t room = o->cap - o->len;

	if (n > room) {
		n = room;
		o->cut = 1;
	}
	memcpy(o->buf + o->len, s, n);
	o->len += n;
}

/*
 * Scans a parameter name at s: letters, digits, '_' and percent-encoded
 * bytes, which libpq decodes in a URI's query ("%70assword" is
 * "password").  Returns where the name ends; *pw is set when its decoded
 * form ends in "password", whatever the case.
 */
static const char *
scan_key(const char *s, int *pw)
{
	char tail[8];
	size_t n = 0;
	int hi, lo;
	char c;

	for (;;) {
		hi = *s == '%' ? form_hexval((unsigned char)s[1]) : -1;
		lo = hi >= 0 ? form_hexval((unsigned char)s[2]) : -1;
		if (isalnum((unsigned char)*s) || *s == '_')
			c = *s++;
		else if (lo >= 0) {
			c = (char)(hi * 16 + lo);
			s += 3;
		} else
			break;
		/* Only the last eight decoded bytes decide. */
		if (n == sizeof(tail)) {
			memmove(tail, tail + 1, sizeof(tail) - 1);
			n--;
		}
		tail[n++] = c;
	}
	*pw = n == sizeof(tail) &&
	    strncasecmp(tail, "password", sizeof(tail)) == 0;
	return s;
}

/* Where an unquoted parameter value ends, in a URI query or conninfo. */
static int
value_end(char c)
{
	return c == '\0' || c == '&' || c == '#' || c == ';' ||
	    isspace((unsigned char)c);
}

/*
 * Copies s, replacing the value of every NAME=value parameter whose name
 * ends in "password" with the mask.  A parameter starts at the beginning
 * or after '?', '&', ';' or a blank.
 */
static void
put_params(struct out *o, const char *s)
{
	const char *p = s, *k, *e;
	int pw;

	while (*p != '\0') {
		if (p != s && strchr("?&; \t\r\n", p[-1]) == NULL) {
			put(o, p++, 1);
			continue;
		}
		k = scan_key(p, &pw);
		e = k;
		while (*e == ' ' || *e == '\t')
			e++;
		if (*e != '=' || !pw) {
			put(o, p++, 1);
			continue;
		}
		e++;
		while (*e == ' ' || *e == '\t')
			e++;
		put(o, p, (size_t)(e - p));
		if (*e == '\'') {
			/* A quoted conninfo value, with backslash escapes. */
			for (e++; *e != '\0' && *e != '\''; e++)
				if (*e == '\\' && e[1] != '\0')
					e++;
			if (*e == '\'')
				e++;
		} else
			while (!value_end(*e))
				e++;
		put(o, REDACT_MASK, strlen(REDACT_MASK));
		p = e;
	}
}

/* Returns the length of a URI scheme followed by "://", or 0. */
static size_t
scheme_len(const char *s)
{
	size_t n = 0;

	if (!isalpha((unsigned char)s[0]))
		return 0;
	while (isalnum((unsigned char)s[n]) || s[n] == '+' || s[n] == '-' ||
	    s[n] == '.')
		n++;
	return strncmp(s + n, "://", 3) == 0 ? n + 3 : 0;
}

int
ih_redact_uri(const char *uri, char *out, size_t outlen)
{
	struct out o;
	const char *auth, *end, *at = NULL, *colon, *p;
	size_t n;

	if (out == NULL || outlen < 8)
		return IH_EINVAL;
	o.buf = out;
	o.cap = outlen - 1;
	o.len = 0;
	o.cut = 0;
	if (uri == NULL)
		uri = "-";
	n = scheme_len(uri);
	auth = uri + n;
	if (n > 0 || (uri[0] != '/' && strchr(uri, '@') != NULL)) {
		/*
		 * The user information ends at the last '@' before the
		 * query, so that an unencoded '@' or '/' in a password is
		 * hidden with the rest of it.  Without a scheme ("u:p@h"),
		 * the same shape is read the same way.
		 */
		end = auth + strcspn(auth, n > 0 ? "?#" : "?# \t=");
		for (p = auth; p < end; p++)
			if (*p == '@')
				at = p;
		put(&o, uri, n);
		if (at != NULL) {
			colon = memchr(auth, ':', (size_t)(at - auth));
			if (colon != NULL) {
				put(&o, auth, (size_t)(colon + 1 - auth));
				put(&o, REDACT_MASK, strlen(REDACT_MASK));
			} else
				put(&o, auth, (size_t)(at - auth));
			auth = at;
		}
	}
	put_params(&o, auth);
	if (o.cut) {
		/* Only ever cuts what was written; no password is in it. */
		memcpy(out + outlen - 4, "...", 3);
		o.len = outlen - 1;
	}
	out[o.len] = '\0';
	return o.cut ? IH_ETOOBIG : IH_OK;
}

const char *
ih_redact(const char *uri, char *out, size_t outlen)
{
	if (ih_redact_uri(uri, out, outlen) == IH_EINVAL && outlen > 0)
		out[0] = '\0';
	return out;
}
