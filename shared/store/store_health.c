/*
 * store_health.c -- endpoint health and refused signatures in the store
 * (store_health.h): the checks, then the backend's statement
 * (sqlite_health.c, pg_health.c).
 */
#include <string.h>

#include "ih.h"
#include "store_backend.h"
#include "store_health.h"

int
store_health_put(struct store *st, const struct store_health *h,
    char *err, size_t errlen)
{
	if (h->provider == NULL || h->outcome == NULL || h->findings == NULL)
		return IH_EINVAL;
	return st->ops->health_put(st, h, err, errlen);
}

int
store_health_list(struct store *st,
    int (*fn)(void *, const struct store_health *), void *arg, char *err,
    size_t errlen)
{
	return st->ops->health_list(st, fn, arg, err, errlen);
}

int
store_sigfail_note(struct store *st, const char *provider, int64_t now_ms,
    char *err, size_t errlen)
{
	return store_sigfail_add(st, provider, now_ms / 60000, 1, err, errlen);
}

int
store_sigfail_add(struct store *st, const char *provider, int64_t minute,
    long count, char *err, size_t errlen)
{
	if (st->ops->sigfails_add == NULL || count <= 0)
		return IH_OK;
	return st->ops->sigfails_add(st, provider, minute, count,
	    minute - STORE_SIGFAIL_KEEP_MIN, err, errlen);
}

int
store_sigfail_sums(struct store *st, int64_t hour_min, int64_t day_min,
    int64_t to_min, store_sigfail_fn fn, void *arg, char *err,
    size_t errlen)
{
	if (st->ops->sigfails_sums == NULL)
		return IH_ENOTFOUND;
	return st->ops->sigfails_sums(st, hour_min, day_min, to_min, fn, arg,
	    err, errlen);
}

int
store_sigfail_count(struct store *st, const char *provider,
    int64_t from_min, int64_t to_min, long *count, int64_t *first_min,
    char *err, size_t errlen)
{
	*count = 0;
	*first_min = 0;
	if (st->ops->sigfails_count == NULL)
		return IH_ENOTFOUND;
	return st->ops->sigfails_count(st, provider, from_min, to_min, count,
	    first_min, err, errlen);
}
