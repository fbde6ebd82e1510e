/*
 * store_unit.h -- what the store's unit tests share (test_store.c and
 * test_store_contract.c): the Stripe event they record, whose payload
 * holds a NUL byte so that a store keeping text instead of bytes fails;
 * and their question to store_replay_of().  Include after <cmocka.h>.
 */
#ifndef IH_STORE_UNIT_H
#define IH_STORE_UNIT_H

#include <string.h>

#include "ih.h"
#include "store.h"

/* A Stripe invoice.paid event with id id; payload and headers static. */
static inline struct event
unit_event(const char *id)
{
	struct event ev;

	memset(&ev, 0, sizeof(ev));
	ev.provider = "stripe";
	ev.event_id = id;
	ev.event_type = "invoice.paid";
	ev.payload = (const unsigned char *)"{\"a\":\"\0b\"}";
	ev.payload_len = 10;
	ev.headers = "Stripe-Signature: t=1,v1=00\n";
	return ev;
}

/*
 * Records ev at 1000, 2000 and 3000: received the first time, then
 * duplicates of the same row, the last one counting 2.
 */
static inline void
unit_record_thrice(struct store *st, const struct event *ev)
{
	struct store_result r1, r2, r3;
	char err[STORE_ERR_MAX];

	assert_int_equal(store_record(st, NULL, ev, 1000, &r1, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(r1.duplicate, 0);
	assert_string_equal(r1.status, "received");
	assert_int_equal(store_record(st, NULL, ev, 2000, &r2, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(r2.duplicate, 1);
	assert_int_equal(r2.rowid, r1.rowid);
	assert_int_equal(store_record(st, NULL, ev, 3000, &r3, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(r3.duplicates, 2);
}

/*
 * store_claim() outside a transaction, which must answer IH_OK: for
 * provider (NULL: any), row rowid (0: the next due one), by owner at
 * now_ms with a lease of lease_ms.  Returns found (job filled when 1).
 */
static inline int
unit_claim(struct store *st, const char *provider, int64_t rowid,
    const char *owner, int64_t now_ms, int64_t lease_ms,
    struct store_job *job)
{
	char err[STORE_ERR_MAX];
	int found = -1;

	assert_int_equal(store_claim(st, NULL, provider, rowid, owner, now_ms,
	    lease_ms, job, &found, err, sizeof(err)), IH_OK);
	return found;
}

/* Records ev in a transaction, then rolls it back. */
static inline void
unit_record_rolled_back(struct store *st, const struct event *ev)
{
	struct store_txn *tx = NULL;
	struct store_result r;
	char err[STORE_ERR_MAX];

	assert_int_equal(store_begin(st, STORE_DURABLE, &tx, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(store_record(st, tx, ev, 1000, &r, err,
	    sizeof(err)), IH_OK);
	store_rollback(tx);
}

/*
 * store_replay_of() for probe, with the shared header's line (or NULL),
 * which must answer IH_OK; returns found (first filled when 1).
 */
static inline int
unit_replay_of(struct store *st, struct store_txn *tx,
    const struct event *probe, const char *line, struct store_first *first)
{
	char err[STORE_ERR_MAX];
	int found = -1;

	assert_int_equal(store_replay_of(st, tx, probe, line, &found, first,
	    err, sizeof(err)), IH_OK);
	return found;
}

#endif
