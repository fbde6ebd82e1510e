/*
 * shopify.h -- the Shopify scheme's parts, exposed for the unit tests and
 * the fuzz harness.  See shopify.c for the scheme.
 */
#ifndef IH_SHOPIFY_H
#define IH_SHOPIFY_H

#include <stddef.h>

#include "provider.h"
#include "verify.h"

/*
 * Parses an X-Shopify-Hmac-Sha256 value, the standard padded base64 of
 * 32 bytes, into mac.  Returns IH_OK, or IH_EINVAL for anything else.
 */
int	shopify_parse_hmac(const char *h, size_t len, struct verify_mac *mac);

/*
 * Verifies header (NULL when absent) over the raw body with any of the
 * secrets, each used as its bytes.  An empty body is refused, as
 * Shopify's own library does.  Returns IH_OK or IH_EAUTH; *why gets a
 * static reason that holds no secret.
 */
int	shopify_verify_header(const char *header, const void *body,
	    size_t len, char *const *secrets, const size_t *secret_len,
	    size_t nsecrets, const char **why);

/*
 * Checks the unsigned X-Shopify-Topic against the body's shape for the
 * three compliance topics: has_shop (top-level shop_id and shop_domain),
 * has_data_request (data_request.id) and has_customer (customer.id).
 * Any other topic passes.  Returns IH_OK, or IH_EBODY with a static *why.
 */
int	shopify_check_topic(const char *topic, int has_shop,
	    int has_data_request, int has_customer, const char **why);

/*
 * The replay rule (provider.h, repeat_ok): a body first recorded as
 * first may come again under its topic (another subscription), or under
 * another topic of the same object kind that is no delete, app or
 * compliance topic, when the first delivery carried the same
 * X-Shopify-Event-Id (one merchant action).  Returns 1, or 0 with a
 * static *why.
 */
int	shopify_repeat_ok(const struct store_first *first,
	    const struct event *ev, const char **why);

extern const struct provider shopify_provider;

#endif
