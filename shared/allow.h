/*
 * allow.h -- a source-address allow-list: which clients may deliver.
 *
 * GitHub and Shopify sign only the body, so a captured body can be sent
 * again by anyone who can reach the endpoint.  A list of the provider's
 * published ranges (GitHub's "hooks" in its meta API) narrows who can.
 * The list is text, "CIDR[, CIDR ...]" (commas or blanks between), each
 * an IPv4 or IPv6 address with an optional /prefix; an IPv4-mapped IPv6
 * client (::ffff:192.0.2.1) matches IPv4 entries.  Nothing is allocated.
 */
#ifndef IH_ALLOW_H
#define IH_ALLOW_H

#define ALLOW_ENTRY_MAX	64	/* longest single entry */

/*
 * Sets *allowed to 1 when addr (REMOTE_ADDR; NULL or unparsable never
 * matches) lies in one of the list's ranges, else 0.  Returns IH_OK, or
 * IH_ECONFIG with the bad entry named in err for a malformed list (an
 * empty list is malformed: it would refuse every delivery).
 */
int	allow_check(const char *list, const char *addr, int *allowed,
	    char *err, size_t errlen);

#endif
