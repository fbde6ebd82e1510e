/*
 * store.c -- the store's front: picks the backend from the location and
 * owns transactions, so that no backend has to guess whether a call joins
 * one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "config.h"
#include "ih.h"
#include "object.h"
#include "store_backend.h"

void
store_row_defaults(struct store_row *row)
{
	if (row->provider == NULL)
		row->provider = "";
	if (row->event_id == NULL)
		row->event_id = "";
	if (row->event_type == NULL)
		row->event_type = "";
	if (row->status == NULL)
		row->status = "";
	if (row->json == NULL)
		row->json = "{}";
}

int
store_object_verdict(const struct object_key *row,
    const struct store_object *o)
{
	struct object_key ev;

	ev.source_ms = o->source_ms;
	ev.rank = o->rank;
	ev.event_id = o->event_id;
	return object_guard(row, &ev);
}

int
store_is_postgres(const char *path)
{
	return config_db_is_postgres(path);
}

enum store_durability
store_durable_as(int synchronous)
{
	if (synchronous == 1)
		return STORE_RELAXED;
	return synchronous == 2 ? STORE_DURABLE_EACH : STORE_DURABLE;
}

int
store_open(const struct store_opts *opts, struct store **out, char *err,
    size_t errlen)
{
	*out = NULL;
	if (opts->path == NULL) {
		snprintf(err, errlen, "no store location");
		return IH_ECONFIG;
	}
	if (store_is_postgres(opts->path))
		return store_pg_open(opts, out, err, errlen);
	return store_sqlite_open(opts, out, err, errlen);
}

void
store_close(struct store *st)
{
	if (st != NULL)
		st->ops->close(st);
}

void
store_no_queue(struct store *st)
{
	if (st->ops->no_queue != NULL)
		st->ops->no_queue(st);
}

const char *
store_backend(const struct store *st)
{
	return st->ops->name;
}

int
store_begin(struct store *st, enum store_durability d, struct store_txn **tx,
    char *err, size_t errlen)
{
	int rc;

	*tx = NULL;
	if (st->tx.open) {
		snprintf(err, errlen, "a transaction is already open");
		return IH_ESTORE;
	}
	rc = st->ops->begin(st, d, err, errlen);
	if (rc != IH_OK)
		return rc;
	st->tx.st = st;
	st->tx.open = 1;
	st->tx.d = d;
	*tx = &st->tx;
	return IH_OK;
}

int
store_commit(struct store_txn *tx, char *err, size_t errlen)
{
	struct store *st;

	if (tx == NULL || !tx->open) {
		snprintf(err, errlen, "no transaction to commit");
		return IH_ESTORE;
	}
	st = tx->st;
	tx->open = 0;
	/* The backend rolls back a commit that fails. */
	return st->ops->commit(st, err, errlen);
}

void
store_rollback(struct store_txn *tx)
{
	if (tx == NULL || !tx->open)
		return;
	tx->open = 0;
	tx->st->ops->rollback(tx->st);
}

int
store_savepoint(struct store_txn *tx, enum store_sp op, char *err,
    size_t errlen)
{
	if (tx == NULL || !tx->open) {
		snprintf(err, errlen, "no transaction for a savepoint");
		return IH_EINVAL;
	}
	return tx->st->ops->savepoint(tx->st, op, err, errlen);
}

/*
 * Joins tx, or begins a transaction of kind d when tx is NULL; *own says
 * which, for join_end().
 */
static int
join_begin(struct store *st, struct store_txn *tx, enum store_durability d,
    struct store_txn **use, char *err, size_t errlen)
{
	if (tx != NULL) {
		if (!tx->open || tx->st != st) {
			snprintf(err, errlen, "the transaction is not open on "
			    "this store");
			return IH_EINVAL;
		}
		*use = NULL;
		return IH_OK;
	}
	return store_begin(st, d, use, err, errlen);
}

/* Ends what join_begin() began: commit on success, else roll back. */
static int
join_end(struct store_txn *own, int rc, char *err, size_t errlen)
{
	if (own == NULL)
		return rc;
	if (rc == IH_OK)
		return store_commit(own, err, errlen);
	store_rollback(own);
	return rc;
}

static int
event_ok(const struct event *ev, char *err, size_t errlen)
{
	if (ev->provider == NULL || ev->event_id == NULL ||
	    ev->event_type == NULL || ev->payload_len > 0x7fffffff) {
		snprintf(err, errlen, "event lacks provider, id or type");
		return IH_EINVAL;
	}
	return IH_OK;
}

/*
 * Records ev in the open transaction.  When ev replaces a held event
 * (struct event's replaces_held) and its id turns out to be held, the held
 * row is deleted and ev recorded again in its place, in the same
 * transaction: the two commit or fail together, and the expected version
 * becomes the event, never processed beside the held one.  Looking only
 * after a duplicate costs the usual delivery nothing; and on PostgreSQL
 * a held row committed while this insert waited on it is seen by the
 * delete, which a look before the insert would miss.
 */
static int
record_ev(struct store *st, const struct event *ev, int64_t now_ms,
    const char *owner, int64_t lease_until, struct store_result *res,
    char *err, size_t errlen)
{
	int rc;

	rc = st->ops->record(st, ev, now_ms, owner, lease_until, res, err,
	    errlen);
	if (rc != IH_OK || !ev->replaces_held || !res->duplicate ||
	    strcmp(res->status, "held") != 0)
		return rc;
	rc = st->ops->release_held(st, ev, err, errlen);
	if (rc != IH_OK)
		return rc;
	return st->ops->record(st, ev, now_ms, owner, lease_until, res, err,
	    errlen);
}

int
store_record(struct store *st, struct store_txn *tx,
    const struct event *ev, int64_t now_ms, struct store_result *res,
    char *err, size_t errlen)
{
	struct store_txn *own = NULL;
	int rc;

	memset(res, 0, sizeof(*res));
	rc = event_ok(ev, err, errlen);
	if (rc != IH_OK)
		return rc;
	rc = join_begin(st, tx, STORE_DURABLE, &own, err, errlen);
	if (rc != IH_OK)
		return rc;
	rc = record_ev(st, ev, now_ms, NULL, 0, res, err, errlen);
	return join_end(own, rc, err, errlen);
}

int
store_record_batch(struct store *st, struct store_txn *tx,
    const struct event *evs, size_t n, int64_t now_ms,
    struct store_result *res, int *rcs, char *err, size_t errlen)
{
	struct store_txn *own = NULL, *use;
	char why[STORE_ERR_MAX];
	size_t i;
	int rc;

	for (i = 0; i < n; i++) {
		memset(&res[i], 0, sizeof(res[i]));
		rcs[i] = event_ok(&evs[i], why, sizeof(why));
	}
	rc = join_begin(st, tx, STORE_DURABLE, &own, err, errlen);
	use = own != NULL ? own : tx;
	for (i = 0; rc == IH_OK && i < n; i++) {
		if (rcs[i] != IH_OK)
			continue;
		/* A savepoint each: one failing event leaves the others. */
		rc = store_savepoint(use, STORE_SP_OPEN, err, errlen);
		if (rc != IH_OK)
			break;
		rcs[i] = record_ev(st, &evs[i], now_ms, NULL, 0, &res[i],
		    why, sizeof(why));
		rc = store_savepoint(use, rcs[i] == IH_OK ? STORE_SP_KEEP :
		    STORE_SP_UNDO, err, errlen);
		if (rcs[i] != IH_OK)
			memset(&res[i], 0, sizeof(res[i]));
	}
	rc = join_end(own, rc, err, errlen);
	if (rc != IH_OK) {
		for (i = 0; i < n; i++) {
			memset(&res[i], 0, sizeof(res[i]));
			rcs[i] = IH_ESTORE;
		}
		rc = IH_ESTORE;
	}
	return rc;
}

int
store_record_claim(struct store *st, struct store_txn *tx,
    const struct event *ev, int64_t now_ms, const char *owner,
    int64_t lease_ms, struct store_result *res, struct store_job *job,
    char *err, size_t errlen)
{
	int rc;

	memset(job, 0, sizeof(*job));
	memset(res, 0, sizeof(*res));
	if (tx == NULL || !tx->open || tx->st != st || owner == NULL) {
		snprintf(err, errlen, "a claim on record needs a transaction");
		return IH_EINVAL;
	}
	rc = event_ok(ev, err, errlen);
	if (rc != IH_OK)
		return rc;
	rc = record_ev(st, ev, now_ms, owner, now_ms + lease_ms, res,
	    err, errlen);
	if (rc != IH_OK || res->duplicate)
		return rc;
	rc = store_job_set(job, ev->provider, ev->event_id, ev->event_type,
	    ev->subtype);
	if (rc == IH_OK)
		rc = store_job_account(job, ev->account);
	if (rc != IH_OK)
		goto out;
	job->ev.rowid = res->rowid;
	job->ev.attempt = 1;
	job->ev.received_at = now_ms;
	rc = st->ops->attempt_start(st, job->ev.rowid, now_ms, &job->seq, err,
	    errlen);
out:
	if (rc != IH_OK)
		store_job_free(job);
	return rc;
}

int
store_replay_of(struct store *st, struct store_txn *tx,
    const struct event *ev, const char *same_action, int *found,
    struct store_first *first, char *err, size_t errlen)
{
	struct store_txn *own = NULL;
	int rc;

	*found = 0;
	memset(first, 0, sizeof(*first));
	if (ev->fingerprint == NULL)
		return IH_OK;
	rc = join_begin(st, tx, STORE_RELAXED, &own, err, errlen);
	if (rc != IH_OK)
		return rc;
	rc = st->ops->replay_of(st, ev, same_action, found, first, err,
	    errlen);
	return join_end(own, rc, err, errlen);
}

int
store_claim(struct store *st, struct store_txn *tx, const char *provider,
    int64_t rowid, const char *owner, int64_t now_ms, int64_t lease_ms,
    struct store_job *job, int *found, char *err, size_t errlen)
{
	struct store_txn *own = NULL;
	int rc;

	memset(job, 0, sizeof(*job));
	*found = 0;
	rc = join_begin(st, tx, STORE_RELAXED, &own, err, errlen);
	if (rc != IH_OK)
		return rc;
	rc = st->ops->claim(st, provider, rowid, owner, now_ms, lease_ms, job,
	    found, err, errlen);
	rc = join_end(own, rc, err, errlen);
	if (rc != IH_OK || !*found) {
		*found = 0;
		store_job_free(job);
	}
	return rc;
}

/*
 * A claim for a record that has just been made: the caller still holds
 * the payload, so the backend leaves it out (store_backend.h).
 */
int
store_claim_fresh(struct store *st, struct store_txn *tx,
    const char *provider, int64_t rowid, const char *owner, int64_t now_ms,
    int64_t lease_ms, struct store_job *job, int *found, char *err,
    size_t errlen)
{
	int rc;

	st->bare = 1;
	rc = store_claim(st, tx, provider, rowid, owner, now_ms, lease_ms, job,
	    found, err, errlen);
	st->bare = 0;
	return rc;
}

int
store_due(struct store *st, const char *provider, int64_t now_ms, int *due,
    char *err, size_t errlen)
{
	*due = 0;
	return st->ops->due(st, provider, now_ms, due, err, errlen);
}

int
store_effect(struct store *st, struct store_txn *tx,
    const struct store_job *job, const char *kind, int64_t now_ms, char *err,
    size_t errlen)
{
	if (tx == NULL || !tx->open || tx->st != st) {
		snprintf(err, errlen, "effects are written inside processing");
		return IH_EINVAL;
	}
	return st->ops->effect(st, job, kind, now_ms, err, errlen);
}

int
store_complete(struct store *st, struct store_txn *tx,
    const struct store_job *job, const char *owner, int64_t now_ms,
    char *err, size_t errlen)
{
	struct store_txn *own = NULL;
	int rc;

	rc = join_begin(st, tx, STORE_RELAXED, &own, err, errlen);
	if (rc != IH_OK)
		return rc;
	rc = st->ops->complete(st, job, owner, now_ms, err, errlen);
	return join_end(own, rc, err, errlen);
}

int
store_fail(struct store *st, struct store_txn *tx,
    const struct store_job *job, const char *owner, const char *error,
    int64_t next_ms, int dead, int64_t now_ms, char *err, size_t errlen)
{
	struct store_txn *own = NULL;
	int rc;

	rc = join_begin(st, tx, STORE_RELAXED, &own, err, errlen);
	if (rc != IH_OK)
		return rc;
	rc = st->ops->fail(st, job, owner, error, next_ms, dead, now_ms, err,
	    errlen);
	return join_end(own, rc, err, errlen);
}

int
store_renew(struct store *st, struct store_txn *tx,
    const struct store_job *job, const char *owner, int64_t lease_ms,
    char *err, size_t errlen)
{
	struct store_txn *own = NULL;
	int rc;

	rc = join_begin(st, tx, STORE_RELAXED, &own, err, errlen);
	if (rc != IH_OK)
		return rc;
	rc = st->ops->renew(st, job, owner, lease_ms, err, errlen);
	return join_end(own, rc, err, errlen);
}

int
store_attempt_lost(struct store *st, struct store_txn *tx,
    const struct store_job *job, int64_t now_ms, char *err, size_t errlen)
{
	struct store_txn *own = NULL;
	int rc;

	rc = join_begin(st, tx, STORE_RELAXED, &own, err, errlen);
	if (rc != IH_OK)
		return rc;
	rc = st->ops->attempt_lost(st, job, now_ms, err, errlen);
	return join_end(own, rc, err, errlen);
}

int
store_forget(struct store *st, struct store_txn *tx,
    const struct store_job *job, const char *owner, char *err,
    size_t errlen)
{
	struct store_txn *own = NULL;
	int rc;

	rc = join_begin(st, tx, STORE_RELAXED, &own, err, errlen);
	if (rc != IH_OK)
		return rc;
	rc = st->ops->forget(st, job, owner, err, errlen);
	return join_end(own, rc, err, errlen);
}

int
store_list(struct store *st, const struct store_filter *f, store_row_fn fn,
    void *arg, char *err, size_t errlen)
{
	return st->ops->list(st, f, fn, arg, err, errlen);
}

int
store_show(struct store *st, const char *provider, const char *event_id,
    store_row_fn fn, void *arg, char *err, size_t errlen)
{
	return st->ops->show(st, provider, NULL, event_id, fn, arg, err,
	    errlen);
}

int
store_show_account(struct store *st, const char *provider,
    const char *account, const char *event_id, store_row_fn fn, void *arg,
    char *err, size_t errlen)
{
	return st->ops->show(st, provider, account, event_id, fn, arg, err,
	    errlen);
}

int
store_attempts(struct store *st, int64_t rowid,
    int (*fn)(void *arg, const struct store_attempt *a), void *arg,
    char *err, size_t errlen)
{
	return st->ops->attempts(st, rowid, fn, arg, err, errlen);
}

int
store_purge(struct store *st, struct store_purge *p, char *err,
    size_t errlen)
{
	return st->ops->purge(st, p, err, errlen);
}

int
store_stats(struct store *st, const char *provider, int64_t since_ms,
    int64_t until_ms, int (*fn)(void *arg, const struct store_stats *s),
    void *arg, char *err, size_t errlen)
{
	return st->ops->stats(st, provider, since_ms, until_ms, fn, arg, err,
	    errlen);
}

int
store_audit(struct store *st,
    int (*fn)(void *arg, const struct store_audit *a), void *arg, char *err,
    size_t errlen)
{
	return st->ops->audit(st, fn, arg, err, errlen);
}

/* Says that the backend does not take this side of a copy. */
static int
no_copy(const struct store *st, const char *what, char *err, size_t errlen)
{
	snprintf(err, errlen, "a %s store cannot be %s by idemhook copy",
	    st->ops->name, what);
	return IH_EINVAL;
}

int
store_copy_count(struct store *st, int64_t *events, char *err,
    size_t errlen)
{
	*events = 0;
	if (st->ops->copy_count == NULL)
		return no_copy(st, "copied from", err, errlen);
	return st->ops->copy_count(st, events, err, errlen);
}

int
store_copy_read(struct store *st, int64_t after, long limit, store_row_fn fn,
    void *arg, char *err, size_t errlen)
{
	if (st->ops->copy_read == NULL)
		return no_copy(st, "copied from", err, errlen);
	return st->ops->copy_read(st, after, limit, fn, arg, err, errlen);
}

int
store_effects(struct store *st, int64_t rowid,
    int (*fn)(void *arg, const char *kind, int64_t created_at), void *arg,
    char *err, size_t errlen)
{
	if (st->ops->effects == NULL)
		return no_copy(st, "copied from", err, errlen);
	return st->ops->effects(st, rowid, fn, arg, err, errlen);
}

/* A copy's writes need their transaction. */
static int
copy_tx(struct store *st, struct store_txn *tx, int has_op, char *err,
    size_t errlen)
{
	if (!has_op)
		return no_copy(st, "copied into", err, errlen);
	if (tx == NULL || !tx->open || tx->st != st) {
		snprintf(err, errlen, "a copy writes inside a transaction");
		return IH_EINVAL;
	}
	return IH_OK;
}

int
store_copy_put(struct store *st, struct store_txn *tx,
    const struct store_row *row, int64_t *rowid, int *added, char *err,
    size_t errlen)
{
	int rc;

	*added = 0;
	*rowid = 0;
	rc = copy_tx(st, tx, st->ops->copy_put != NULL, err, errlen);
	if (rc != IH_OK)
		return rc;
	return st->ops->copy_put(st, row, rowid, added, err, errlen);
}

int
store_copy_attempt(struct store *st, struct store_txn *tx, int64_t rowid,
    const struct store_attempt *a, int *added, char *err, size_t errlen)
{
	int rc;

	*added = 0;
	rc = copy_tx(st, tx, st->ops->copy_attempt != NULL, err,
	    errlen);
	if (rc != IH_OK)
		return rc;
	return st->ops->copy_attempt(st, rowid, a, added, err, errlen);
}

int
store_copy_effect(struct store *st, struct store_txn *tx, int64_t rowid,
    const char *kind, int64_t created_at, int *added, char *err,
    size_t errlen)
{
	int rc;

	*added = 0;
	rc = copy_tx(st, tx, st->ops->copy_effect != NULL, err, errlen);
	if (rc != IH_OK)
		return rc;
	return st->ops->copy_effect(st, rowid, kind, created_at, added, err,
	    errlen);
}

int
store_copy_object(struct store *st, struct store_txn *tx,
    const struct store_object *o, int *added, char *err, size_t errlen)
{
	int rc;

	*added = 0;
	rc = copy_tx(st, tx, st->ops->copy_object != NULL, err, errlen);
	if (rc != IH_OK)
		return rc;
	return st->ops->copy_object(st, o, added, err, errlen);
}

int
store_copy_object_event(struct store *st, struct store_txn *tx,
    const struct store_object *o, const struct store_object_event *e,
    int *added, char *err, size_t errlen)
{
	int rc;

	*added = 0;
	rc = copy_tx(st, tx, st->ops->copy_object_event != NULL, err,
	    errlen);
	if (rc != IH_OK)
		return rc;
	return st->ops->copy_object_event(st, o, e, added, err, errlen);
}

int
store_object_apply(struct store *st, struct store_txn *tx,
    const struct store_object *o, int64_t now_ms, int *verdict, char *err,
    size_t errlen)
{
	*verdict = 0;
	if (tx == NULL || !tx->open || tx->st != st) {
		snprintf(err, errlen, "no transaction for the object");
		return IH_EINVAL;
	}
	if (o->provider == NULL || o->kind == NULL || o->object_id == NULL ||
	    o->event_id == NULL || o->status == NULL) {
		snprintf(err, errlen, "object lacks provider, kind, id or "
		    "event");
		return IH_EINVAL;
	}
	return st->ops->object_apply(st, o, now_ms, verdict, err, errlen);
}

int
store_objects(struct store *st, const struct store_object_filter *f,
    store_object_fn fn, void *arg, char *err, size_t errlen)
{
	return st->ops->objects(st, f, fn, arg, err, errlen);
}

int
store_object_history(struct store *st, const char *provider,
    const char *account, const char *kind, const char *object_id,
    int (*fn)(void *arg, const struct store_object_event *e), void *arg,
    char *err, size_t errlen)
{
	return st->ops->object_history(st, provider, account, kind,
	    object_id, fn, arg, err, errlen);
}
