/*
 * redact.h -- the one way to print a store location (IDEMHOOK_DB).
 *
 * Every print and log site that shows where the store is passes the value
 * through ih_redact_uri() first, so that a networked backend's password
 * never reaches a log, an error body or a terminal.  It removes:
 *   - the password of a URI's user information,
 *     "scheme://user:pass@host/db" -> "scheme://user:***@host/db";
 *   - the value of every parameter whose name ends in "password"
 *     (password, sslpassword), in a URI's query ("?password=x&...") or in
 *     a keyword/value string ("host=h password='x y' dbname=d").
 * A name is matched after percent-decoding, in any case ("%70ASSword"),
 * as libpq reads a URI's query.  Everything else is copied unchanged;
 * a plain file path comes out as it went in.  The helper over-redacts
 * rather than under-redacts: with an unencoded '@' or '/' in a password,
 * everything up to the last '@' of the authority is hidden.
 */
#ifndef IH_REDACT_H
#define IH_REDACT_H

#include <stddef.h>

/* Big enough for any redacted IDEMHOOK_DB value worth printing. */
#define REDACT_URI_MAX	1024

/* What replaces a removed password. */
#define REDACT_MASK	"***"

/*
 * Writes the redacted form of uri (NULL prints as "-") into out, which
 * holds outlen bytes (at least 8), always NUL-terminated.  Returns IH_OK,
 * or IH_ETOOBIG when the result was cut short: it then ends in "...",
 * and still holds no password.
 */
int		 ih_redact_uri(const char *uri, char *out, size_t outlen);

/* ih_redact_uri() that returns out, for use as a printf argument. */
const char	*ih_redact(const char *uri, char *out, size_t outlen);

#endif
