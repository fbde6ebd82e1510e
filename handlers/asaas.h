/*
 * asaas.h -- the Asaas scheme's parts, exposed for the unit tests and
 * the fuzz harness.  See asaas.c for the scheme.
 */
#ifndef IH_ASAAS_H
#define IH_ASAAS_H

#include <stddef.h>

#include "provider.h"

/*
 * Checks the asaas-access-token value token (NULL when absent) against
 * every configured token, each compared in constant time, all of them
 * always.  Returns IH_OK or IH_EAUTH; *why gets a static reason that
 * holds no token.
 */
int	asaas_verify_token(const char *token, char *const *tokens,
	    const size_t *token_len, size_t ntokens, const char **why);

extern const struct provider asaas_provider;

#endif
