/* cli_check_accounts.c -- idemhook check: accounts (cli_check_accounts.h). */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "account.h"
#include "cli_check_accounts.h"
#include "cli_check_store.h"
#include "config_vars.h"
#include "providers.h"

#define CHECK_ACCOUNTS_MAX	256

/* One account of a provider, as the settings name it. */
struct acct {
	char		 name[ACCOUNT_NAME_MAX + 1];
	const char	*secrets[CONFIG_MAX_SECRETS];
	size_t		 n;
};

/* The account a's entry in list (added when new), or NULL when full. */
static struct acct *
acct_of(struct acct *list, size_t *n, const char *a)
{
	size_t i;

	for (i = 0; i < *n; i++)
		if (strcmp(list[i].name, a) == 0)
			return &list[i];
	if (*n >= CHECK_ACCOUNTS_MAX)
		return NULL;
	memset(&list[*n], 0, sizeof(list[*n]));
	snprintf(list[*n].name, sizeof(list[*n].name), "%s", a);
	return &list[(*n)++];
}

/* Adds the secrets of v (one source) to the provider's accounts. */
static void
collect(const struct config_vars *v, const char *secret_var,
    struct acct *list, size_t *n, int *problems, int *oks)
{
	const char *at, *name;
	struct acct *a;
	size_t i;

	for (i = 0; i < v->n; i++) {
		name = v->names[i];
		if (strncmp(name, secret_var, strlen(secret_var)) != 0 ||
		    v->values[i][0] == '\0')
			continue;
		at = strchr(name, '@');
		if (at != NULL && !account_name_ok(at + 1)) {
			cli_check_say(0, problems, oks, "%.80s: not an account "
			    "name after '@' (1 to %d of a-z, 0-9, _ and -)",
			    name, ACCOUNT_NAME_MAX);
			continue;
		}
		if (!config_is_secret_of(name, secret_var))
			continue;
		a = acct_of(list, n, at != NULL ? at + 1 : ACCOUNT_DEFAULT);
		if (a != NULL && a->n < CONFIG_MAX_SECRETS)
			a->secrets[a->n++] = v->values[i];
	}
}

/* A routing setting naming an account that has no secret. */
static void
routes(const struct config_vars *v, const char *provider,
    const struct acct *list, size_t n, int *problems, int *oks)
{
	char prefix[64];
	size_t i, j, k;

	snprintf(prefix, sizeof(prefix), "IDEMHOOK_%s_ROUTE_", provider);
	for (k = 9; prefix[k] != '\0'; k++)
		prefix[k] = (char)toupper((unsigned char)prefix[k]);
	for (i = 0; i < v->n; i++) {
		if (strncmp(v->names[i], prefix, strlen(prefix)) != 0)
			continue;
		for (j = 0; j < n; j++)
			if (strcmp(list[j].name, v->values[i]) == 0)
				break;
		if (j < n && strcmp(list[j].name, ACCOUNT_DEFAULT) != 0)
			cli_check_say(1, problems, oks, "%s: %.80s routes to "
			    "account %s", provider, v->names[i], list[j].name);
		else
			cli_check_say(0, problems, oks, "%s: %.80s names no "
			    "account with a secret (%.40s)", provider,
			    v->names[i], v->values[i]);
	}
}

/*
 * An account's own forwarding destination (forward.h) for an account
 * with no secret: no delivery ever reaches it, so nothing is forwarded.
 */
static void
forwards(const struct config_vars *v, const char *provider,
    const struct acct *list, size_t n, int *problems, int *oks)
{
	char prefix[64];
	const char *at;
	size_t i, j, k;

	snprintf(prefix, sizeof(prefix), "IDEMHOOK_%s_FORWARD_URL@",
	    provider);
	for (k = 9; prefix[k] != '\0'; k++)
		prefix[k] = (char)toupper((unsigned char)prefix[k]);
	for (i = 0; i < v->n; i++) {
		if (strncmp(v->names[i], prefix, strlen(prefix)) != 0)
			continue;
		at = v->names[i] + strlen(prefix);
		for (j = 0; j < n; j++)
			if (strcmp(list[j].name, at) == 0)
				break;
		if (j == n)
			cli_check_say(0, problems, oks, "%s: %.80s names no "
			    "account with a secret: no event of it is ever "
			    "received, so nothing goes there", provider,
			    v->names[i]);
	}
}

/* Two accounts with one secret in common. */
static void
shared(const char *provider, const struct acct *list, size_t n,
    int *problems, int *oks)
{
	size_t i, j, x, y;
	int same;

	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++) {
			same = 0;
			for (x = 0; x < list[i].n; x++)
				for (y = 0; y < list[j].n; y++)
					same |= strcmp(list[i].secrets[x],
					    list[j].secrets[y]) == 0;
			if (same)
				cli_check_say(0, problems, oks, "%s: accounts "
				    "%s and %s share a secret: a delivery "
				    "signed for one is accepted at the other's "
				    "URL; give each its own", provider,
				    list[i].name, list[j].name);
		}
}

void
cli_check_accounts(const struct cli *c, int *problems, int *oks)
{
	static struct acct list[CHECK_ACCOUNTS_MAX];
	const struct provider *p;
	size_t i, j, n;

	for (i = 0; providers_all[i] != NULL; i++) {
		p = providers_all[i];
		n = 0;
		collect(&c->env, p->secret_var, list, &n, problems, oks);
		collect(&c->file, p->secret_var, list, &n, problems, oks);
		for (j = 0; j < n; j++)
			if (strcmp(list[j].name, ACCOUNT_DEFAULT) != 0)
				cli_check_say(1, problems, oks, "%s: account "
				    "%s: %zu secret(s) set (URL .../%s/%s)",
				    p->name, list[j].name, list[j].n, p->name,
				    list[j].name);
		routes(&c->env, p->name, list, n, problems, oks);
		routes(&c->file, p->name, list, n, problems, oks);
		forwards(&c->env, p->name, list, n, problems, oks);
		forwards(&c->file, p->name, list, n, problems, oks);
		shared(p->name, list, n, problems, oks);
	}
}
