/* store_waiting.c -- why a pending event waits (store_waiting.h). */
#include "store_backend.h"
#include "store_waiting.h"

int
store_behind(struct store *st, int64_t rowid, char *id, size_t cap,
    char *err, size_t errlen)
{
	if (cap > 0)
		id[0] = '\0';
	return st->ops->behind(st, rowid, id, cap, err, errlen);
}
