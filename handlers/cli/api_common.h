/*
 * api_common.h -- small pieces every provider's API module
 * (api_stripe.c, api_github.c, api_asaas.c, api_shopify.c) needs alike,
 * whichever HTTP client is linked (api_http.c or api_none.c).  It sits
 * below the session and the table: it knows neither.
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

#endif
