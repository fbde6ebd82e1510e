/*
 * cli_check_actions.h -- idemhook check's audit of one provider's
 * actions (IDEMHOOK_<PROVIDER>_ACTION .. _8) and alert action, called by
 * cli_check.c for each provider it serves:
 *   - a pattern that can match no event type of the provider: a quote
 *     in it (the settings file unwraps only a whole quoted value), a
 *     character the provider's types never hold (Asaas's are upper
 *     case, the others' lower case), or a literal pattern without the
 *     separator every type of the provider has (Stripe's '.', Shopify's
 *     '/').  No provider's full list of types is shipped: each adds
 *     types on its own schedule, and a list would flag a new one; the
 *     shapes above do not change.  A glob ("invoice.*") passes;
 *   - a command whose program is not an executable file: a path that
 *     is not an executable regular file, or a name found on no folder
 *     of the actions' PATH that is not a shell builtin.  A command that
 *     starts with shell syntax ($, quotes, an assignment) is not judged.
 * Prints "ok: " or "PROBLEM: " lines; adds to *problems and *oks.
 */
#ifndef IH_CLI_CHECK_ACTIONS_H
#define IH_CLI_CHECK_ACTIONS_H

#include "config.h"

void	cli_check_actions(const char *provider, const struct config *cfg,
	    int *problems, int *oks);

#endif
