/*
 * cli_check_held.c -- idemhook check: GitHub's held repeats
 * (cli_check_held.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "account_name.h"
#include "api_accounts.h"
#include "cli_check_held.h"
#include "cli_check_store.h"
#include "ih.h"
#include "providers.h"
#include "store.h"
#include "store_thin.h"

#define HELD_PROVIDER	"github"

/* The held repeats of each account, as the store lists them. */
struct held_count {
	char	name[API_ACCOUNTS_MAX][ACCOUNT_NAME_MAX + 1];
	long	n[API_ACCOUNTS_MAX];
	size_t	nacc;
	long	other;		/* past API_ACCOUNTS_MAX accounts */
};

static int
count_row(void *arg, const struct store_row *row)
{
	struct held_count *hc = arg;
	const char *a = account_or_default(row->account);
	size_t i;

	for (i = 0; i < hc->nacc; i++)
		if (strcmp(hc->name[i], a) == 0)
			break;
	if (i == hc->nacc) {
		if (hc->nacc == API_ACCOUNTS_MAX) {
			hc->other++;
			return IH_OK;
		}
		snprintf(hc->name[i], sizeof(hc->name[i]), "%s", a);
		hc->nacc++;
	}
	hc->n[i]++;
	return IH_OK;
}

static int
github_index(void)
{
	int i;

	for (i = 0; providers_all[i] != NULL; i++)
		if (strcmp(providers_all[i]->name, HELD_PROVIDER) == 0)
			return i;
	return -1;
}

/* account NULL: the default one, named so in the lines. */
static void
note_one(struct cli *c, size_t pi, const char *account)
{
	char var[96];

	if (api_accounts_has_key(c, pi, account, var, sizeof(var)))
		return;
	printf("note: %s%s%s: no %s nor App (IDEMHOOK_GITHUB_APP_ID): a "
	    "repeat (a body already recorded, under a new X-GitHub-Delivery) "
	    "is held until the operator releases it with idemhook replay or "
	    "the console; work and catch-up cannot ask GitHub\n",
	    HELD_PROVIDER, account != NULL ? ": account " : "",
	    account != NULL ? account : "", var);
}

void
cli_check_held_notes(struct cli *c, int default_has_secret)
{
	struct api_accounts *acc;
	size_t i;
	int pi = github_index();

	if (pi < 0)
		return;
	if (default_has_secret)
		note_one(c, (size_t)pi, NULL);
	acc = malloc(sizeof(*acc));
	if (acc == NULL)
		return;
	api_accounts_named(c, (size_t)pi, acc);
	for (i = 0; i < acc->n; i++)
		note_one(c, (size_t)pi, acc->name[i]);
	free(acc);
}

void
cli_check_held_store(struct cli *c, struct store *st, int *problems,
    int *oks)
{
	struct store_filter f;
	struct held_count *hc;
	char err[STORE_ERR_MAX], var[96], opt[64];
	const char *a;
	size_t i;
	int pi = github_index(), keyed;

	if (pi < 0)
		return;
	hc = calloc(1, sizeof(*hc));
	if (hc == NULL)
		return;
	memset(&f, 0, sizeof(f));
	f.provider = HELD_PROVIDER;
	f.status = "held";
	if (store_list(st, &f, count_row, hc, err, sizeof(err)) != IH_OK) {
		cli_check_say(0, problems, oks, "%s: cannot count the held "
		    "events: %s", HELD_PROVIDER, err);
		goto out;
	}
	for (i = 0; i < hc->nacc; i++) {
		a = strcmp(hc->name[i], ACCOUNT_DEFAULT) == 0 ? NULL :
		    hc->name[i];
		/* The static build's work cannot ask GitHub, key or not. */
		keyed = STORE_THIN_CAN_FETCH && api_accounts_has_key(c,
		    (size_t)pi, a, var, sizeof(var));
		snprintf(opt, sizeof(opt), "%s%s", a != NULL ? " --account " :
		    "", a != NULL ? a : "");
		cli_check_say(0, problems, oks, "%s%s%s: %ld held repeat(s), "
		    "run for nothing until released (%s): idemhook list%s "
		    "--provider %s --status held, check each against "
		    "GitHub's Recent Deliveries, then idemhook replay%s %s "
		    "EVENT_ID or the console's Replay", HELD_PROVIDER,
		    a != NULL ? ": account " : "", a != NULL ? a : "",
		    hc->n[i], keyed ? "idemhook work and catch-up release "
		    "those GitHub lists, the others wait for you" :
		    "nothing but you releases them", opt, HELD_PROVIDER, opt,
		    HELD_PROVIDER);
	}
	if (hc->other > 0)
		cli_check_say(0, problems, oks, "%s: %ld held repeat(s) of "
		    "other accounts: idemhook list --provider %s --status held",
		    HELD_PROVIDER, hc->other, HELD_PROVIDER);
out:
	free(hc);
}
