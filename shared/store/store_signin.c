/*
 * store_signin.c -- the console's sign-in budgets (store_signin.h): the
 * front, the same for every backend; the statements are each backend's
 * (sqlite_signin.c, pg_signin.c).
 */
#include <string.h>

#include "ih.h"
#include "store_backend.h"
#include "store_signin.h"

int
store_signin_charge(struct store *st, const char *key, int64_t now_ms,
    int64_t window_ms, long max, struct store_signin *out, char *err,
    size_t errlen)
{
	memset(out, 0, sizeof(*out));
	if (key == NULL || strlen(key) >= STORE_SIGNIN_KEY_MAX || max < 1 ||
	    window_ms < 1)
		return IH_EINVAL;
	return st->ops->signin_charge(st, key, now_ms, window_ms, max, out,
	    err, errlen);
}

int
store_signin_refund(struct store *st, const char *key, int forget,
    char *err, size_t errlen)
{
	if (key == NULL || strlen(key) >= STORE_SIGNIN_KEY_MAX)
		return IH_EINVAL;
	return st->ops->signin_refund(st, key, forget, err, errlen);
}

int
store_signin_prune(struct store *st, int64_t before_ms, char *err,
    size_t errlen)
{
	return st->ops->signin_prune(st, before_ms, err, errlen);
}
