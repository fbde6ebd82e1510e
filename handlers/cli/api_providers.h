/*
 * api_providers.h -- the providers' own APIs as idemhook catch-up and
 * idemhook health use them: one module each (api_stripe.c,
 * api_github.c, api_asaas.c, api_shopify.c), their table and the one
 * loop over it (api_providers.c).  The session they work in is
 * api_session.h; the commands (cli_catchup.c, cli_health.c) sit on top.
 *
 * Each catch-up function fills the struct catchup it is given (counts,
 * cu->err, cu->note) and returns IH_OK when the window was covered,
 * IH_ECONFIG when the provider refused the key, IH_EIO when a call
 * failed, IH_ESTORE when the store did.  Each health function adds its
 * findings to a struct health and returns the same codes.
 */
#ifndef IH_API_PROVIDERS_H
#define IH_API_PROVIDERS_H

#include <stddef.h>

#include "api_session.h"
#include "ih.h"

/* Returns the provider called name, or NULL. */
const struct api_provider *api_provider_find(const char *name);

/* The job a command asks of a provider's API. */
#define API_JOB_CATCHUP	0
#define API_JOB_HEALTH	1

/*
 * Returns the API of the provider an operator named (--provider name)
 * when it can do job, or NULL after printing why not as "cmd: name:
 * reason".
 */
const struct api_provider *api_provider_named(const char *cmd,
	    const char *name, int job);

/*
 * Opens cu for providers_all[pi] (catchup_open) with the receivers' log
 * destination, for the command cmd.  Returns 0 when cu is ready (the
 * caller closes it); otherwise cu is closed and the provider's exit code
 * is returned: -1 (skip quietly) when it has no key and was not named,
 * 2 after "cmd: NAME: set VAR" and hint when it was, 2 or 1 (no memory)
 * for any other failure.
 */
int	api_provider_open(struct catchup *cu, struct cli *c, size_t pi,
	    const struct api_provider *ap, int named, const char *cmd,
	    const char *hint);

/*
 * Returns the API of providers_all[i] when it can do job and, when
 * nnamed is not 0, the operator named it among named[]; NULL otherwise.
 */
const struct api_provider *api_provider_pick(size_t i, int job,
	    const char *const *named, size_t nnamed);

/*
 * One provider's run in api_each_provider(): providers_all[pi] with its
 * API ap, named when the operator named it.  Returns its exit code (0
 * to 3, api_session.h), or -1 when it was skipped (no key, not named);
 * sets *first to 0 once it has written its JSON object.
 */
typedef int (*api_each_fn)(void *arg, size_t pi,
    const struct api_provider *ap, int named, int *first);

/*
 * The main loop of catch-up and health: writes the JSON array's brackets
 * when json, calls fn for each provider whose API can do job (those in
 * named[], or every one when nnamed is 0), in providers_all's order, and
 * returns the worst exit code, rank[code] saying how bad each of 0 to 3
 * is.  When no provider was tried and none was named, prints "cmd: no
 * provider has an API key" and returns 2.
 */
int	api_each_provider(const char *cmd, int job, const char *const *named,
	    size_t nnamed, int json, const int rank[4], api_each_fn fn,
	    void *arg);

int	api_stripe_catchup(struct catchup *cu);
int	api_stripe_health(struct catchup *cu, struct health *h);
int	api_github_catchup(struct catchup *cu);
int	api_github_health(struct catchup *cu, struct health *h);
int	api_github_release(struct catchup *cu);
int	api_asaas_catchup(struct catchup *cu);
int	api_asaas_health(struct catchup *cu, struct health *h);
int	api_shopify_catchup(struct catchup *cu);
int	api_shopify_health(struct catchup *cu, struct health *h);

#endif
