/*
 * github.h -- the GitHub scheme's parts, exposed for the unit tests and
 * the fuzz harness.  See github.c for the scheme.
 */
#ifndef IH_GITHUB_H
#define IH_GITHUB_H

#include <stddef.h>

#include "provider.h"
#include "verify.h"

#define GITHUB_HOOK_ID_MAX	64	/* longest X-GitHub-Hook-ID kept */
#define GITHUB_DELIVERY_MAX	128	/* longest X-GitHub-Delivery kept */

/*
 * Parses an X-Hub-Signature-256 value, "sha256=" and 64 hex digits, into
 * mac.  Returns IH_OK, or IH_EINVAL for anything else.
 */
int	github_parse_signature(const char *h, size_t len,
	    struct verify_mac *mac);

/*
 * Verifies header (NULL when absent) over the raw body with any of the
 * secrets, each used as its bytes.  Returns IH_OK or IH_EAUTH; *why gets
 * a static reason that holds no secret.
 */
int	github_verify_header(const char *header, const void *body,
	    size_t len, char *const *secrets, const size_t *secret_len,
	    size_t nsecrets, const char **why);

/* Returns 1 when the Content-Type ct (or NULL) names a form body. */
int	github_is_form(const char *ct);

/*
 * Builds the event id "<hook id>:<delivery>" into a malloc'd *out, with
 * "-" for an absent hook id.  Returns IH_OK; IH_EBODY when delivery is
 * absent or empty, either value is too long, or the hook id holds a ':'
 * (the id would then be ambiguous); IH_ENOMEM.
 */
int	github_event_id(const char *hook_id, const char *delivery, char **out);

/*
 * Checks the unsigned X-GitHub-Event (event) against what the signed
 * body says of itself: its top-level "zen" and "hook_id" (NULL when
 * absent) make it a ping, and a ping needs its zen, and its hook_id, when
 * X-GitHub-Hook-ID (header_hook_id, or NULL) is sent, to match.  Returns
 * IH_OK, or IH_EBODY with a static *why.
 */
int	github_check_type(const char *event, const char *zen,
	    const char *hook_id, const char *header_hook_id, const char **why);

/*
 * The replay rule (provider.h, repeat_ok): a body first recorded as
 * first may come again only under its type and its GUID (another hook).
 * Returns 1, or 0 with a static *why.
 */
int	github_repeat_ok(const struct store_first *first,
	    const struct event *ev, const char **why);

extern const struct provider github_provider;

#endif
