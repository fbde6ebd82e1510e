/*
 * api_accounts.c -- the accounts a provider's API runs for
 * (api_accounts.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_accounts.h"
#include "api_providers.h"
#include "cli_catchup.h"
#include "config.h"
#include "config_vars.h"
#include "ih.h"
#include "providers.h"
#include "store.h"

/* Adds the accounts v names by a secret of secret_var to out. */
static void
named_in(const struct config_vars *v, const char *secret_var,
    struct api_accounts *out)
{
	const char *at;
	size_t i, j;

	for (i = 0; i < v->n; i++) {
		at = strchr(v->names[i], '@');
		if (at == NULL || v->values[i][0] == '\0' ||
		    !config_is_secret_of(v->names[i], secret_var) ||
		    !account_name_ok(at + 1) ||
		    strcmp(at + 1, ACCOUNT_DEFAULT) == 0)
			continue;
		for (j = 0; j < out->n; j++)
			if (strcmp(out->name[j], at + 1) == 0)
				break;
		if (j < out->n || out->n == API_ACCOUNTS_MAX)
			continue;
		snprintf(out->name[out->n], sizeof(out->name[out->n]), "%s",
		    at + 1);
		out->n++;
	}
}

void
api_accounts_named(const struct cli *c, size_t pi, struct api_accounts *out)
{
	const char *secret_var = providers_all[pi]->secret_var;

	out->n = 0;
	named_in(&c->env, secret_var, out);
	named_in(&c->file, secret_var, out);
}

int
api_accounts_has_key(struct cli *c, size_t pi, const char *account,
    char *var, size_t varlen)
{
	const struct api_provider *ap;
	const char *name = providers_all[pi]->name, *v;
	char up[32];
	size_t i;

	for (i = 0; name[i] != '\0' && i < sizeof(up) - 1; i++)
		up[i] = (char)(name[i] >= 'a' && name[i] <= 'z' ?
		    name[i] - 'a' + 'A' : name[i]);
	up[i] = '\0';
	/* As catchup_open() reads them (api_session.c). */
	snprintf(var, varlen, "IDEMHOOK_%s_API_KEY%s%s", up,
	    account != NULL ? "@" : "", account != NULL ? account : "");
	v = cli_setting(c, var);
	if (v != NULL && *v != '\0')
		return 1;
	ap = api_provider_find(name);
	v = ap != NULL && ap->alt_cred != NULL ?
	    cli_setting(c, ap->alt_cred) : NULL;
	return v != NULL && *v != '\0';
}

/* cli_catchup_release() for one account, with settings of its own. */
static int
release_one(const struct cli *c, size_t pi, const char *account,
    const struct log_sink *log, const volatile sig_atomic_t *stop)
{
	struct cli *one;
	size_t i;
	int rc;

	/* On the heap: struct cli holds every provider's settings. */
	one = malloc(sizeof(*one));
	if (one == NULL)
		return IH_ENOMEM;
	/* The command's variables and store, borrowed; settings its own. */
	memcpy(one, c, sizeof(*one));
	memset(one->loaded, 0, sizeof(one->loaded));
	memset(one->cfg, 0, sizeof(one->cfg));
	one->account = account;
	rc = cli_catchup_release(one, pi, log, stop);
	for (i = 0; i < CLI_MAX_PROVIDERS; i++)
		if (one->loaded[i])
			config_free(&one->cfg[i]);
	if (one->st != c->st)
		store_close(one->st);
	free(one);
	return rc;
}

int
api_accounts_release(void *arg, struct cli *c, size_t pi,
    const struct log_sink *log, const volatile sig_atomic_t *stop)
{
	struct api_accounts *acc;
	char var[96];
	size_t i;
	int rc, one;

	(void)arg;
	rc = cli_catchup_release(c, pi, log, stop);
	acc = malloc(sizeof(*acc));
	if (acc == NULL)
		return rc != IH_OK ? rc : IH_ENOMEM;
	api_accounts_named(c, pi, acc);
	for (i = 0; i < acc->n && (stop == NULL || !*stop); i++) {
		if (!api_accounts_has_key(c, pi, acc->name[i], var,
		    sizeof(var)))
			continue;
		one = release_one(c, pi, acc->name[i], log, stop);
		if (rc == IH_OK)
			rc = one;
	}
	free(acc);
	return rc;
}
