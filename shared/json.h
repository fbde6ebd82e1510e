/*
 * json.h -- reading a few fields out of an untrusted JSON body.
 *
 * The parsing is SQLite's built-in JSON1 (json_valid, json_extract) run
 * on a private in-memory connection, so no JSON parser is written here.
 * The body must be valid UTF-8 without raw NUL bytes.  SQLite's JSON
 * functions cut strings at an escaped \u0000, so a requested member whose
 * value holds one is treated as absent rather than truncated.  SQLite's
 * parser limits
 * nesting depth, so a deeply nested bomb is simply invalid.  A top-level
 * key that occurs twice is refused when it is one the caller asked for,
 * because which copy counts would otherwise be up to the parser.
 */
#ifndef IH_JSON_H
#define IH_JSON_H

#include <stddef.h>

#define JSON_MAX_FIELDS	4
#define JSON_VALUE_MAX	1024	/* longest field value returned */

struct json;

/* Opens the parser.  Returns IH_OK or IH_ENOMEM. */
int	json_open(struct json **out);
void	json_close(struct json *js);

/*
 * Checks that doc (len bytes) is a JSON object and extracts the
 * top-level string or integer members named keys[0..n), at most
 * JSON_MAX_FIELDS.  vals[i] becomes a malloc'd NUL-terminated string, or
 * NULL when the member is absent, of another type, or longer than
 * JSON_VALUE_MAX.  Returns IH_OK, IH_EBODY when doc is not a valid JSON
 * object (or repeats a requested key), IH_ENOMEM or IH_EINVAL.  On
 * failure every vals[i] is NULL.
 */
int	json_fields(struct json *js, const void *doc, size_t len,
	    const char *const *keys, size_t n, char **vals);

/*
 * Checks that doc (len bytes) is a JSON object and extracts the string
 * or integer member at path, a SQLite JSON path starting "$." (such as
 * "$.payment.id"), so nested members can be read.  *val becomes a
 * malloc'd NUL-terminated string, or NULL when the member is absent, of
 * another type, or longer than JSON_VALUE_MAX.  Unlike json_fields(),
 * a repeated key along the path is not refused: SQLite's first copy
 * counts, so use this only for values that are not identities.
 * Returns IH_OK, IH_EBODY when doc is not a valid JSON object (or the
 * path is one SQLite refuses), IH_EINVAL for a path not starting "$.",
 * or IH_ENOMEM.  On failure *val is NULL.
 */
int	json_path_text(struct json *js, const void *doc, size_t len,
	    const char *path, char **val);

/*
 * Returns 1 when the len bytes at p are well-formed UTF-8 (no overlongs,
 * surrogates or code points past U+10FFFF) and hold no NUL byte, else 0.
 */
int	json_utf8_ok(const void *p, size_t len);

#endif
