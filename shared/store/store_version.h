/*
 * store_version.h -- the store's counts of events by API version
 * (version 7; shared/version.h says where versions come from).
 *
 * A read of the events table, outside any transaction; the strings it
 * hands to the callback are borrowed for the call.  Failures are
 * IH_ESTORE with the cause in err, or what the callback returned.
 */
#ifndef IH_STORE_VERSION_H
#define IH_STORE_VERSION_H

#include <stdint.h>

#include "store.h"

/*
 * Events first received in [since_ms, until_ms) by provider and API
 * version (version 7): how many, and how many of them are held.  Strings
 * are borrowed for the call; api_version is NULL for events without one.
 */
struct store_version_count {
	const char	*provider;
	const char	*api_version;
	int64_t		 events;
	int64_t		 held;
};

/*
 * Calls fn once per (provider, version), ordered by both; provider NULL
 * means all.  Returns IH_OK, IH_ESTORE or what fn returned.
 */
int	store_versions(struct store *st, const char *provider,
	    int64_t since_ms, int64_t until_ms,
	    int (*fn)(void *arg, const struct store_version_count *c),
	    void *arg, char *err, size_t errlen);

#endif
