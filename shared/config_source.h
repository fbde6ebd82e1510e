/*
 * config_source.h -- where settings come from: a source answers a
 * setting's environment name (IDEMHOOK_DB, IDEMHOOK_STRIPE_SECRET, ...)
 * with its value, and an ordered list of sources is looked up in order,
 * the first source that has the name winning.  The programs use three:
 * the request's own parameters (Apache SetEnv, nginx fastcgi_param;
 * serve.c lets through only IDEMHOOK_CONFIG and, where nothing was set at
 * start-up, secrets), the process environment captured before the first
 * FastCGI accept (lighttpd bin-environment, FcgidInitialEnv), and the
 * file named by IDEMHOOK_CONFIG (config_vars.h parses both; settings.h
 * puts them in order, the one place that builds the list).
 *
 * A source only borrows: the value it returns belongs to the source and
 * lives as long as it does.  Nothing here allocates or fails.  This sits
 * below every reader of settings (config.h, account.h,
 * forward_settings.h), so that each can look names up.
 */
#ifndef IH_CONFIG_SOURCE_H
#define IH_CONFIG_SOURCE_H

#include <stddef.h>

/* A source of settings: returns the value of name, or NULL. */
struct config_source {
	const char	*(*get)(void *arg, const char *name);
	void		 *arg;
};

/*
 * Looks up name in the sources, in order; an empty value counts as
 * unset.  Returns NULL when no source has a non-empty value.
 */
const char *config_lookup(const struct config_source *src, size_t nsrc,
	    const char *name);

#endif
