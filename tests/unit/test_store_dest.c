/*
 * test_store_dest.c -- the forwarding destinations' shared state
 * (store_dest.h) on each backend: SQLite always, PostgreSQL when
 * IH_PG_URI names a server.  The claim's search holds back what a
 * destination's concurrency, pause or rate says; the pause and the
 * resumption each happen for one caller only; a process whose limits
 * replace another's logs it, once a minute at most (forward_sync()).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "clock.h"
#include "config.h"
#include "forward.h"
#include "ih.h"
#include "log.h"
#include "store.h"
#include "store_dest.h"
#define UNIT_STORE_NAME	"dest"
#include "store_fixture.h"
#include "store_unit.h"

/*
 * The provider's destination with its limits, as a claim would write,
 * pausing after two failures.
 */
static void
limits(struct store *st, long concurrency, int64_t rate_ms)
{
	struct store_dest d = { "default", 0, 0, 2 };
	struct store_txn *tx = NULL;
	char err[STORE_ERR_MAX];

	d.concurrency = concurrency;
	d.rate_ms = rate_ms;
	assert_int_equal(store_begin(st, STORE_RELAXED, &tx, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(store_dest_sync(st, tx, "stripe", &d, 1, 1, NULL, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(store_commit(tx, err, sizeof(err)), IH_OK);
}

static int64_t
record(struct store *st, const char *id, int64_t now)
{
	struct event ev = unit_event(id);
	struct store_result r;
	char err[STORE_ERR_MAX];

	assert_int_equal(store_record(st, NULL, &ev, now, &r, err,
	    sizeof(err)), IH_OK);
	return r.rowid;
}

/* At most concurrency in flight; a slot frees when its event ends. */
static void
concurrency_held(void **state)
{
	struct unit_store *f = *state;
	struct store_job a, b;
	char err[STORE_ERR_MAX];

	limits(f->st, 1, 0);
	record(f->st, "evt_c1", 1000);
	record(f->st, "evt_c2", 1001);
	assert_int_equal(unit_claim(f->st, NULL, 0, "A", 2000, 60000, &a), 1);
	assert_int_equal(unit_claim(f->st, NULL, 0, "B", 2000, 60000, &b), 0);
	assert_int_equal(store_complete(f->st, NULL, &a, "A", 2100, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(unit_claim(f->st, NULL, 0, "B", 2200, 60000, &b), 1);
	assert_string_equal(b.ev.event_id, "evt_c2");
	store_job_free(&a);
	store_job_free(&b);
}

/*
 * Two failures pause it once; then only the probe, alone, when due; a
 * 2xx resumes it once.
 */
static void
pause_and_probe(void **state)
{
	struct unit_store *f = *state;
	struct store_dest_state ds;
	struct store_job a, b, c;
	char err[STORE_ERR_MAX];
	int64_t now = clock_wall_ms();
	long n;
	int paused, resumed;

	limits(f->st, 4, 0);
	record(f->st, "evt_p1", now);
	record(f->st, "evt_p2", now + 1);
	record(f->st, "evt_p3", now + 2);
	assert_int_equal(unit_claim(f->st, NULL, 0, "A", now, 60000, &a), 1);
	assert_int_equal(unit_claim(f->st, NULL, 0, "B", now, 60000, &b), 1);
	assert_int_equal(store_dest_failed(f->st, "stripe", "default",
	    a.ev.rowid, now, &n, &paused, err, sizeof(err)), IH_OK);
	assert_int_equal(n, 1);
	assert_int_equal(paused, 0);
	assert_int_equal(store_dest_failed(f->st, "stripe", "default",
	    b.ev.rowid, now, &n, &paused, err, sizeof(err)), IH_OK);
	assert_int_equal(paused, 1);
	/* A third failure (another process's) pauses nothing again. */
	assert_int_equal(store_dest_failed(f->st, "stripe", "default",
	    a.ev.rowid, now, &n, &paused, err, sizeof(err)), IH_OK);
	assert_int_equal(paused, 0);
	assert_int_equal(n, 3);
	assert_int_equal(store_fail(f->st, NULL, &a, "A", "500", now + 10,
	    0, now, err, sizeof(err)), IH_OK);
	assert_int_equal(store_fail(f->st, NULL, &b, "B", "500", now + 20000,
	    0, now, err, sizeof(err)), IH_OK);
	/* evt_p1's retry and evt_p3 are due, but only the probe may go. */
	assert_int_equal(unit_claim(f->st, NULL, 0, "C", now + 100, 60000,
	    &c), 0);
	assert_int_equal(store_dest_state(f->st, "stripe", NULL, now + 100,
	    &ds, err, sizeof(err)), IH_OK);
	assert_int_equal(ds.found, 1);
	assert_int_equal(ds.paused, 1);
	assert_string_equal(ds.probe_id, "evt_p2");
	assert_string_equal(store_dest_why(&ds, a.ev.rowid, now + 100),
	    "paused");
	assert_null(store_dest_why(&ds, b.ev.rowid, now + 100));
	assert_int_equal(unit_claim(f->st, NULL, 0, "C", now + 20000, 60000,
	    &c), 1);
	assert_string_equal(c.ev.event_id, "evt_p2");
	/* The probe in flight: nothing else, not even at the limit of 4. */
	store_job_free(&a);
	assert_int_equal(unit_claim(f->st, NULL, 0, "D", now + 20000, 60000,
	    &a), 0);
	assert_int_equal(store_dest_ok(f->st, "stripe", "default", &resumed,
	    &n, err, sizeof(err)), IH_OK);
	assert_int_equal(resumed, 1);
	assert_int_equal(n, 3);
	assert_int_equal(store_dest_ok(f->st, "stripe", "default", &resumed,
	    &n, err, sizeof(err)), IH_OK);
	assert_int_equal(resumed, 0);
	assert_int_equal(unit_claim(f->st, NULL, 0, "D", now + 20000, 60000,
	    &a), 1);
	assert_string_equal(a.ev.event_id, "evt_p1");
	store_job_free(&a);
	store_job_free(&b);
	store_job_free(&c);
}

/* A claim paced at 1000 ms: the next waits for its time. */
static void
rate_spaces(void **state)
{
	struct unit_store *f = *state;
	struct store_txn *tx = NULL;
	struct store_job a, b;
	char err[STORE_ERR_MAX];
	int found;

	limits(f->st, 4, 1000);
	record(f->st, "evt_r1", 1000);
	record(f->st, "evt_r2", 1001);
	assert_int_equal(store_begin(f->st, STORE_RELAXED, &tx, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(store_claim(f->st, tx, NULL, 0, "A", 5000, 60000, &a,
	    &found, err, sizeof(err)), IH_OK);
	assert_int_equal(found, 1);
	assert_int_equal(store_dest_claimed(f->st, tx, "stripe", "default",
	    5000, err, sizeof(err)), IH_OK);
	assert_int_equal(store_commit(tx, err, sizeof(err)), IH_OK);
	assert_int_equal(unit_claim(f->st, NULL, 0, "B", 5999, 60000, &b), 0);
	assert_int_equal(unit_claim(f->st, NULL, 0, "B", 6000, 60000, &b), 1);
	store_job_free(&a);
	store_job_free(&b);
}

/* A provider no longer forwarded: its rows go, nothing is held. */
static void
prune_frees(void **state)
{
	struct unit_store *f = *state;
	struct store_dest_state ds;
	struct store_txn *tx = NULL;
	struct store_job a;
	char err[STORE_ERR_MAX];

	limits(f->st, 1, 0);
	record(f->st, "evt_x1", 1000);
	record(f->st, "evt_x2", 1001);
	assert_int_equal(unit_claim(f->st, NULL, 0, "A", 2000, 60000, &a), 1);
	store_job_free(&a);
	assert_int_equal(store_begin(f->st, STORE_RELAXED, &tx, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(store_dest_sync(f->st, tx, "stripe", NULL, 0, 1, NULL,
	    err, sizeof(err)), IH_OK);
	assert_int_equal(store_commit(tx, err, sizeof(err)), IH_OK);
	assert_int_equal(store_dest_state(f->st, "stripe", NULL, 2000, &ds,
	    err, sizeof(err)), IH_OK);
	assert_int_equal(ds.found, 0);
	assert_int_equal(unit_claim(f->st, NULL, 0, "B", 2000, 60000, &a), 1);
	store_job_free(&a);
}

/* What forward_sync() logged, line after line. */
struct said {
	char	text[4096];
	size_t	len;
};

static void
said_write(void *arg, const char *line, size_t len)
{
	struct said *s = arg;

	if (s->len + len < sizeof(s->text)) {
		memcpy(s->text + s->len, line, len);
		s->len += len;
		s->text[s->len] = '\0';
	}
}

/* Syncs stripe's destination with concurrency as process fp would. */
static void
sync_as(struct store *st, struct forward_pause *fp, struct said *s,
    long concurrency)
{
	struct log_sink sink = { said_write, NULL };
	char url[] = "http://127.0.0.1:9/";
	struct store_txn *tx = NULL;
	struct config cfg;
	char err[STORE_ERR_MAX];

	sink.arg = s;
	memset(s, 0, sizeof(*s));
	memset(&cfg, 0, sizeof(cfg));
	cfg.forward.dest.url = url;
	cfg.forward.dest.concurrency = concurrency;
	assert_int_equal(store_begin(st, STORE_RELAXED, &tx, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(forward_sync(st, tx, &cfg, "stripe", fp, &sink, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(store_commit(tx, err, sizeof(err)), IH_OK);
}

/*
 * Two processes with other IDEMHOOK_STRIPE_FORWARD_CONCURRENCY: the one
 * that replaces the other's logs the setting, old -> new, once a minute;
 * the same settings log nothing.
 */
static void
limits_said(void **state)
{
	struct unit_store *f = *state;
	struct forward_pause a, b;
	struct said s;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	sync_as(f->st, &a, &s, 4);
	assert_int_equal(s.len, 0);
	sync_as(f->st, &b, &s, 4);
	assert_int_equal(s.len, 0);
	sync_as(f->st, &b, &s, 2);
	assert_non_null(strstr(s.text, "provider=stripe forward=limits-"
	    "replaced destination=default: IDEMHOOK_STRIPE_FORWARD_CONCURRENCY"
	    " 4 -> 2: another process runs, or ran, with other settings"));
	assert_null(strstr(s.text, "_RATE"));
	sync_as(f->st, &a, &s, 4);
	assert_non_null(strstr(s.text, "CONCURRENCY 2 -> 4"));
	/* Within the minute: written, not said again. */
	sync_as(f->st, &b, &s, 2);
	assert_int_equal(s.len, 0);
	sync_as(f->st, &b, &s, 2);
	assert_int_equal(s.len, 0);
}

#define CASES(setup) \
	UNIT_STORE_CASE(concurrency_held, setup), \
	UNIT_STORE_CASE(pause_and_probe, setup), \
	UNIT_STORE_CASE(rate_spaces, setup), \
	UNIT_STORE_CASE(prune_frees, setup), \
	UNIT_STORE_CASE(limits_said, setup)

UNIT_STORE_MAIN("store dest")
