/* store_kept.c -- an event's kept headers alone (store_kept.h). */
#include "store_backend.h"
#include "store_kept.h"

int
store_kept_headers(struct store *st, int64_t rowid, char **out, char *err,
    size_t errlen)
{
	*out = NULL;
	return st->ops->kept(st, rowid, out, err, errlen);
}
