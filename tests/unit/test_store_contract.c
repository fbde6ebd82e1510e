/*
 * test_store_contract.c -- the store's contract, run unchanged against
 * each backend: SQLite always (a file in a temporary folder), PostgreSQL
 * when IH_PG_URI names a server (tests/run.sh starts one; as root it must,
 * so a missing server is a failure there, never a silent skip).  Every
 * check goes through the store's own interface, never the database.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <libpq-fe.h>

#include "ih.h"
#include "store.h"
#include "store_console.h"
#define UNIT_STORE_NAME	"contract"
#include "store_fixture.h"
#include "store_kept.h"
#include "store_many.h"
#include "store_thin.h"
#include "store_unit.h"

struct seen {
	long		 n;
	char		 status[16];
	int64_t		 duplicates;
	int64_t		 payload_len;
	int		 has_payload;
	unsigned char	 payload[16];
};

static int
seen_row(void *arg, const struct store_row *row)
{
	struct seen *s = arg;

	s->n++;
	snprintf(s->status, sizeof(s->status), "%s", row->status);
	s->duplicates = row->duplicates;
	s->payload_len = row->payload_len;
	s->has_payload = row->has_payload;
	if (row->payload != NULL && row->payload_len <= 16)
		memcpy(s->payload, row->payload, (size_t)row->payload_len);
	return IH_OK;
}

/* How many events match (status NULL: all). */
static long
count(struct store *st, const char *status)
{
	struct store_filter f;
	struct seen s;
	char err[STORE_ERR_MAX];

	memset(&f, 0, sizeof(f));
	memset(&s, 0, sizeof(s));
	f.status = status;
	assert_int_equal(store_list(st, &f, seen_row, &s, err, sizeof(err)),
	    IH_OK);
	return s.n;
}

static struct seen
show(struct store *st, const char *id)
{
	struct seen s;
	char err[STORE_ERR_MAX];

	memset(&s, 0, sizeof(s));
	assert_int_equal(store_show(st, "stripe", id, seen_row, &s, err,
	    sizeof(err)), IH_OK);
	return s;
}

static void
record_and_duplicate(void **state)
{
	struct unit_store *f = *state;
	struct event ev = unit_event("evt_1");
	struct store_result r1;
	struct seen s;
	char err[STORE_ERR_MAX];

	unit_record_thrice(f->st, &ev);
	assert_int_equal(count(f->st, NULL), 1);
	s = show(f->st, "evt_1");
	assert_int_equal(s.duplicates, 2);
	/* The payload is kept byte for byte, NUL included. */
	assert_int_equal(s.payload_len, 10);
	assert_memory_equal(s.payload, "{\"a\":\"\0b\"}", 10);
	ev.event_type = NULL;
	assert_int_equal(store_record(f->st, NULL, &ev, 1000, &r1, err,
	    sizeof(err)), IH_EINVAL);
}

static void
rollback_leaves_nothing(void **state)
{
	struct unit_store *f = *state;
	struct event ev = unit_event("evt_rb");
	char err[STORE_ERR_MAX];

	unit_record_rolled_back(f->st, &ev);
	assert_int_equal(count(f->st, NULL), 0);
	/* Effects need a transaction. */
	assert_int_equal(store_effect(f->st, NULL, NULL, "x", 1, err,
	    sizeof(err)), IH_EINVAL);
}

static void
batch_reports_each(void **state)
{
	struct unit_store *f = *state;
	struct event evs[4];
	struct store_result res[4];
	int rcs[4];
	char err[STORE_ERR_MAX];

	evs[0] = unit_event("evt_b1");
	evs[1] = unit_event("evt_b2");
	evs[2] = unit_event("evt_b1");	/* a duplicate inside the batch */
	evs[3] = unit_event("evt_b3");
	evs[3].event_id = NULL;		/* invalid: skipped, reported */
	assert_int_equal(store_record_batch(f->st, NULL, evs, 4, 1000, res,
	    rcs, err, sizeof(err)), IH_OK);
	assert_int_equal(rcs[0], IH_OK);
	assert_int_equal(res[0].duplicate, 0);
	assert_int_equal(rcs[1], IH_OK);
	assert_int_equal(res[1].duplicate, 0);
	assert_int_equal(rcs[2], IH_OK);
	assert_int_equal(res[2].duplicate, 1);
	assert_int_equal(res[2].rowid, res[0].rowid);
	assert_int_equal(rcs[3], IH_EINVAL);
	assert_int_equal(count(f->st, NULL), 2);
}

/*
 * A write refused in a savepoint (a foreign key: no such event) is said
 * by the write or, where it was sent without waiting (PostgreSQL), by
 * STORE_SP_CHECK; undone to its savepoint, the rest commits.
 */
static void
savepoint_check_refused(void **state)
{
	struct unit_store *f = *state;
	struct event a = unit_event("evt_ck");
	struct store_job job;
	struct store_result r;
	struct store_txn *tx;
	char err[STORE_ERR_MAX];
	int rc;

	memset(&job, 0, sizeof(job));
	job.ev.rowid = 987654321;
	assert_int_equal(store_begin(f->st, STORE_DURABLE, &tx, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(store_record(f->st, tx, &a, 1000, &r, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(store_savepoint(tx, STORE_SP_OPEN, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(store_savepoint(tx, STORE_SP_CHECK, err,
	    sizeof(err)), IH_OK);
	rc = store_effect(f->st, tx, &job, "refused", 1000, err, sizeof(err));
	if (rc == IH_OK)
		rc = store_savepoint(tx, STORE_SP_CHECK, err, sizeof(err));
	assert_int_equal(rc, IH_ESTORE);
	assert_int_equal(store_savepoint(tx, STORE_SP_UNDO, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(store_commit(tx, err, sizeof(err)), IH_OK);
	assert_int_equal(count(f->st, NULL), 1);
}

/* A savepoint undone takes only its own changes; nested ones too. */
static void
savepoints_undo_alone(void **state)
{
	struct unit_store *f = *state;
	struct event a = unit_event("evt_sa"), b = unit_event("evt_sb");
	struct event c = unit_event("evt_sc"), d = unit_event("evt_sd");
	struct store_result r;
	struct store_txn *tx;
	char err[STORE_ERR_MAX];

	assert_int_equal(store_savepoint(NULL, STORE_SP_OPEN, err,
	    sizeof(err)), IH_EINVAL);
	assert_int_equal(store_begin(f->st, STORE_DURABLE, &tx, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(store_record(f->st, tx, &a, 1000, &r, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(store_savepoint(tx, STORE_SP_OPEN, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(store_record(f->st, tx, &b, 1000, &r, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(store_savepoint(tx, STORE_SP_UNDO, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(store_savepoint(tx, STORE_SP_OPEN, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(store_record(f->st, tx, &c, 1000, &r, err,
	    sizeof(err)), IH_OK);
	/* Nested: the inner one undone, the outer one kept. */
	assert_int_equal(store_savepoint(tx, STORE_SP_OPEN, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(store_record(f->st, tx, &d, 1000, &r, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(store_savepoint(tx, STORE_SP_UNDO, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(store_savepoint(tx, STORE_SP_KEEP, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(store_commit(tx, err, sizeof(err)), IH_OK);
	assert_int_equal(count(f->st, NULL), 2);
	assert_int_equal(store_record(f->st, NULL, &b, 2000, &r, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(r.duplicate, 0);
	assert_int_equal(store_record(f->st, NULL, &c, 2000, &r, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(r.duplicate, 1);
}

static void
claim_lease_and_takeover(void **state)
{
	struct unit_store *f = *state;
	struct event ev = unit_event("evt_c");
	struct store_result r;
	struct store_job a, b, c;
	char err[STORE_ERR_MAX];

	assert_int_equal(store_record(f->st, NULL, &ev, 1000, &r, err,
	    sizeof(err)), IH_OK);
	/*
	 * A lease of 2 s: SQLite runs it on the times given, PostgreSQL on
	 * the server's clock (issue 24), so the test waits it out for real.
	 */
	assert_int_equal(unit_claim(f->st, "stripe", 0, "A", 1000, 2000, &a),
	    1);
	assert_int_equal(a.ev.attempt, 1);
	assert_int_equal(a.ev.payload_len, 10);
	assert_memory_equal(a.ev.payload, "{\"a\":\"\0b\"}", 10);
	/* Held: nothing else is due before the lease ends. */
	assert_int_equal(unit_claim(f->st, NULL, 0, "B", 2000, 5000, &b), 0);
	usleep(2100 * 1000);
	/* Expired: B takes it over; A can neither complete nor fail it. */
	assert_int_equal(unit_claim(f->st, NULL, 0, "B", 7000, 5000, &b), 1);
	assert_int_equal(b.ev.attempt, 2);
	assert_int_equal(store_complete(f->st, NULL, &a, "A", 7100, err,
	    sizeof(err)), IH_ENOTFOUND);
	assert_int_equal(store_fail(f->st, NULL, &a, "A", "x", 9000, 0, 7100,
	    err, sizeof(err)), IH_ENOTFOUND);
	assert_int_equal(store_renew(f->st, NULL, &a, "A", 5000, err,
	    sizeof(err)), IH_ENOTFOUND);
	assert_int_equal(store_renew(f->st, NULL, &b, "B", 5000, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(store_fail(f->st, NULL, &b, "B", "boom", 8000, 0,
	    7200, err, sizeof(err)), IH_OK);
	assert_string_equal(show(f->st, "evt_c").status, "failed");
	/* Failed: due again at its time only. */
	assert_int_equal(unit_claim(f->st, NULL, 0, "C", 7500, 5000, &c), 0);
	assert_int_equal(unit_claim(f->st, NULL, 0, "C", 8000, 5000, &c), 1);
	assert_int_equal(store_complete(f->st, NULL, &c, "C", 8100, err,
	    sizeof(err)), IH_OK);
	assert_string_equal(show(f->st, "evt_c").status, "done");
	store_job_free(&a);
	store_job_free(&b);
	store_job_free(&c);
}

/*
 * Thin events (version 9): no claim takes one unless the store's fetch
 * mode allows it; the fetched payload replaces the notification's under
 * the lease, and the event is then an ordinary one.
 */
static void
thin_fetch_modes(void **state)
{
	static const char full[] = "{\"full\":1}";
	struct unit_store *f = *state;
	struct event thin = unit_event("evt_thin");
	struct event snap = unit_event("evt_snap");
	struct store_result r;
	struct store_job a, b;
	char err[STORE_ERR_MAX];
	int found, due;

	thin.needs_fetch = 1;
	assert_int_equal(store_record(f->st, NULL, &thin, 1000, &r, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(store_record(f->st, NULL, &snap, 1000, &r, err,
	    sizeof(err)), IH_OK);
	/* A store as opened (every receiver's) passes the thin one by. */
	assert_int_equal(store_claim(f->st, NULL, "stripe", 0, "A", 1000,
	    60000, &a, &found, err, sizeof(err)), IH_OK);
	assert_int_equal(found, 1);
	assert_string_equal(a.ev.event_id, "evt_snap");
	assert_int_equal(a.ev.needs_fetch, 0);
	assert_int_equal(store_complete(f->st, NULL, &a, "A", 1100, err,
	    sizeof(err)), IH_OK);
	store_job_free(&a);
	assert_int_equal(store_claim(f->st, NULL, NULL, 0, "A", 1200, 60000,
	    &a, &found, err, sizeof(err)), IH_OK);
	assert_int_equal(found, 0);
	assert_int_equal(store_due(f->st, NULL, 1200, &due, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(due, 0);
	store_set_fetch(f->st, STORE_FETCH_ONLY);
	assert_int_equal(store_due(f->st, "stripe", 1200, &due, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(due, 1);
	store_set_fetch(f->st, STORE_FETCH_ANY);
	assert_int_equal(store_claim(f->st, NULL, "stripe", 0, "A", 1300,
	    60000, &a, &found, err, sizeof(err)), IH_OK);
	assert_int_equal(found, 1);
	assert_string_equal(a.ev.event_id, "evt_thin");
	assert_int_equal(a.ev.needs_fetch, 1);
	/* Only the lease holder stores the fetched event, once. */
	assert_int_equal(store_fetched(f->st, &a, "B",
	    (const unsigned char *)full, sizeof(full) - 1, "", err,
	    sizeof(err)), IH_ENOTFOUND);
	assert_int_equal(store_fetched(f->st, &a, "A",
	    (const unsigned char *)full, sizeof(full) - 1,
	    "Idemhook-Source: api\n", err, sizeof(err)), IH_OK);
	assert_int_equal(store_fetched(f->st, &a, "A",
	    (const unsigned char *)full, sizeof(full) - 1, "", err,
	    sizeof(err)), IH_ENOTFOUND);
	assert_int_equal(store_fail(f->st, NULL, &a, "A", "x", 2000, 0, 1400,
	    err, sizeof(err)), IH_OK);
	/* Fetched: any store takes it now, with the full payload. */
	store_set_fetch(f->st, STORE_FETCH_NONE);
	assert_int_equal(store_claim(f->st, NULL, "stripe", 0, "C", 2000,
	    60000, &b, &found, err, sizeof(err)), IH_OK);
	assert_int_equal(found, 1);
	assert_int_equal(b.ev.needs_fetch, 0);
	assert_int_equal(b.ev.payload_len, sizeof(full) - 1);
	assert_memory_equal(b.ev.payload, full, sizeof(full) - 1);
	assert_int_equal(store_complete(f->st, NULL, &b, "C", 2100, err,
	    sizeof(err)), IH_OK);
	assert_string_equal(show(f->st, "evt_thin").status, "done");
	store_job_free(&a);
	store_job_free(&b);
}

/*
 * A payload over 1 MiB goes in and comes back in slices (SQLite's blob
 * I/O; PostgreSQL's large object and binary reads, pg_payload.c): the
 * same bytes, NULs and all, in a length that is no multiple of a slice.
 * A claim of the event its own transaction recorded, from bytes the
 * caller holds (store_claim_fresh()), reads none of it back.
 */
static void
large_payload_round_trip(void **state)
{
	struct unit_store *f = *state;
	struct event ev = unit_event("evt_large");
	struct event ev2 = unit_event("evt_large2");
	struct store_result r;
	struct store_job job;
	struct store_txn *tx;
	char err[STORE_ERR_MAX];
	unsigned char *big;
	size_t n = 3 * 1024 * 1024 + 17, i;
	int found;

	big = malloc(n);
	assert_non_null(big);
	for (i = 0; i < n; i++)
		big[i] = (unsigned char)(i * 7 + i / 4096);
	ev.payload = big;
	ev.payload_len = n;
	assert_int_equal(store_record(f->st, NULL, &ev, 1000, &r, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(r.duplicate, 0);
	assert_int_equal(store_claim(f->st, NULL, "stripe", r.rowid, "A",
	    1000, 60000, &job, &found, err, sizeof(err)), IH_OK);
	assert_int_equal(found, 1);
	assert_int_equal(job.ev.payload_len, n);
	assert_memory_equal(job.ev.payload, big, n);
	store_job_free(&job);
	ev2.payload = big;
	ev2.payload_len = n;
	assert_int_equal(store_begin(f->st, STORE_DURABLE, &tx, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(store_record(f->st, tx, &ev2, 1000, &r, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(store_claim_fresh(f->st, tx, "stripe", r.rowid, "A",
	    1000, 60000, &job, &found, err, sizeof(err)), IH_OK);
	assert_int_equal(found, 1);
	assert_null(job.ev.payload);
	assert_int_equal(store_commit(tx, err, sizeof(err)), IH_OK);
	assert_int_equal(store_fail(f->st, NULL, &job, "A", "x", 2000, 0,
	    1400, err, sizeof(err)), IH_OK);
	store_job_free(&job);
	/* Recorded whole all the same: a later claim reads it all. */
	assert_int_equal(store_claim(f->st, NULL, "stripe", r.rowid, "B",
	    2000, 60000, &job, &found, err, sizeof(err)), IH_OK);
	assert_int_equal(found, 1);
	assert_int_equal(job.ev.payload_len, n);
	assert_memory_equal(job.ev.payload, big, n);
	store_job_free(&job);
	free(big);
}

static void
complete_with_effects(void **state)
{
	struct unit_store *f = *state;
	struct event ev = unit_event("evt_e");
	struct store_result r;
	struct store_job job;
	struct store_txn *tx;
	char err[STORE_ERR_MAX];
	int due;

	assert_int_equal(store_begin(f->st, STORE_DURABLE, &tx, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(store_record_claim(f->st, tx, &ev, 1000, "me", 5000,
	    &r, &job, err, sizeof(err)), IH_OK);
	assert_int_equal(store_commit(tx, err, sizeof(err)), IH_OK);
	assert_int_equal(job.ev.attempt, 1);
	assert_string_equal(show(f->st, "evt_e").status, "processing");
	assert_int_equal(store_due(f->st, NULL, 2000, &due, err, sizeof(err)),
	    IH_OK);
	assert_int_equal(due, 0);
	assert_int_equal(store_begin(f->st, STORE_RELAXED, &tx, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(store_effect(f->st, tx, &job, "mail", 2000, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(store_effect(f->st, tx, &job, "mail", 2000, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(store_complete(f->st, tx, &job, "me", 2000, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(store_commit(tx, err, sizeof(err)), IH_OK);
	assert_string_equal(show(f->st, "evt_e").status, "done");
	store_job_free(&job);
	assert_int_equal(unit_claim(f->st, NULL, 0, "x", 9000, 5000, &job), 0);
}

/*
 * store_record_done(): an event whose switch runs in the transaction that
 * records it.  Completed there, it is done, attempt 1, due no more;
 * failed there (its effects undone in a savepoint), it is failed and due
 * again after its backoff, with no effect, as from processing; claimed
 * again after the commit, it completes as any claimed event.
 */
static void
record_done(void **state)
{
	struct unit_store *f = *state;
	struct event ev = unit_event("evt_rd1"), ev2 = unit_event("evt_rd2");
	struct store_result r;
	struct store_job job, job2;
	struct store_txn *tx;
	char err[STORE_ERR_MAX];
	int due;

	assert_int_equal(store_begin(f->st, STORE_DURABLE, &tx, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(store_record_done(f->st, tx, &ev, 1000, "me", 5000,
	    &r, &job, err, sizeof(err)), IH_OK);
	assert_int_equal(job.ev.attempt, 1);
	assert_int_equal(store_effect(f->st, tx, &job, "mail", 1000, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(store_complete(f->st, tx, &job, "me", 1000, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(store_record_done(f->st, tx, &ev2, 1000, "me", 5000,
	    &r, &job2, err, sizeof(err)), IH_OK);
	assert_int_equal(store_savepoint(tx, STORE_SP_OPEN, err, sizeof(err)),
	    IH_OK);
	assert_int_equal(store_effect(f->st, tx, &job2, "mail", 1000, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(store_savepoint(tx, STORE_SP_UNDO, err, sizeof(err)),
	    IH_OK);
	assert_int_equal(store_fail(f->st, tx, &job2, "me", "switch failed",
	    4000, 0, 1000, err, sizeof(err)), IH_OK);
	assert_int_equal(store_commit(tx, err, sizeof(err)), IH_OK);
	assert_string_equal(show(f->st, "evt_rd1").status, "done");
	assert_string_equal(show(f->st, "evt_rd2").status, "failed");
	assert_int_equal(store_due(f->st, NULL, 2000, &due, err, sizeof(err)),
	    IH_OK);
	assert_int_equal(due, 0);
	store_job_free(&job2);
	assert_int_equal(unit_claim(f->st, NULL, 0, "x", 5000, 5000, &job2),
	    1);
	assert_string_equal(job2.ev.event_id, "evt_rd2");
	assert_int_equal(job2.ev.attempt, 2);
	/*
	 * Claimed again on the same connection, outside a transaction: what
	 * the committed one inserted done no longer counts as done.
	 */
	assert_int_equal(store_complete(f->st, NULL, &job2, "x", 6000, err,
	    sizeof(err)), IH_OK);
	assert_string_equal(show(f->st, "evt_rd2").status, "done");
	store_job_free(&job);
	store_job_free(&job2);
}

/*
 * A write that fails inside a transaction fails it, whenever the backend
 * reports it: at once (SQLite), or with a later statement's answer at the
 * latest by COMMIT (PostgreSQL sends an effect without waiting for its
 * answer).  Nothing of the transaction is kept, and the store works on.
 */
static void
failed_write_fails_commit(void **state)
{
	struct unit_store *f = *state;
	struct event ev = unit_event("evt_f"), ev2 = unit_event("evt_g");
	struct store_result r;
	struct store_job job, bad;
	struct store_txn *tx;
	struct seen seen;
	char err[STORE_ERR_MAX];
	int rc;

	assert_int_equal(store_begin(f->st, STORE_DURABLE, &tx, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(store_record_claim(f->st, tx, &ev, 1000, "me", 5000,
	    &r, &job, err, sizeof(err)), IH_OK);
	/* No such event: the effect breaks its foreign key. */
	bad = job;
	bad.ev.rowid = job.ev.rowid + 100000;
	rc = store_effect(f->st, tx, &bad, "mail", 2000, err, sizeof(err));
	if (rc == IH_OK)
		rc = store_complete(f->st, tx, &job, "me", 2000, err,
		    sizeof(err));
	if (rc == IH_OK)
		rc = store_commit(tx, err, sizeof(err));
	else
		store_rollback(tx);
	assert_int_not_equal(rc, IH_OK);
	memset(&seen, 0, sizeof(seen));
	assert_int_equal(store_show(f->st, "stripe", "evt_f", seen_row, &seen,
	    err, sizeof(err)), IH_ENOTFOUND);
	assert_int_equal(seen.n, 0);
	store_job_free(&job);
	assert_int_equal(store_record(f->st, NULL, &ev2, 3000, &r, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(show(f->st, "evt_g").n, 1);
}

static void
order_key_waits(void **state)
{
	struct unit_store *f = *state;
	struct event e1 = unit_event("evt_o1"), e2 = unit_event("evt_o2");
	struct store_result r;
	struct store_job a, b;
	char err[STORE_ERR_MAX];
	int found;

	e1.order_key = "cus_1";
	e2.order_key = "cus_1";
	assert_int_equal(store_record(f->st, NULL, &e1, 1000, &r, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(store_record(f->st, NULL, &e2, 1001, &r, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(store_claim(f->st, NULL, NULL, 0, "A", 2000, 5000,
	    &a, &found, err, sizeof(err)), IH_OK);
	assert_string_equal(a.ev.event_id, "evt_o1");
	/* The second waits while the first is being processed. */
	assert_int_equal(unit_claim(f->st, NULL, 0, "B", 2000, 5000, &b), 0);
	assert_int_equal(store_complete(f->st, NULL, &a, "A", 2100, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(unit_claim(f->st, NULL, 0, "B", 2200, 5000, &b), 1);
	assert_string_equal(b.ev.event_id, "evt_o2");
	store_job_free(&a);
	store_job_free(&b);
}

static int
count_fn(void *arg, const struct store_row *row)
{
	(void)row;
	(*(long *)arg)++;
	return IH_OK;
}

static void
requeue_and_purge(void **state)
{
	struct unit_store *f = *state;
	struct event ev = unit_event("evt_r"), dead = unit_event("evt_dead");
	struct store_result r;
	struct store_filter flt;
	struct store_purge p;
	struct store_job job;
	struct seen s;
	char err[STORE_ERR_MAX];
	long n = 0, cnt;
	int found;

	assert_int_equal(store_record(f->st, NULL, &ev, 1000, &r, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(store_claim(f->st, NULL, NULL, 0, "A", 1000, 5000,
	    &job, &found, err, sizeof(err)), IH_OK);
	assert_int_equal(store_complete(f->st, NULL, &job, "A", 1100, err,
	    sizeof(err)), IH_OK);
	store_job_free(&job);
	assert_int_equal(store_record(f->st, NULL, &dead, 1000, &r, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(store_claim(f->st, NULL, NULL, 0, "A", 1200, 5000,
	    &job, &found, err, sizeof(err)), IH_OK);
	assert_int_equal(store_fail(f->st, NULL, &job, "A", "no", 1300, 1,
	    1300, err, sizeof(err)), IH_OK);
	store_job_free(&job);
	assert_string_equal(show(f->st, "evt_dead").status, "dead");

	/* Replay: a dry run changes nothing; then the done one is due. */
	memset(&flt, 0, sizeof(flt));
	flt.event_id = "evt_r";
	assert_int_equal(store_requeue(f->st, &flt, 1, 2000, count_fn, &n,
	    &cnt, err, sizeof(err)), IH_OK);
	assert_int_equal(cnt, 1);
	assert_string_equal(show(f->st, "evt_r").status, "done");
	assert_int_equal(store_requeue(f->st, &flt, 0, 2000, count_fn, &n,
	    &cnt, err, sizeof(err)), IH_OK);
	assert_int_equal(cnt, 1);
	assert_string_equal(show(f->st, "evt_r").status, "received");
	assert_int_equal(unit_claim(f->st, NULL, 0, "A", 2100, 5000, &job), 1);
	assert_int_equal(store_complete(f->st, NULL, &job, "A", 2200, err,
	    sizeof(err)), IH_OK);
	store_job_free(&job);

	/* Purge: the done payload goes, the dead letter stays whole. */
	memset(&p, 0, sizeof(p));
	p.provider = "stripe";
	p.payload_before_ms = 5000;
	p.batch = 1;
	assert_int_equal(store_purge(f->st, &p, err, sizeof(err)), IH_OK);
	assert_int_equal(p.payloads, 1);
	assert_int_equal(p.rows, 0);
	assert_int_equal(p.dead_kept, 1);
	s = show(f->st, "evt_r");
	assert_int_equal(s.has_payload, 0);
	s = show(f->st, "evt_dead");
	assert_int_equal(s.has_payload, 1);
	p.row_before_ms = 5000;
	p.include_dead = 1;
	/* One type only (idemhook smoke --purge): the others' rows stay. */
	p.event_type = "idemhook.smoke";
	assert_int_equal(store_purge(f->st, &p, err, sizeof(err)), IH_OK);
	assert_int_equal(p.rows, 0);
	assert_int_equal(count(f->st, NULL), 2);
	p.event_type = NULL;
	assert_int_equal(store_purge(f->st, &p, err, sizeof(err)), IH_OK);
	assert_int_equal(p.rows, 2);
	assert_int_equal(count(f->st, NULL), 0);
}

static int
stats_fn(void *arg, const struct store_stats *s)
{
	*(struct store_stats *)arg = *s;
	return IH_OK;
}

static void
stats_counts(void **state)
{
	struct unit_store *f = *state;
	struct event a = unit_event("evt_s1"), b = unit_event("evt_s2");
	struct store_result r;
	struct store_stats x;
	struct store_job job;
	char err[STORE_ERR_MAX];
	int found;

	assert_int_equal(store_record(f->st, NULL, &a, 1000, &r, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(store_record(f->st, NULL, &a, 1100, &r, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(store_record(f->st, NULL, &b, 1200, &r, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(store_claim(f->st, NULL, NULL, 0, "A", 1300, 5000,
	    &job, &found, err, sizeof(err)), IH_OK);
	assert_int_equal(store_complete(f->st, NULL, &job, "A", 1500, err,
	    sizeof(err)), IH_OK);
	store_job_free(&job);
	memset(&x, 0, sizeof(x));
	assert_int_equal(store_stats(f->st, NULL, 0, 10000, stats_fn, &x, err,
	    sizeof(err)), IH_OK);
	assert_string_equal(x.provider, "stripe");
	assert_int_equal(x.events, 2);
	assert_int_equal(x.duplicates, 1);
	assert_int_equal(x.done, 1);
	assert_int_equal(x.received, 1);
	assert_int_equal(x.pending, 1);
	assert_int_equal(x.latency_n, 1);
	assert_int_equal(x.p50_ms, 500);
	assert_int_equal(x.oldest_pending_ms, 1200);
}

static void
replay_of_fingerprint(void **state)
{
	struct unit_store *f = *state;
	struct event a = unit_event("evt_f1"), b = unit_event("evt_f2");
	struct store_result r;
	struct store_txn *tx;
	struct store_first first;
	char err[STORE_ERR_MAX];

	a.fingerprint = "aa11";
	b.fingerprint = "aa11";
	b.event_type = "charge.refunded";
	assert_int_equal(store_record(f->st, NULL, &a, 1000, &r, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(store_begin(f->st, STORE_DURABLE, &tx, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(unit_replay_of(f->st, tx, &b, NULL, &first), 1);
	assert_string_equal(first.event_id, "evt_f1");
	assert_string_equal(first.event_type, "invoice.paid");
	assert_int_equal(first.same_action, 0);
	/* Whether the first event's headers hold the shared line. */
	assert_int_equal(unit_replay_of(f->st, tx, &b,
	    "\nStripe-Signature: t=1,v1=00\n", &first), 1);
	assert_int_equal(first.same_action, 1);
	assert_int_equal(unit_replay_of(f->st, tx, &b,
	    "\nStripe-Signature: t=2,v1=00\n", &first), 1);
	assert_int_equal(first.same_action, 0);
	store_rollback(tx);
}

static int
audit_fn(void *arg, const struct store_audit *a)
{
	if (!a->ok)
		(*(int *)arg)++;
	return IH_OK;
}

static void
audit_passes(void **state)
{
	struct unit_store *f = *state;
	char err[STORE_ERR_MAX];
	int bad = 0;

	assert_int_equal(store_audit(f->st, audit_fn, &bad, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(bad, 0);
}

static int
object_fn(void *arg, const struct store_object *o)
{
	char *out = arg;

	snprintf(out, 256, "%s|%s|%s|%s|%lld|%d|%s|%d|%.*s", o->provider,
	    o->kind, o->object_id, o->status, (long long)o->source_ms,
	    o->rank, o->event_id, o->deleted, (int)o->json_len,
	    o->json != NULL ? o->json : "-");
	return IH_OK;
}

static int
history_fn(void *arg, const struct store_object_event *e)
{
	char *out = arg;
	size_t n = strlen(out);

	snprintf(out + n, 256 - n, "%s=%s;", e->event_id, e->verdict);
	return IH_OK;
}

/* Applies one event to sub_1 in a transaction of its own. */
static int
apply(struct unit_store *f, const char *event_id, const char *status,
    int64_t source_ms, int rank, int deleted)
{
	struct store_object o;
	struct store_txn *tx;
	char err[STORE_ERR_MAX];
	int verdict = 0;

	memset(&o, 0, sizeof(o));
	o.provider = "stripe";
	o.kind = "subscription";
	o.object_id = "sub_1";
	o.status = status;
	o.json = "{\"id\":\"sub_1\"}";
	o.json_len = strlen(o.json);
	o.source_ms = source_ms;
	o.rank = rank;
	o.event_id = event_id;
	o.event_type = "customer.subscription.updated";
	o.deleted = deleted;
	assert_int_equal(store_object_apply(f->st, NULL, &o, 5, &verdict, err,
	    sizeof(err)), IH_EINVAL);
	assert_int_equal(store_begin(f->st, STORE_DURABLE, &tx, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(store_object_apply(f->st, tx, &o, 5, &verdict, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(store_commit(tx, err, sizeof(err)), IH_OK);
	return verdict;
}

static void
objects_guard(void **state)
{
	struct unit_store *f = *state;
	struct store_object_filter of;
	char err[STORE_ERR_MAX], row[256], hist[256];
	struct store_txn *tx;
	struct store_object o;
	int verdict;

	/* Verdict numbers are object.h's: 1 applied, 2 stale, 3 tied. */
	assert_int_equal(apply(f, "evt_b", "active", 2000, 1, 0), 1);
	assert_int_equal(apply(f, "evt_a", "incomplete", 1000, 1, 0), 2);
	assert_int_equal(apply(f, "evt_c", "canceled", 2000, 5, 1), 1);
	assert_int_equal(apply(f, "evt_d", "active", 2000, 1, 0), 3);
	/* A second application of an event keeps its first verdict. */
	assert_int_equal(apply(f, "evt_a", "incomplete", 1000, 1, 0), 2);
	memset(&of, 0, sizeof(of));
	of.provider = "stripe";
	row[0] = '\0';
	assert_int_equal(store_objects(f->st, &of, object_fn, row, err,
	    sizeof(err)), IH_OK);
	assert_string_equal(row, "stripe|subscription|sub_1|canceled|2000|5|"
	    "evt_c|1|{\"id\":\"sub_1\"}");
	of.status = "active";
	row[0] = '\0';
	assert_int_equal(store_objects(f->st, &of, object_fn, row, err,
	    sizeof(err)), IH_OK);
	assert_string_equal(row, "");
	hist[0] = '\0';
	assert_int_equal(store_object_history(f->st, "stripe", NULL,
	    "subscription", "sub_1", history_fn, hist, err, sizeof(err)), IH_OK);
	assert_string_equal(hist, "evt_b=applied;evt_a=stale;evt_c=applied;"
	    "evt_d=tied;");
	/* Rolled back with its transaction, like every effect. */
	memset(&o, 0, sizeof(o));
	o.provider = "stripe";
	o.kind = "subscription";
	o.object_id = "sub_2";
	o.status = "";
	o.event_id = "evt_x";
	assert_int_equal(store_begin(f->st, STORE_DURABLE, &tx, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(store_object_apply(f->st, tx, &o, 5, &verdict, err,
	    sizeof(err)), IH_OK);
	store_rollback(tx);
	of.status = NULL;
	of.object_id = "sub_2";
	row[0] = '\0';
	assert_int_equal(store_objects(f->st, &of, object_fn, row, err,
	    sizeof(err)), IH_OK);
	assert_string_equal(row, "");
}

/* The console's counts, by provider then status. */
static int
console_count(void *arg, const char *provider, const char *status,
    int64_t n, int64_t last)
{
	char *out = arg;
	size_t used = strlen(out);

	snprintf(out + used, 256 - used, "%s/%s=%lld@%lld ", provider, status,
	    (long long)n, (long long)last);
	return IH_OK;
}

/* The console's reads, through the store's interface on each backend. */
static void
console_reads(void **state)
{
	struct unit_store *f = *state;
	struct store_console_query q;
	struct store_result r;
	struct event ev = unit_event("evt_k1");
	struct store_job job;
	struct seen s;
	char err[STORE_ERR_MAX], counts[256] = "";
	int64_t next, last;

	assert_int_equal(store_record(f->st, NULL, &ev, 1000, &r, err,
	    sizeof(err)), IH_OK);
	ev = unit_event("evt_k2");
	assert_int_equal(store_record(f->st, NULL, &ev, 2000, &r, err,
	    sizeof(err)), IH_OK);
	ev = unit_event("evt_k3");
	ev.provider = "github";
	assert_int_equal(store_record(f->st, NULL, &ev, 3000, &r, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(unit_claim(f->st, "stripe", 0, "A", 4000, 5000, &job),
	    1);
	assert_int_equal(store_complete(f->st, NULL, &job, "A", 4500, err,
	    sizeof(err)), IH_OK);
	store_job_free(&job);
	assert_int_equal(store_console_counts(f->st, console_count, counts,
	    err, sizeof(err)), IH_OK);
	assert_string_equal(counts, "github/received=1@3000 "
	    "stripe/done=1@1000 stripe/received=1@2000 ");
	/* Newest first, two a page; the second page is the last. */
	memset(&q, 0, sizeof(q));
	q.page = 2;
	memset(&s, 0, sizeof(s));
	assert_int_equal(store_console_list(f->st, &q, seen_row, &s, &next,
	    err, sizeof(err)), IH_OK);
	assert_int_equal(s.n, 2);
	assert_string_equal(s.status, "received");
	assert_true(next > 0);
	q.before_id = next;
	memset(&s, 0, sizeof(s));
	assert_int_equal(store_console_list(f->st, &q, seen_row, &s, &next,
	    err, sizeof(err)), IH_OK);
	assert_int_equal(s.n, 1);
	assert_string_equal(s.status, "done");
	assert_int_equal(s.payload_len, 10);
	assert_int_equal(next, 0);
	assert_int_equal(store_console_last_received(f->st, "stripe", &last,
	    err, sizeof(err)), IH_OK);
	assert_int_equal(last, 2000);
	assert_int_equal(store_console_last_received(f->st, "shopify", &last,
	    err, sizeof(err)), IH_OK);
	assert_int_equal(last, 0);
}

/*
 * Several records with one wait for their answers (PostgreSQL; SQLite
 * runs them one after the other): new events claimed in their inserts with attempt 1,
 * one left unclaimed, a duplicate inside the batch; done of a claimed
 * one (deferred on PostgreSQL) completes it; and a done whose event is
 * gone fails, at the latest at the commit.
 */
static void
many_at_once(void **state)
{
	struct unit_store *f = *state;
	struct event evs[3];
	const struct event *pe[3];
	const char *owners[3] = { "me", NULL, "me" };
	struct store_result res[3];
	struct store_job jobs[3], *pj[3];
	struct store_txn *tx;
	char err[STORE_ERR_MAX];
	int i, rc;

	evs[0] = unit_event("evt_m1");
	evs[1] = unit_event("evt_m2");
	evs[2] = unit_event("evt_m1");
	for (i = 0; i < 3; i++) {
		pe[i] = &evs[i];
		pj[i] = &jobs[i];
	}
	assert_int_equal(store_begin_many(f->st, STORE_DURABLE, &tx, err,
	    sizeof(err)), IH_OK);
	if (!store_record_many_ok(f->st)) {
		assert_int_equal(store_record_claim_many(f->st, tx, pe, 3, 1000,
		    owners, 30000, res, pj, err, sizeof(err)), IH_EINVAL);
		store_rollback(tx);
		assert_int_equal(count(f->st, NULL), 0);
		return;
	}
	assert_int_equal(store_record_claim_many(f->st, tx, pe, 3, 1000,
	    owners, 30000, res, pj, err, sizeof(err)), IH_OK);
	assert_int_equal(res[0].duplicate, 0);
	assert_true(jobs[0].ev.rowid == res[0].rowid);
	assert_int_equal(jobs[0].seq, 1);
	assert_int_equal(res[1].duplicate, 0);
	assert_true(jobs[1].ev.rowid == 0);
	assert_int_equal(res[2].duplicate, 1);
	assert_true(res[2].rowid == res[0].rowid);
	assert_true(jobs[2].ev.rowid == 0);
	assert_int_equal(store_complete(f->st, tx, &jobs[0], "me", 2000, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(store_commit(tx, err, sizeof(err)), IH_OK);
	assert_int_equal(count(f->st, "done"), 1);
	assert_int_equal(count(f->st, "received"), 1);
	for (i = 0; i < 3; i++)
		store_job_free(&jobs[i]);
	/* Claimed in this transaction, then gone: its done cannot hold. */
	evs[0] = unit_event("evt_m3");
	assert_int_equal(store_begin_many(f->st, STORE_DURABLE, &tx, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(store_record_claim_many(f->st, tx, pe, 1, 1000,
	    owners, 30000, res, pj, err, sizeof(err)), IH_OK);
	assert_int_equal(store_forget(f->st, tx, &jobs[0], "me", err,
	    sizeof(err)), IH_OK);
	rc = store_complete(f->st, tx, &jobs[0], "me", 2000, err,
	    sizeof(err));
	if (rc == IH_OK)
		rc = store_commit(tx, err, sizeof(err));
	else
		store_rollback(tx);
	assert_int_not_equal(rc, IH_OK);
	assert_non_null(strstr(err, "was lost"));
	store_job_free(&jobs[0]);
	assert_int_equal(count(f->st, NULL), 2);
}

/*
 * A batch of events inserted done together (store_record_done_many(),
 * both backends): each has its first attempt; each is completed, or
 * failed by its switch, without a lease said lost, as store_record_done()
 * one at a time would have it.
 */
static void
many_done(void **state)
{
	struct unit_store *f = *state;
	struct event evs[3];
	const struct event *pe[3];
	const char *owners[3] = { "me", "me", "me" };
	const int done[3] = { 1, 1, 1 };
	struct store_result res[3];
	struct store_job jobs[3], *pj[3];
	struct store_txn *tx;
	char err[STORE_ERR_MAX];
	int i;

	evs[0] = unit_event("evt_md1");
	evs[1] = unit_event("evt_md2");
	evs[2] = unit_event("evt_md3");
	for (i = 0; i < 3; i++) {
		pe[i] = &evs[i];
		pj[i] = &jobs[i];
	}
	assert_int_equal(store_begin_many(f->st, STORE_DURABLE, &tx, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(store_record_done_many(f->st, tx, pe, 3, 1000,
	    owners, done, 30000, res, pj, err, sizeof(err)), IH_OK);
	for (i = 0; i < 3; i++) {
		assert_int_equal(res[i].duplicate, 0);
		assert_true(jobs[i].ev.rowid == res[i].rowid);
		assert_int_equal(jobs[i].seq, 1);
	}
	assert_int_equal(store_complete(f->st, tx, &jobs[0], "me", 2000, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(store_fail(f->st, tx, &jobs[1], "me",
	    "switch failed", 4000, 0, 2000, err, sizeof(err)), IH_OK);
	assert_int_equal(store_complete(f->st, tx, &jobs[2], "me", 2000, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(store_commit(tx, err, sizeof(err)), IH_OK);
	assert_string_equal(show(f->st, "evt_md1").status, "done");
	assert_string_equal(show(f->st, "evt_md2").status, "failed");
	assert_string_equal(show(f->st, "evt_md3").status, "done");
	for (i = 0; i < 3; i++)
		store_job_free(&jobs[i]);
}

/* The kept headers alone, as recorded; "" for none; no such row. */
static void
kept_headers_alone(void **state)
{
	struct unit_store *f = *state;
	struct event ev = unit_event("evt_kept");
	struct event bare = unit_event("evt_bare");
	struct store_result r;
	char err[STORE_ERR_MAX], *h = NULL;

	ev.headers = "Stripe-Signature: t=1,v1=ab\nX-A: b\n";
	assert_int_equal(store_record(f->st, NULL, &ev, 1000, &r, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(store_kept_headers(f->st, r.rowid, &h, err,
	    sizeof(err)), IH_OK);
	assert_string_equal(h, ev.headers);
	free(h);
	bare.headers = NULL;
	assert_int_equal(store_record(f->st, NULL, &bare, 1000, &r, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(store_kept_headers(f->st, r.rowid, &h, err,
	    sizeof(err)), IH_OK);
	assert_string_equal(h, "");
	free(h);
	assert_int_equal(store_kept_headers(f->st, r.rowid + 1000, &h, err,
	    sizeof(err)), IH_ENOTFOUND);
	assert_null(h);
}

#define CASES(setup) \
	UNIT_STORE_CASE(record_and_duplicate, setup), \
	UNIT_STORE_CASE(rollback_leaves_nothing, setup), \
	UNIT_STORE_CASE(batch_reports_each, setup), \
	UNIT_STORE_CASE(many_at_once, setup), \
	UNIT_STORE_CASE(many_done, setup), \
	UNIT_STORE_CASE(savepoints_undo_alone, setup), \
	UNIT_STORE_CASE(savepoint_check_refused, setup), \
	UNIT_STORE_CASE(claim_lease_and_takeover, setup), \
	UNIT_STORE_CASE(thin_fetch_modes, setup), \
	UNIT_STORE_CASE(large_payload_round_trip, setup), \
	UNIT_STORE_CASE(complete_with_effects, setup), \
	UNIT_STORE_CASE(record_done, setup), \
	UNIT_STORE_CASE(failed_write_fails_commit, setup), \
	UNIT_STORE_CASE(order_key_waits, setup), \
	UNIT_STORE_CASE(requeue_and_purge, setup), \
	UNIT_STORE_CASE(stats_counts, setup), \
	UNIT_STORE_CASE(replay_of_fingerprint, setup), \
	UNIT_STORE_CASE(audit_passes, setup), \
	UNIT_STORE_CASE(objects_guard, setup), \
	UNIT_STORE_CASE(console_reads, setup), \
	UNIT_STORE_CASE(kept_headers_alone, setup)

UNIT_STORE_MAIN("store contract")
