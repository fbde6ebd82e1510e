/* store_thin.c -- the store's side of Stripe's thin events. */
#include "ih.h"
#include "store.h"
#include "store_backend.h"
#include "store_thin.h"

void
store_set_fetch(struct store *st, enum store_fetch mode)
{
	st->fetch = (int)mode;
}

int
store_fetched(struct store *st, const struct store_job *job,
    const char *owner, const unsigned char *payload, size_t len,
    const char *headers, char *err, size_t errlen)
{
	struct store_txn *tx = NULL;
	int rc;

	rc = store_begin(st, STORE_RELAXED, &tx, err, errlen);
	if (rc != IH_OK)
		return rc;
	rc = st->ops->fetched(st, job, owner, payload, len, headers, err,
	    errlen);
	if (rc == IH_OK)
		return store_commit(tx, err, errlen);
	store_rollback(tx);
	return rc;
}
