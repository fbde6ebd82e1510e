/*
 * cli_check_accounts.h -- idemhook check's audit of accounts (issue 29,
 * account.h), called by cli_check.c: for each provider, the accounts
 * named in the start-up environment and the settings file by a secret
 * (IDEMHOOK_STRIPE_SECRET@acme, _2@acme ...), how many secrets each has,
 * a name that is not an account name, a routing setting
 * (IDEMHOOK_<PROVIDER>_ROUTE_<value>) naming an account without secrets,
 * and two accounts (the default one included) sharing a secret, which
 * would let a delivery signed for one verify at the other's URL.  Prints
 * "ok: " or "PROBLEM: " lines, never a secret; adds to *problems and
 * *oks.
 */
#ifndef IH_CLI_CHECK_ACCOUNTS_H
#define IH_CLI_CHECK_ACCOUNTS_H

#include "idemhook.h"

void	cli_check_accounts(const struct cli *c, int *problems, int *oks);

#endif
