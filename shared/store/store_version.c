/* store_version.c -- the store's counts of events by API version. */
#include <stdint.h>

#include "store.h"
#include "store_backend.h"
#include "store_version.h"

int
store_versions(struct store *st, const char *provider, int64_t since_ms,
    int64_t until_ms, int (*fn)(void *, const struct store_version_count *),
    void *arg, char *err, size_t errlen)
{
	return st->ops->versions(st, provider, since_ms, until_ms, fn, arg,
	    err, errlen);
}
