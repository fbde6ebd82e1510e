/*
 * api_providers.h -- the providers' own APIs as idemhook catch-up and
 * idemhook health use them: one module each (api_stripe.c,
 * api_github.c, api_asaas.c, api_shopify.c) and their table
 * (cli_health.c).
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

#include "cli_catchup.h"
#include "ih.h"

#define HEALTH_MAX	32
#define HEALTH_LINE_MAX	512

/* What health found: one line per check, each a problem or not. */
struct health {
	char	 line[HEALTH_MAX][HEALTH_LINE_MAX];
	int	 problem[HEALTH_MAX];
	size_t	 n;
	int	 problems;
};

/* Adds one finding (cut at HEALTH_LINE_MAX; dropped past HEALTH_MAX). */
void	health_add(struct health *h, int problem, const char *fmt, ...)
	    IH_PRINTF(3, 4);

struct api_provider {
	const char	*name;
	const char	*def_base;	/* IDEMHOOK_<P>_API_BASE's default */
	int		(*catchup)(struct catchup *cu);
	int		(*health)(struct catchup *cu, struct health *h);
	const char	*no_api;	/* why there is none, or NULL */
	const char	*alt_cred;	/* a setting that may stand in for */
					/* the key (GitHub's App), or NULL */
};

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

int	api_stripe_catchup(struct catchup *cu);
int	api_stripe_health(struct catchup *cu, struct health *h);
int	api_github_catchup(struct catchup *cu);
int	api_github_health(struct catchup *cu, struct health *h);
int	api_asaas_catchup(struct catchup *cu);
int	api_asaas_health(struct catchup *cu, struct health *h);
int	api_shopify_catchup(struct catchup *cu);
int	api_shopify_health(struct catchup *cu, struct health *h);

#endif
