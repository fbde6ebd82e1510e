/* providers.c -- every provider this build knows. */
#include <stddef.h>
#include <string.h>

#include "asaas.h"
#include "github.h"
#include "providers.h"
#include "shopify.h"
#include "standard.h"
#include "stripe.h"

const struct provider *const providers_all[] = {
	&stripe_provider,
	&github_provider,
	&shopify_provider,
	&asaas_provider,
	&standard_provider,
	NULL
};

const struct provider *
providers_find(const char *name)
{
	size_t i;

	for (i = 0; providers_all[i] != NULL; i++)
		if (strcmp(providers_all[i]->name, name) == 0)
			return providers_all[i];
	return NULL;
}
