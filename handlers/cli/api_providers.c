/*
 * api_providers.c -- the table of the providers' APIs, the choice of
 * which a command runs, and the one loop over them (api_providers.h).
 */
#include <stdio.h>
#include <string.h>

#include "api_providers.h"
#include "api_session.h"
#include "cli_text.h"
#include "ih.h"
#include "log.h"
#include "providers.h"

static const struct api_provider table[] = {
	{ "stripe", "https://api.stripe.com", api_stripe_catchup,
	    api_stripe_health, NULL, NULL, NULL },
	{ "github", "https://api.github.com", api_github_catchup,
	    api_github_health, api_github_release, NULL,
	    "IDEMHOOK_GITHUB_APP_ID" },
	{ "asaas", "https://api.asaas.com/v3", api_asaas_catchup,
	    api_asaas_health, NULL, NULL, NULL },
	{ "shopify", "", api_shopify_catchup, api_shopify_health, NULL, NULL,
	    NULL },
	{ "standard", NULL, NULL, NULL, NULL, "Standard Webhooks defines no "
	    "API for listing or redelivering events, nor for an endpoint's "
	    "state: ask your sender (Svix has its own)", NULL },
};

const struct api_provider *
api_provider_find(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (strcmp(table[i].name, name) == 0)
			return &table[i];
	return NULL;
}

static int
can_do(const struct api_provider *ap, int job)
{
	return job == API_JOB_HEALTH ? ap->health != NULL :
	    ap->catchup != NULL;
}

const struct api_provider *
api_provider_named(const char *cmd, const char *name, int job)
{
	const struct api_provider *ap;

	ap = api_provider_find(name);
	if (ap == NULL || !can_do(ap, job)) {
		cli_errorf("%s: %s: %s", cmd, name, ap != NULL &&
		    ap->no_api != NULL ? ap->no_api : "no API");
		return NULL;
	}
	return ap;
}

const struct api_provider *
api_provider_pick(size_t i, int job, const char *const *named,
    size_t nnamed)
{
	const struct api_provider *ap;
	size_t j;

	ap = api_provider_find(providers_all[i]->name);
	for (j = 0; j < nnamed; j++)
		if (strcmp(named[j], providers_all[i]->name) == 0)
			break;
	if (ap == NULL || !can_do(ap, job) || (nnamed > 0 && j == nnamed))
		return NULL;
	return ap;
}

int
api_provider_open(struct catchup *cu, struct cli *c, size_t pi,
    const struct api_provider *ap, int named, const char *cmd,
    const char *hint)
{
	char err[256];
	int rc;

	rc = catchup_open(cu, c, pi, ap);
	if (rc == IH_ENOTFOUND && !named) {
		catchup_close(cu);
		return -1;
	}
	if (rc != IH_OK) {
		if (rc == IH_ENOTFOUND)
			cli_errorf("%s: %s: set %s%s", cmd, cu->p->name,
			    cu->key_var, hint);
		catchup_close(cu);
		return rc == IH_ENOMEM ? 1 : 2;
	}
	/* The log line goes where the receivers' lines go. */
	(void)log_dest_set(&cu->w.logd, cu->cfg->log, err, sizeof(err));
	return 0;
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
		    "IDEMHOOK_<PROVIDER>_API_KEY (handlers/README.md, "
		    "Catching up)", cmd);
		return 2;
	}
	return ex;
}
