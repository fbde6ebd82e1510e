/*
 * api_common.h -- small pieces every provider's API module
 * (api_stripe.c, api_github.c, api_asaas.c, api_shopify.c) needs alike,
 * whichever HTTP client is linked (api_http.c or api_none.c).
 *
 * Nothing here allocates or keeps what it is given; a result that does
 * not fit its buffer is refused (IH_ETOOBIG), never cut.
 */
#ifndef IH_API_COMMON_H
#define IH_API_COMMON_H

#include <stddef.h>

/*
 * Writes "Bearer KEY" into buf (len bytes).  Returns IH_OK, or
 * IH_ETOOBIG when it does not fit.
 */
int	api_bearer(const char *key, char *buf, size_t len);

/*
 * Steps *v past spaces, commas and tabs to the next word of a list
 * setting ("a, b c") and returns its length (0 at the end).  The caller
 * advances *v by that length after reading the word.
 */
size_t	api_list_word(const char **v);

struct api_provider;

/*
 * One provider's run in api_each_provider(): providers_all[pi] with its
 * API ap, named when the operator named it.  Returns its exit code (0
 * to 3, cli_catchup.h), or -1 when it was skipped (no key, not named);
 * sets *first to 0 once it has written its JSON object.
 */
typedef int (*api_each_fn)(void *arg, size_t pi,
    const struct api_provider *ap, int named, int *first);

/*
 * The main loop of catch-up and health: writes the JSON array's brackets
 * when json, calls fn for each provider whose API can do job (those in
 * named[], or every one when nnamed is 0), in providers_all's order, and
 * returns the worst exit code, rank[code] saying how bad each of 0 to 3
 * is.  When no provider was tried and none was named, prints "cmd: no
 * provider has an API key" and returns 2.
 */
int	api_each_provider(const char *cmd, int job, const char *const *named,
	    size_t nnamed, int json, const int rank[4], api_each_fn fn,
	    void *arg);

#endif
