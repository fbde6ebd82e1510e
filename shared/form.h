/*
 * form.h -- reading one field out of an application/x-www-form-urlencoded
 * body, as GitHub sends when a hook's content type is "form".
 *
 * The body is name=value pairs joined by '&'.  Names and values are
 * percent-decoded ("%7B" is '{') and '+' becomes a space.  A '%' not
 * followed by two hex digits makes the whole body malformed, wherever it
 * is, so no two readers can disagree on what the body says; a field that
 * occurs twice is refused for the same reason.  The decoded value is
 * returned in a malloc'd buffer owned by the caller, whose size is
 * checked against a caller's limit before it is allocated.
 */
#ifndef IH_FORM_H
#define IH_FORM_H

#include <stddef.h>

#define FORM_NAME_MAX	64	/* longest field name that can be asked for */

/*
 * Returns the value of hex digit c (either case), or -1: the one reader
 * of a %XX escape, shared with redact.c's parameter names.
 */
int	form_hexval(unsigned char c);

/*
 * Decodes len bytes at s ('+' and %XX) into out, of capacity cap, or
 * only checks and measures them when out is NULL.  Returns IH_OK with
 * *outlen set; IH_EINVAL for a malformed escape; IH_ETOOBIG when the
 * decoded bytes do not fit in cap (nothing past cap is written).
 */
int	form_decode(const char *s, size_t len, char *out, size_t cap,
	    size_t *outlen);

/*
 * Finds the field called name (at most FORM_NAME_MAX bytes, matched
 * after decoding) in body (len bytes) and decodes its value into a
 * malloc'd buffer: *val holds *vallen bytes, then a NUL that is not
 * counted.  The value may hold any byte, NUL included.  Returns IH_OK;
 * IH_ENOTFOUND when there is no such field; IH_EINVAL for a malformed
 * escape anywhere in the body, a field given twice, or a bad name;
 * IH_ETOOBIG when the decoded value is longer than max; IH_ENOMEM.  On
 * failure *val is NULL and *vallen 0.
 */
int	form_field(const char *body, size_t len, const char *name, size_t max,
	    char **val, size_t *vallen);

#endif
