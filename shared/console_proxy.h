/*
 * console_proxy.h -- the console's client address behind a reverse
 * proxy, for its sign-in budgets (console_throttle.h) and its log lines.
 *
 * Behind a proxy every request comes from the proxy's address, so one
 * client's wrong passwords would spend the budget of every operator.
 * IDEMHOOK_CONSOLE_TRUSTED_PROXY names the proxy (one IPv4 or IPv6
 * address): only on a request whose peer (REMOTE_ADDR) is that address
 * is the client's address taken from X-Forwarded-For, and only from its
 * last hop, the one the trusted proxy itself appended (the hops before
 * it are the client's to write).  Anything else keeps REMOTE_ADDR: a
 * request from elsewhere, a missing header, a last hop that is not an IP
 * address.  A value that is not one IP address is refused, never
 * ignored: the console answers 500 and says why.
 */
#ifndef IH_CONSOLE_PROXY_H
#define IH_CONSOLE_PROXY_H

#include <stddef.h>

/* Longest address written (INET6_ADDRSTRLEN). */
#define CONSOLE_ADDR_MAX	46

/*
 * Checks the setting's value v.  Returns IH_OK for one IP address, or
 * IH_ECONFIG with the reason in err (naming the setting).
 */
int	console_trusted_proxy_check(const char *v, char *err, size_t errlen);

/*
 * The client's address into out (at least CONSOLE_ADDR_MAX bytes): from
 * xff (X-Forwarded-For, NULL when absent) when trusted (the setting,
 * NULL or "" when unset) is remote's address, else remote ("-" when
 * NULL).  Returns IH_OK, or IH_ECONFIG (a malformed trusted, see above)
 * with out set to remote all the same.
 */
int	console_client_addr(const char *remote, const char *xff,
	    const char *trusted, char *out, size_t outlen, char *err,
	    size_t errlen);

#endif
