/*
 * store_many.c -- recording several events with one wait for all their
 * inserts' answers (store.h, store_record_claim_many()).
 */
#include <stdio.h>
#include <string.h>

#include "ih.h"
#include "store_backend.h"
#include "store_many.h"

int
store_record_many_ok(const struct store *st)
{
	return st->ops->record_many != NULL;
}

int
store_record_done(struct store *st, struct store_txn *tx,
    const struct event *ev, int64_t now_ms, const char *owner,
    int64_t lease_ms, struct store_result *res, struct store_job *job,
    char *err, size_t errlen)
{
	int rc;

	st->as_done = 1;
	rc = store_record_claim(st, tx, ev, now_ms, owner, lease_ms, res, job,
	    err, errlen);
	st->as_done = 0;
	return rc;
}

int
store_begin_many(struct store *st, enum store_durability d,
    struct store_txn **tx, char *err, size_t errlen)
{
	if (st->ops->defer_begin != NULL && !st->tx.open)
		st->ops->defer_begin(st);
	return store_begin(st, d, tx, err, errlen);
}

int
store_record_claim_many(struct store *st, struct store_txn *tx,
    const struct event *const *evs, size_t n, int64_t now_ms,
    const char *const *owners, int64_t lease_ms, struct store_result *res,
    struct store_job *const *jobs, char *err, size_t errlen)
{
	return store_record_done_many(st, tx, evs, n, now_ms, owners, NULL,
	    lease_ms, res, jobs, err, errlen);
}

int
store_record_done_many(struct store *st, struct store_txn *tx,
    const struct event *const *evs, size_t n, int64_t now_ms,
    const char *const *owners, const int *done, int64_t lease_ms,
    struct store_result *res, struct store_job *const *jobs, char *err,
    size_t errlen)
{
	const struct event *ev;
	size_t i;
	int rc;

	for (i = 0; i < n; i++) {
		memset(jobs[i], 0, sizeof(*jobs[i]));
		memset(&res[i], 0, sizeof(res[i]));
	}
	if (st->ops->record_many == NULL || n > 64 || tx == NULL ||
	    !tx->open || tx->st != st) {
		snprintf(err, errlen, "cannot record several events at once "
		    "here");
		return IH_EINVAL;
	}
	for (i = 0; i < n; i++) {
		ev = evs[i];
		if (ev->provider == NULL || ev->event_id == NULL ||
		    ev->event_type == NULL || ev->payload_len > 0x7fffffff ||
		    ev->replaces_held) {
			snprintf(err, errlen, "event %lu is for one at a time",
			    (unsigned long)i);
			return IH_EINVAL;
		}
	}
	rc = st->ops->record_many(st, evs, n, now_ms, owners, done,
	    now_ms + lease_ms, res, err, errlen);
	for (i = 0; rc == IH_OK && i < n; i++) {
		if (owners[i] == NULL || res[i].duplicate)
			continue;
		ev = evs[i];
		rc = store_job_set(jobs[i], ev->provider, ev->event_id,
		    ev->event_type, ev->subtype);
		if (rc == IH_OK)
			rc = store_job_account(jobs[i], ev->account);
		jobs[i]->ev.rowid = res[i].rowid;
		jobs[i]->ev.attempt = 1;
		jobs[i]->ev.received_at = now_ms;
		jobs[i]->seq = 1;
	}
	if (rc != IH_OK)
		for (i = 0; i < n; i++)
			store_job_free(jobs[i]);
	return rc;
}
