/*
 * json.h -- reading a few fields out of an untrusted JSON body.
 *
 * The parsing is yajl's, a strict streaming RFC 8259 parser, so no
 * JSON parser is written here, no tree of the body is built, and no body
 * ever reaches SQLite's JSON functions (SQLite 3.40 accepts some
 * malformed text and then crashes on it).  A body is accepted only when
 * it is valid UTF-8 without raw NUL bytes, a JSON object, nested at most
 * JSON_MAX_DEPTH deep, under 2 GiB, and repeats no key in any of its
 * objects: which copy of a repeated key counts would otherwise be up to
 * each reader.  An escaped \u0000 inside a string is valid JSON and
 * accepted, but a requested member whose value holds one is treated as
 * absent rather than truncated; one inside a key is refused, as is an
 * escaped lone UTF-16 surrogate.  A number too large for 64 bits is
 * accepted (and is not an integer); one too large for a double is
 * refused.  Memory beyond the body is bounded in json_parse.c's header.
 *
 * Where each part lives: json_path.c (the three ways to ask below, and
 * the path syntax), json_parse.c (the parser, json_open/json_close),
 * json_check.c (the checks above that yajl does not make, and
 * json_utf8_ok), json_indent.c (json_indent); json_int.h is what they
 * share and no one else reads.
 */
#ifndef IH_JSON_H
#define IH_JSON_H

#include <stddef.h>

#define JSON_MAX_FIELDS	12
#define JSON_VALUE_MAX	1024	/* longest field value returned */
#define JSON_MAX_DEPTH	128	/* deepest nesting of arrays and objects */

struct json;

/* Opens the parser.  Returns IH_OK or IH_ENOMEM. */
int	json_open(struct json **out);
void	json_close(struct json *js);

/*
 * Checks that doc (len bytes) is a JSON object and extracts the
 * top-level string or integer members named keys[0..n), at most
 * JSON_MAX_FIELDS.  vals[i] becomes a malloc'd NUL-terminated string, or
 * NULL when the member is absent, of another type, or longer than
 * JSON_VALUE_MAX.  Returns IH_OK, IH_EBODY when doc is not an acceptable
 * JSON object (see above), IH_ENOMEM or IH_EINVAL.  On
 * failure every vals[i] is NULL.
 */
int	json_fields(struct json *js, const void *doc, size_t len,
	    const char *const *keys, size_t n, char **vals);

/*
 * Checks that doc (len bytes) is a JSON object as json_fields() does, and
 * extracts the string or integer member at path: "$" followed by
 * ".name" steps into object members and "[N]" steps into array elements
 * (such as "$.payment.id" or "$.data.object.lines[0].id").  *val becomes
 * a malloc'd NUL-terminated string, or NULL when the member is absent,
 * of another type, or longer than JSON_VALUE_MAX.  No key repeats, so
 * the value is the only one any reader can see.  Returns IH_OK,
 * IH_EBODY when doc is not an acceptable JSON object, IH_EINVAL for a
 * path in another syntax (quoted names are not read) or longer than 127
 * bytes, or IH_ENOMEM.  On failure *val is NULL.
 */
int	json_path_text(struct json *js, const void *doc, size_t len,
	    const char *path, char **val);

/*
 * One member json_extract() looks for, at path as json_path_text()
 * reads it.  Without raw, val becomes its string or integer text as
 * json_path_text() returns it; with raw, the member must be an object or
 * an array, and val becomes its exact text in doc (valid JSON, since doc
 * is), or NULL when it is longer than the caller's raw_max.  With raw
 * JSON_WANT_BOOL, the member must be a boolean, and val becomes "true" or
 * "false".
 */
#define JSON_WANT_RAW	1
#define JSON_WANT_BOOL	2
struct json_want {
	const char	*path;
	int		 raw;
	char		*val;	/* out: malloc'd and NUL-terminated, or NULL */
	size_t		 len;	/* out: the length of val, 0 when NULL */
};

/*
 * Checks doc as json_fields() does and fills the n (at most
 * JSON_MAX_FIELDS) wants of w in one pass.  Returns IH_OK, IH_EBODY,
 * IH_EINVAL (a path in another syntax, too many wants) or IH_ENOMEM; on
 * failure every val is NULL.  The caller frees each val.
 */
int	json_extract(struct json *js, const void *doc, size_t len,
	    struct json_want *w, size_t n, size_t raw_max);

/* Where one element of an array is in a document: doc + off, len bytes. */
struct json_span {
	size_t	off;
	size_t	len;
};

/*
 * json_extract() of the n wants of w (at most JSON_MAX_FIELDS - 1) and,
 * in the same single pass over doc, the array at items_path: the place
 * of each of its elements that is an object or an array goes to
 * spans[0..*nspans), in order (other elements are skipped; no array
 * there: none).  So a page of N items costs one parse, not one per few
 * items.  Returns what json_extract() does, or IH_ETOOBIG when the
 * array holds more than max such elements; on failure every val is
 * NULL and *nspans 0.
 */
int	json_items(struct json *js, const void *doc, size_t len,
	    const char *items_path, struct json_span *spans, size_t max,
	    size_t *nspans, struct json_want *w, size_t n, size_t raw_max);

/*
 * json_indent.c: when doc (len bytes) passes json_fields()'s checks,
 * *out becomes a malloc'd NUL-terminated copy printed with two-space
 * indentation (*outlen bytes), for display; keys keep their order and
 * numbers their text.  Returns IH_OK, IH_EBODY or IH_ENOMEM; on failure
 * *out is NULL.
 */
int	json_indent(struct json *js, const void *doc, size_t len, char **out,
	    size_t *outlen);

/*
 * Returns 1 when the len bytes at p are well-formed UTF-8 (no overlongs,
 * surrogates or code points past U+10FFFF) and hold no NUL byte, else 0.
 */
int	json_utf8_ok(const void *p, size_t len);

#endif
