/* store_replay.c -- replay by filter: its rule and its batches. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ih.h"
#include "store.h"
#include "store_backend.h"

enum store_bulk
store_bulk_check(const struct store_filter *f, int all)
{
	int narrowed = f->provider != NULL || f->event_type != NULL ||
	    f->since_ms > 0 || f->until_ms > 0;

	if (f->status != NULL && (strcmp(f->status, "received") == 0 ||
	    strcmp(f->status, "processing") == 0))
		return STORE_BULK_NOT_REPLAYABLE;
	if (f->status == NULL)
		return STORE_BULK_NO_STATUS;
	if (strcmp(f->status, "done") == 0 && !narrowed && !all)
		return STORE_BULK_DONE_ALL;
	return STORE_BULK_OK;
}

const char *
store_bulk_why(enum store_bulk b)
{
	switch (b) {
	case STORE_BULK_NOT_REPLAYABLE:
		return "events received or processing are already due or "
		    "being processed; choose done, failed, dead, "
		    "quarantined or held";
	case STORE_BULK_NO_STATUS:
		return "a replay by filter needs a status (done, failed, "
		    "dead, quarantined or held), so that done events are never "
		    "replayed by accident";
	case STORE_BULK_DONE_ALL:
		return "done with no other filter would run the actions of "
		    "every done event again: narrow it (provider, type, "
		    "since, until) or confirm every done event";
	default:
		return "";
	}
}

/* Passes each row on, remembering the last one a batch took. */
struct walk {
	store_row_fn	 fn;
	void		*arg;
	int64_t		 last;
};

static int
walk_row(void *arg, const struct store_row *row)
{
	struct walk *w = arg;

	if (row->rowid > w->last)
		w->last = row->rowid;
	return w->fn != NULL ? w->fn(w->arg, row) : IH_OK;
}

int
store_requeue_batches(struct store *st, const struct store_filter *f,
    int dry_run, int64_t now_ms, store_row_fn fn, void *arg, long *count,
    long *batches, char *err, size_t errlen)
{
	struct store_filter bf;
	struct store_txn *tx = NULL;
	struct walk w;
	long n, nb = 0;
	int rc = IH_OK;

	*count = 0;
	if (batches != NULL)
		*batches = 0;
	if (dry_run)
		return st->ops->requeue(st, f, 1, now_ms, fn, arg, count, err,
		    errlen);
	bf = *f;
	bf.max_bytes = STORE_REQUEUE_BYTES;
	w.fn = fn;
	w.arg = arg;
	w.last = f->after_rowid;
	for (;;) {
		bf.limit = STORE_REQUEUE_ROWS;
		if (f->limit > 0 && f->limit - *count < bf.limit)
			bf.limit = f->limit - *count;
		if (bf.limit <= 0)
			break;
		bf.after_rowid = w.last;
		/* A batch per transaction: the lock is held briefly. */
		rc = store_begin(st, STORE_DURABLE, &tx, err, errlen);
		if (rc != IH_OK)
			break;
		n = 0;
		rc = st->ops->requeue(st, &bf, 0, now_ms, walk_row, &w, &n,
		    err, errlen);
		if (rc != IH_OK) {
			store_rollback(tx);
			break;
		}
		rc = store_commit(tx, err, errlen);
		if (rc != IH_OK)
			break;
		if (n == 0)
			break;
		*count += n;
		nb++;
	}
	if (batches != NULL)
		*batches = nb;
	return rc;
}

int
store_requeue(struct store *st, const struct store_filter *f, int dry_run,
    int64_t now_ms, store_row_fn fn, void *arg, long *count, char *err,
    size_t errlen)
{
	return store_requeue_batches(st, f, dry_run, now_ms, fn, arg, count,
	    NULL, err, errlen);
}
