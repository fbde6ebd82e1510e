/*
 * providers.h -- the table of every provider this build knows, for the
 * idemhook command, which processes and inspects events of all of them.
 * Adding a provider: its handlers/<name>.c, its line in the Makefile's
 * PROVIDERS, and its entry in providers.c.
 */
#ifndef IH_PROVIDERS_H
#define IH_PROVIDERS_H

#include "provider.h"

extern const struct provider *const providers_all[];

/* Returns the provider called name, or NULL. */
const struct provider *providers_find(const char *name);

#endif
