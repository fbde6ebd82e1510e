/*
 * api_accounts.h -- the accounts (account.h) a provider's API runs for,
 * for idemhook work's release of GitHub's held repeats and for check's
 * word on who can release them.  An account is named by a secret of its
 * own (IDEMHOOK_GITHUB_SECRET@acme) in the start-up environment or the
 * settings file; it has the API when IDEMHOOK_<P>_API_KEY@NAME is set
 * (the default account: the plain name), or the provider's other
 * credential (GitHub's App, IDEMHOOK_GITHUB_APP_ID), which stands in for
 * every account as it does for catch-up --account.  Nothing is kept
 * between calls; the names are copied into the caller's list.
 */
#ifndef IH_API_ACCOUNTS_H
#define IH_API_ACCOUNTS_H

#include <signal.h>
#include <stddef.h>

#include "account_name.h"
#include "idemhook.h"
#include "log.h"

/* The accounts one run looks at; more are left out, in the order read. */
#define API_ACCOUNTS_MAX	64

struct api_accounts {
	char	name[API_ACCOUNTS_MAX][ACCOUNT_NAME_MAX + 1];
	size_t	n;
};

/*
 * The accounts of providers_all[pi] other than the default one, each
 * named once by a non-empty secret of its own, into out.
 */
void	api_accounts_named(const struct cli *c, size_t pi,
	    struct api_accounts *out);

/*
 * Does account (NULL: the default one) of providers_all[pi] have its
 * provider's API: a key of its own, or the other credential?  The
 * setting's name that it lacks goes to var (at most varlen bytes).
 */
int	api_accounts_has_key(struct cli *c, size_t pi, const char *account,
	    char *var, size_t varlen);

/*
 * For idemhook work: cli_catchup_release() for the default account, then
 * for each named account with the API, each with its own settings and
 * the command's store.  Returns IH_OK or the first failure's code (the
 * others are still tried; each failure is a line to log).  stop (may be
 * NULL), once set, ends the API call in flight and tries no other
 * account.  Its signature is that of a cli_round_job (cli_round.h): arg
 * is unused.
 */
int	api_accounts_release(void *arg, struct cli *c, size_t pi,
	    const struct log_sink *log, const volatile sig_atomic_t *stop);

#endif
