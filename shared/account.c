/*
 * account.c -- accounts: the settings of one account, and the headers
 * that route to one (the names are account_name.c's).
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "account.h"
#include "config_vars.h"
#include "ih.h"

/*
 * The settings an account may have of its own: those read at receipt.
 * Actions and processing run as the provider's, in the receivers and in
 * idemhook work alike, so they take no account suffix.
 */
static const char *const account_keys[] = { "TOLERANCE", "MAX_BODY",
    "ALLOW_FROM", "API_VERSIONS", NULL };

static int
account_key(const struct account_src *as, const char *name)
{
	size_t i;

	if (strncmp(name, as->prefix, strlen(as->prefix)) != 0)
		return 0;
	if (config_is_secret_of(name, as->secret_var))
		return 1;
	for (i = 0; account_keys[i] != NULL; i++)
		if (strcmp(name + strlen(as->prefix), account_keys[i]) == 0)
			return 1;
	return 0;
}

static const char *
account_get(void *arg, const char *name)
{
	struct account_src *as = arg;
	const char *v;
	int n;

	if (strcmp(as->account, ACCOUNT_DEFAULT) == 0 ||
	    !account_key(as, name))
		return config_lookup(as->inner, as->ninner, name);
	n = snprintf(as->buf, sizeof(as->buf), "%s@%s", name, as->account);
	if (n < 0 || (size_t)n >= sizeof(as->buf))
		return NULL;
	v = config_lookup(as->inner, as->ninner, as->buf);
	if (v != NULL || config_is_secret_of(name, as->secret_var))
		return v;
	return config_lookup(as->inner, as->ninner, name);
}

void
account_source(struct account_src *as, struct config_source *out,
    const struct config_source *inner, size_t ninner, const char *provider,
    const char *secret_var, const char *account)
{
	size_t i;

	memset(as, 0, sizeof(*as));
	as->inner = inner;
	as->ninner = ninner;
	as->account = account_or_default(account);
	as->secret_var = secret_var;
	snprintf(as->prefix, sizeof(as->prefix), "IDEMHOOK_%s_", provider);
	for (i = 9; as->prefix[i] != '\0'; i++)
		as->prefix[i] = (char)toupper((unsigned char)as->prefix[i]);
	out->get = account_get;
	out->arg = as;
}

void
account_each_name(const struct config_source *src, size_t nsrc,
    void (*fn)(void *arg, const char *name), void *arg)
{
	const struct account_src *as;
	const struct config_vars *v;
	size_t i, j;

	for (i = 0; i < nsrc; i++) {
		if (src[i].get == account_get) {
			as = src[i].arg;
			account_each_name(as->inner, as->ninner, fn, arg);
		} else if (src[i].get == config_vars_get) {
			v = src[i].arg;
			for (j = 0; j < v->n; j++)
				fn(arg, v->names[j]);
		}
	}
}

const char *
account_route_header(const char *provider)
{
	if (strcmp(provider, "github") == 0)
		return "X-GitHub-Hook-Installation-Target-ID";
	if (strcmp(provider, "shopify") == 0)
		return "X-Shopify-Shop-Domain";
	return NULL;
}

int
account_route(const char *provider, const char *value,
    const struct config_source *src, size_t nsrc, char *out, size_t outlen)
{
	char name[192];
	const char *v;
	size_t i;
	int n;

	if (value == NULL || *value == '\0' || strlen(value) > 100)
		return IH_ENOTFOUND;
	for (i = 0; value[i] != '\0'; i++)
		if (!isalnum((unsigned char)value[i]) && value[i] != '.' &&
		    value[i] != '_' && value[i] != '-')
			return IH_ENOTFOUND;
	n = snprintf(name, sizeof(name), "IDEMHOOK_%s_ROUTE_%s", provider,
	    value);
	if (n < 0 || (size_t)n >= sizeof(name))
		return IH_ENOTFOUND;
	for (i = 9; i < 9 + strlen(provider); i++)
		name[i] = (char)toupper((unsigned char)name[i]);
	v = config_lookup(src, nsrc, name);
	if (v == NULL)
		return IH_ENOTFOUND;
	if (!account_name_ok(v) || strlen(v) >= outlen)
		return IH_ECONFIG;
	snprintf(out, outlen, "%s", v);
	return IH_OK;
}
