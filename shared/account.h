/*
 * account.h -- accounts (issue 29): many accounts of one provider on one
 * installation, each with its own secrets, settings and namespace in the
 * store (handlers/README.md, Accounts).
 *
 * An account is a name matching [a-z0-9_-]{1,32}.  The implicit account
 * of an installation without accounts is ACCOUNT_DEFAULT ("default"),
 * whose settings are the plain names (IDEMHOOK_STRIPE_SECRET); an
 * account's own settings are the provider's names suffixed "@name"
 * (IDEMHOOK_STRIPE_SECRET@acme, IDEMHOOK_STRIPE_SECRET_2@acme,
 * IDEMHOOK_STRIPE_TOLERANCE@acme): '@' never appears in a plain name,
 * so no suffix can be read as part of one (_2, _API_VERSIONS).  An
 * account exists when it has a secret of its own; it never falls back to
 * the default account's secrets.  Its other settings of its own are those
 * read at receipt (TOLERANCE, MAX_BODY, ALLOW_FROM, API_VERSIONS), which
 * fall back to the provider's, then to the global ones; actions and
 * processing settings are the provider's.
 *
 * The account of a delivery comes from the endpoint's URL (PATH_INFO,
 * "/hooks/stripe/acme").  A provider's header that names an account
 * (GitHub's installation target, Shopify's shop) only picks whose
 * secrets are tried, through IDEMHOOK_<PROVIDER>_ROUTE_<value>=name: the
 * signature still decides.  The names themselves (the rule, the
 * default account, the URL's account) are account_name.h, below the
 * settings, so that the settings' own code can check a name.  Nothing
 * here allocates except
 * account_source() users' config_load(); no function keeps a pointer
 * past its call except struct account_src, which borrows its inner
 * sources and name while it is used.
 */
#ifndef IH_ACCOUNT_H
#define IH_ACCOUNT_H

#include <stddef.h>

#include "account_name.h"
#include "config_source.h"

/*
 * A source of settings for one account: get(name) answers name@account
 * for the provider's secrets (secret_var and its rotation slots),
 * which never fall back, and for its receipt settings above, which fall
 * back to name itself; any other name is looked up as it is.  For the
 * default account it is the inner sources unchanged.
 */
struct account_src {
	const struct config_source	*inner;
	size_t				 ninner;
	const char			*account;
	const char			*secret_var;
	char				 prefix[64];
	char				 buf[192];	/* the name looked up */
};

void	account_source(struct account_src *as, struct config_source *out,
	    const struct config_source *inner, size_t ninner,
	    const char *provider, const char *secret_var, const char *account);

/*
 * Calls fn(arg, name) for each setting's name that the sources hold,
 * looking through account sources to their inner ones: those that are
 * lists (config_vars_get()'s, the environment and the file); any other
 * source (a request's parameters) is not listed.  A name may come more
 * than once.  For the settings named per account whose accounts are not
 * known beforehand (IDEMHOOK_STRIPE_FORWARD_URL@acme, forward.h).
 */
void	account_each_name(const struct config_source *src, size_t nsrc,
	    void (*fn)(void *arg, const char *name), void *arg);

/*
 * The header of provider's deliveries that names an account, or NULL:
 * GitHub's X-GitHub-Hook-Installation-Target-ID, Shopify's
 * X-Shopify-Shop-Domain.
 */
const char *account_route_header(const char *provider);

/*
 * The account that header value routes to, from the setting
 * IDEMHOOK_<PROVIDER>_ROUTE_<value> in src, into out.  Returns IH_OK,
 * IH_ENOTFOUND when no setting names one (or value is not made of
 * [A-Za-z0-9._-], at most 100 bytes), IH_ECONFIG when the setting is not
 * an account name.
 */
int	account_route(const char *provider, const char *value,
	    const struct config_source *src, size_t nsrc, char *out,
	    size_t outlen);

#endif
