/*
 * api_github_app.h -- the JSON Web Token a GitHub App authenticates with
 * (its own webhook's API: /app/hook/...), made by the command from
 *
 *   IDEMHOOK_GITHUB_APP_ID        the App's ID (or client ID), the
 *                                 token's "iss"
 *   IDEMHOOK_GITHUB_APP_KEY_FILE  the App's private key, a PEM file
 *                                 (absolute path) only the command's
 *                                 user can read
 *
 * The token is signed RS256 with OpenSSL's EVP (no hand-written
 * crypto), lives 9 minutes (iat 60 s back for clock drift, as GitHub
 * advises), and is written as "Bearer <jwt>".  The key is read for each
 * token and freed at once; neither it nor the token is printed.
 */
#ifndef IH_API_GITHUB_APP_H
#define IH_API_GITHUB_APP_H

#include <stddef.h>
#include <stdint.h>

#include "idemhook.h"

/* Room for "Bearer " and a token signed by a key of up to 8192 bits. */
#define GITHUB_APP_AUTH_MAX	2048

/*
 * Writes "Bearer <jwt>" for now_s into out.  Returns IH_OK; IH_ECONFIG
 * with the reason in err (a setting missing, the key unreadable or not
 * an RSA key); IH_ENOMEM or IH_ETOOBIG.
 */
int	api_github_app_auth(struct cli *c, int64_t now_s, char *out,
	    size_t outlen, char *err, size_t errlen);

#endif
