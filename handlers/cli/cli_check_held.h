/*
 * cli_check_held.h -- idemhook check's word on GitHub's held repeats (a
 * known body under a new X-GitHub-Delivery, provider.h hold_replays),
 * called by cli_check.c.  Only GitHub's deliveries API releases them
 * unattended (idemhook work, catch-up), with a key or the App for their
 * account (api_accounts.h); without one they wait for the operator.
 *
 *   - cli_check_held_notes(): for the default account with a secret and
 *     each account named by one, a "note: " line when it has no key nor
 *     App (not a problem: the operator may mean it);
 *   - cli_check_held_store(): for each account holding repeats in the
 *     store, a "PROBLEM: " line counting them, with the commands that
 *     release them.
 *
 * Adds to *problems and *oks; nothing is kept between calls.
 */
#ifndef IH_CLI_CHECK_HELD_H
#define IH_CLI_CHECK_HELD_H

#include "idemhook.h"
#include "store.h"

void	cli_check_held_notes(struct cli *c, int default_has_secret);
void	cli_check_held_store(struct cli *c, struct store *st, int *problems,
	    int *oks);

#endif
