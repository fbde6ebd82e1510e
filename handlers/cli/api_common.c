/* api_common.c -- pieces the provider API modules share (api_common.h). */
#include <stdio.h>
#include <string.h>

#include "api_common.h"
#include "api_providers.h"
#include "cli_text.h"
#include "ih.h"
#include "providers.h"

int
api_bearer(const char *key, char *buf, size_t len)
{
	int n = snprintf(buf, len, "Bearer %s", key);

	return n < 0 || (size_t)n >= len ? IH_ETOOBIG : IH_OK;
}

size_t
api_list_word(const char **v)
{
	while (**v == ' ' || **v == ',' || **v == '\t')
		(*v)++;
	return strcspn(*v, " ,\t");
}

int
api_each_provider(const char *cmd, int job, const char *const *named,
    size_t nnamed, int json, const int rank[4], api_each_fn fn, void *arg)
{
	const struct api_provider *ap;
	size_t i;
	int one, ex = 0, tried = 0, first = 1;

	if (json)
		printf("[");
	for (i = 0; providers_all[i] != NULL; i++) {
		ap = api_provider_pick(i, job, named, nnamed);
		if (ap == NULL)
			continue;
		one = fn(arg, i, ap, nnamed > 0, &first);
		if (one < 0 || one > 3)
			continue;
		tried = 1;
		if (rank[one] > rank[ex])
			ex = one;
	}
	if (json)
		printf("]\n");
	if (!tried && nnamed == 0) {
		cli_errorf("%s: no provider has an API key: set "
		    "IDEMHOOK_<PROVIDER>_API_KEY (see the README)", cmd);
		return 2;
	}
	return ex;
}
