/*
 * test_console.c -- the console's pieces: HTML escaping, password hashes,
 * the credential cache, CSRF tokens, and the store's console queries
 * (paging, filters, counts, series, and that each one uses an index) on
 * each backend: SQLite always, PostgreSQL when IH_PG_URI names a server
 * (tests/run.sh starts one; as root it must, as in test_store_contract),
 * where the type patterns must also match what SQLite's GLOB matches.
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

#include "clock.h"
#include "console_auth.h"
#include "html.h"
#include "ih.h"
#include "store.h"
#include "store_console.h"
#define UNIT_STORE_NAME	"console"
#define UNIT_STORE_DURABLE	STORE_RELAXED
#include "store_fixture.h"

static void
esc_is(const char *in, size_t len, const char *want)
{
	struct html h;

	html_init(&h, 4096);
	html_esc_n(&h, in, len);
	assert_false(html_full(&h));
	assert_string_equal(h.p != NULL ? h.p : "", want);
	html_free(&h);
}

static void
test_escape(void **state)
{
	(void)state;
	esc_is("</pre><script>alert(1)</script>", 31,
	    "&lt;/pre&gt;&lt;script&gt;alert(1)&lt;/script&gt;");
	esc_is("a\"b'c&d", 7, "a&quot;b&#39;c&amp;d");
	esc_is("tab\tnl\n", 7, "tab\tnl\n");
	/* NUL, a control byte, a stray continuation byte, an overlong '<'. */
	esc_is("a\0b\x1b" "c\x80" "d\xc0\xbc", 9,
	    "a\xef\xbf\xbd" "b\xef\xbf\xbd" "c\xef\xbf\xbd" "d\xef\xbf\xbd"
	    "\xef\xbf\xbd");
	esc_is("\xc3\xa9t\xc3\xa9 \xe2\x82\xac", 9, "\xc3\xa9t\xc3\xa9 "
	    "\xe2\x82\xac");
}

static void
test_url_and_bound(void **state)
{
	struct html h;

	(void)state;
	html_init(&h, 16);
	html_url(&h, "a/b c%");
	assert_string_equal(h.p, "a%2Fb%20c%25");
	html_raw(&h, "0123456789");
	assert_true(html_full(&h));
	assert_string_equal(h.p, "a%2Fb%20c%25");
	html_free(&h);
}

static void
test_password(void **state)
{
	char hash[CONSOLE_HASH_MAX], bad[CONSOLE_HASH_MAX];

	(void)state;
	assert_int_equal(console_hash_password("s3cret pw", 9, 10, hash,
	    sizeof(hash)), IH_OK);
	assert_memory_equal(hash, "$scrypt$ln=10,r=8,p=1$", 22);
	assert_null(strstr(hash, "s3cret"));
	assert_int_equal(console_verify_password(hash, "s3cret pw", 9), IH_OK);
	assert_int_equal(console_verify_password(hash, "s3cret pX", 9),
	    IH_EAUTH);
	assert_int_equal(console_verify_password(hash, "s3cret p", 8),
	    IH_EAUTH);
	assert_int_equal(console_hash_password("", 0, 10, hash, sizeof(hash)),
	    IH_EINVAL);
	/* Malformed, or asking for more work than allowed. */
	assert_int_equal(console_verify_password("plain", "x", 1), IH_ECONFIG);
	snprintf(bad, sizeof(bad), "$scrypt$ln=30,r=8,p=1$%s",
	    strchr(hash + 9, '$') + 1);
	assert_int_equal(console_verify_password(bad, "s3cret pw", 9),
	    IH_ECONFIG);
	snprintf(bad, sizeof(bad), "%.*s", (int)strlen(hash) - 4, hash);
	assert_int_equal(console_verify_password(bad, "s3cret pw", 9),
	    IH_ECONFIG);
}

static void
test_cache(void **state)
{
	struct console_cache c;

	(void)state;
	memset(&c, 0, sizeof(c));
	assert_false(console_cache_hit(&c, "u", "pw", 2, "H", 1000));
	console_cache_put(&c, "u", "pw", 2, "H", 1000);
	assert_true(console_cache_hit(&c, "u", "pw", 2, "H", 1000 + 10));
	assert_false(console_cache_hit(&c, "u", "pX", 2, "H", 1010));
	assert_false(console_cache_hit(&c, "v", "pw", 2, "H", 1010));
	/* A changed hash (new password set) forgets the old credential. */
	assert_false(console_cache_hit(&c, "u", "pw", 2, "H2", 1010));
	assert_false(console_cache_hit(&c, "u", "pw", 2, "H",
	    1000 + CONSOLE_CACHE_SECONDS));
	console_cache_clear(&c);
	assert_false(console_cache_hit(&c, "u", "pw", 2, "H", 1010));
}

static void
test_basic(void **state)
{
	char u[64], pw[64];
	size_t len;

	(void)state;
	/* "admin:pa:ss" */
	assert_int_equal(console_basic_parse("Basic YWRtaW46cGE6c3M=", u,
	    sizeof(u), pw, sizeof(pw), &len), IH_OK);
	assert_string_equal(u, "admin");
	assert_string_equal(pw, "pa:ss");
	assert_int_equal(len, 5);
	assert_int_equal(console_basic_parse("Bearer x", u, sizeof(u), pw,
	    sizeof(pw), &len), IH_EINVAL);
	assert_int_equal(console_basic_parse("Basic !!!!", u, sizeof(u), pw,
	    sizeof(pw), &len), IH_EINVAL);
	/* "nocolon" */
	assert_int_equal(console_basic_parse("Basic bm9jb2xvbg==", u,
	    sizeof(u), pw, sizeof(pw), &len), IH_EINVAL);
}

static void
test_csrf(void **state)
{
	unsigned char key[CONSOLE_KEY_LEN], other[CONSOLE_KEY_LEN];
	char t[CONSOLE_TOKEN_LEN + 1];
	time_t now = 1700000000;

	(void)state;
	console_key_derive("hash-a", 6, key);
	console_key_derive("hash-b", 6, other);
	console_csrf_token(key, "admin", now, t);
	assert_int_equal(strlen(t), CONSOLE_TOKEN_LEN);
	assert_true(console_csrf_ok(key, "admin", t, now));
	assert_true(console_csrf_ok(key, "admin", t, now + 86400));
	assert_false(console_csrf_ok(key, "admin", t, now + 2 * 86400));
	assert_false(console_csrf_ok(key, "bob", t, now));
	assert_false(console_csrf_ok(other, "admin", t, now));
	assert_false(console_csrf_ok(key, "admin", "", now));
	t[5] = t[5] == 'a' ? 'b' : 'a';
	assert_false(console_csrf_ok(key, "admin", t, now));
}

/* ---- store ----------------------------------------------------------- */

static void
record_tx(struct store *st, struct store_txn *tx, const char *provider,
    const char *id, const char *type, int64_t at)
{
	struct event ev;
	struct store_result res;
	char err[STORE_ERR_MAX];

	memset(&ev, 0, sizeof(ev));
	ev.provider = provider;
	ev.event_id = id;
	ev.event_type = type;
	ev.payload = (const unsigned char *)"{}";
	ev.payload_len = 2;
	ev.headers = "";
	assert_int_equal(store_record(st, tx, &ev, at, &res, err,
	    sizeof(err)), IH_OK);
}

static void
record(struct store *st, const char *provider, const char *id,
    const char *type, int64_t at)
{
	record_tx(st, NULL, provider, id, type, at);
}

struct seen {
	long	 n;
	int64_t	 last;
	char	 first[64];
};

static int
seen_row(void *arg, const struct store_row *r)
{
	struct seen *s = arg;

	if (s->n == 0)
		snprintf(s->first, sizeof(s->first), "%s", r->event_id);
	/* Newest first: row ids only go down. */
	assert_true(s->n == 0 || r->rowid < s->last);
	s->last = r->rowid;
	s->n++;
	return IH_OK;
}

/* n events in one transaction (one commit, not n). */
static void
fill(struct store *st, int64_t now, int n)
{
	struct store_txn *tx;
	char id[32], err[STORE_ERR_MAX];
	int i;

	assert_int_equal(store_begin(st, STORE_RELAXED, &tx, err,
	    sizeof(err)), IH_OK);
	for (i = 0; i < n; i++) {
		snprintf(id, sizeof(id), "evt_%05d", i);
		record_tx(st, tx, i % 10 == 0 ? "github" : "stripe", id,
		    i % 3 == 0 ? "invoice.paid" : "charge.succeeded",
		    now - (int64_t)(n - i) * 1000);
	}
	assert_int_equal(store_commit(tx, err, sizeof(err)), IH_OK);
}

static void
test_list_pages(void **state)
{
	struct unit_store *f = *state;
	struct store_console_query q;
	struct seen s;
	char err[STORE_ERR_MAX];
	int64_t now = clock_wall_ms(), next;

	/* An empty store: no rows, nothing older. */
	memset(&q, 0, sizeof(q));
	q.page = 50;
	memset(&s, 0, sizeof(s));
	assert_int_equal(store_console_list(f->st, &q, seen_row, &s, &next, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(s.n, 0);
	assert_int_equal(next, 0);

	fill(f->st, now, 4500);
	memset(&s, 0, sizeof(s));
	assert_int_equal(store_console_list(f->st, &q, seen_row, &s, &next, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(s.n, 50);
	assert_string_equal(s.first, "evt_04499");
	assert_int_equal(next, s.last);
	q.before_id = next;
	memset(&s, 0, sizeof(s));
	assert_int_equal(store_console_list(f->st, &q, seen_row, &s, &next, err,
	    sizeof(err)), IH_OK);
	assert_string_equal(s.first, "evt_04449");

	/* Filters: provider, glob on the type, search text. */
	memset(&q, 0, sizeof(q));
	q.page = 200;
	q.provider = "github";
	q.type_glob = "invoice.*";
	memset(&s, 0, sizeof(s));
	assert_int_equal(store_console_list(f->st, &q, seen_row, &s, &next, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(s.n, 150);	/* i % 30 == 0 */
	assert_int_equal(next, 0);
	q.provider = NULL;
	q.type_glob = NULL;
	q.text = "evt_0012";
	memset(&s, 0, sizeof(s));
	assert_int_equal(store_console_list(f->st, &q, seen_row, &s, &next, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(s.n, 10);
	/* Dates: the last 10 seconds hold the last 10 events. */
	q.text = NULL;
	q.since_ms = now - 10 * 1000;
	q.until_ms = now;
	memset(&s, 0, sizeof(s));
	assert_int_equal(store_console_list(f->st, &q, seen_row, &s, &next, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(s.n, 10);
	q.since_ms = q.until_ms = 0;

	/* A filter nothing matches stops at the scan bound, not the end. */
	q.text = "nothing-like-this";
	memset(&s, 0, sizeof(s));
	assert_int_equal(store_console_list(f->st, &q, seen_row, &s, &next, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(s.n, 0);
	assert_int_equal(next, 0);	/* 4500 rows: under the bound */
	q.page = 0;
	assert_int_equal(store_console_list(f->st, &q, seen_row, &s, &next, err,
	    sizeof(err)), IH_EINVAL);
}

/* Past STORE_CONSOLE_SCAN_MAX rows a fruitless search stops, resumable. */
static void
test_scan_bound(void **state)
{
	struct unit_store *f = *state;
	struct store_console_query q;
	struct seen s;
	char err[STORE_ERR_MAX];
	int64_t next;

	fill(f->st, clock_wall_ms(), STORE_CONSOLE_SCAN_MAX + 500);
	memset(&q, 0, sizeof(q));
	q.page = 50;
	q.text = "nothing-like-this";
	memset(&s, 0, sizeof(s));
	assert_int_equal(store_console_list(f->st, &q, seen_row, &s, &next, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(s.n, 0);
	assert_true(next > 0);
	q.text = "evt_00001";
	q.before_id = next;
	memset(&s, 0, sizeof(s));
	assert_int_equal(store_console_list(f->st, &q, seen_row, &s, &next, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(s.n, 1);
	assert_int_equal(next, 0);
}

struct counts {
	int64_t	 stripe_received, github_received, stripe_done, last;
	int	 rows;
};

static int
count_fn(void *arg, const char *provider, const char *status, int64_t n,
    int64_t last)
{
	struct counts *c = arg;

	/* By provider, then status. */
	if (c->rows++ == 0)
		assert_string_equal(provider, "github");
	if (strcmp(provider, "stripe") == 0 && strcmp(status, "done") == 0)
		c->stripe_done = n;
	else if (strcmp(provider, "stripe") == 0) {
		assert_string_equal(status, "received");
		c->stripe_received = n;
	} else {
		assert_string_equal(status, "received");
		c->github_received = n;
	}
	if (last > c->last)
		c->last = last;
	return IH_OK;
}

/* Claims and completes the oldest due event, done after ms. */
static void
process(struct store *st, int64_t at, int64_t ms)
{
	struct store_job job;
	char err[STORE_ERR_MAX];
	int found;

	assert_int_equal(store_claim(st, NULL, "stripe", 0, "t", at, 60000,
	    &job, &found, err, sizeof(err)), IH_OK);
	assert_int_equal(found, 1);
	assert_int_equal(store_complete(st, NULL, &job, "t",
	    job.ev.received_at + ms, err, sizeof(err)), IH_OK);
	store_job_free(&job);
}

static void
test_counts_series(void **state)
{
	struct unit_store *f = *state;
	struct store_console_series s;
	struct counts c;
	char err[STORE_ERR_MAX];
	int64_t now = clock_wall_ms(), size, last;

	assert_int_equal(store_console_last_received(f->st, "stripe", &last,
	    err, sizeof(err)), IH_OK);
	assert_int_equal(last, 0);
	record(f->st, "stripe", "old", "x", now - 48LL * 3600 * 1000);
	/* Done, but received before the 24 hours: no answer time. */
	process(f->st, now, 100);
	fill(f->st, now, 100);
	memset(&c, 0, sizeof(c));
	assert_int_equal(store_console_counts(f->st, count_fn, &c, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(c.stripe_received, 90);
	assert_int_equal(c.stripe_done, 1);
	assert_int_equal(c.github_received, 10);
	assert_int_equal(c.last, now - 1000);
	assert_int_equal(store_console_series(f->st, now, &s, err,
	    sizeof(err)), IH_OK);
	/* The 48-hour-old event is outside the 24 hours. */
	assert_int_equal(s.accepted, 100);
	assert_int_equal(s.failed, 0);
	assert_int_equal(s.latency_n, 0);
	assert_int_equal(s.p50_ms, -1);
	assert_int_equal(s.hour[STORE_CONSOLE_HOURS - 1].start_ms,
	    now / 3600000 * 3600000);
	assert_int_equal(store_console_last_received(f->st, "stripe", &last,
	    err, sizeof(err)), IH_OK);
	assert_int_equal(last, now - 1000);
	assert_int_equal(store_console_size(f->st, &size, err, sizeof(err)),
	    IH_OK);
	assert_true(size > 0);
}

/* Answer times of events done within the 24 hours. */
static void
test_latency(void **state)
{
	struct unit_store *f = *state;
	struct store_console_series s;
	char id[32], err[STORE_ERR_MAX];
	int64_t now = clock_wall_ms();
	int i;

	for (i = 1; i <= 4; i++) {
		snprintf(id, sizeof(id), "evt_l%d", i);
		record(f->st, "stripe", id, "x", now - 60000);
		process(f->st, now, 100 * i);
	}
	assert_int_equal(store_console_series(f->st, now, &s, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(s.accepted, 4);
	assert_int_equal(s.latency_n, 4);
	assert_int_equal(s.p50_ms, 200);
	assert_int_equal(s.p99_ms, 400);
}

/* Every console read goes through an index or the row id (SQLite). */
static void
test_plans_sqlite(void **state)
{
	struct unit_store *f = *state;
	char plan[8192], err[STORE_ERR_MAX];
	const char *line;

	assert_int_equal(store_console_explain(f->st, plan, sizeof(plan), err,
	    sizeof(err)), IH_OK);
	assert_non_null(strstr(plan, "counts: SCAN events USING COVERING INDEX "
	    "events_provider_status"));
	/*
	 * The hourly series: a search of events_provider_status per
	 * (provider, status) pair (schema version 16 has no index on
	 * received_at alone).
	 */
	assert_non_null(strstr(plan, "hours: SEARCH e USING INDEX "
	    "events_provider_status (provider=? AND status=? AND "
	    "received_at>? AND received_at<?)"));
	assert_non_null(strstr(plan, "latency: SEARCH e USING INDEX "
	    "events_provider_status (provider=? AND status=? AND "
	    "received_at>? AND received_at<?)"));
	/* The row ids' bounds: a row at each end, not a scan. */
	assert_non_null(strstr(plan, "bounds: SEARCH events"));
	assert_null(strstr(plan, "bounds: SCAN events"));
	assert_non_null(strstr(plan, "list: SEARCH events USING INTEGER "
	    "PRIMARY KEY (rowid>? AND rowid<?)"));
	/* No step reads the whole table row by row. */
	for (line = plan; (line = strstr(line, "SCAN events")) != NULL; line++)
		assert_memory_equal(line, "SCAN events USING COVERING INDEX", 32);
}

/* The plan lines of one statement hold want. */
static void
plan_has(const char *plan, const char *name, const char *want)
{
	char key[32], line[512];
	const char *p, *eol;
	size_t n = (size_t)snprintf(key, sizeof(key), "%s: ", name);

	for (p = plan; (p = strstr(p, key)) != NULL; p = eol) {
		eol = strchr(p, '\n');
		if (eol == NULL)
			eol = p + strlen(p);
		if (p != plan && p[-1] != '\n')
			continue;
		snprintf(line, sizeof(line), "%.*s", (int)(eol - p - (long)n),
		    p + n);
		if (strstr(line, want) != NULL)
			return;
	}
	fail_msg("no %s in the plan of %s:\n%s", want, name, plan);
}

/* The same on PostgreSQL, with sequential scans priced out. */
static void
test_plans_pg(void **state)
{
	struct unit_store *f = *state;
	char plan[8192], err[STORE_ERR_MAX];

	assert_int_equal(store_console_explain(f->st, plan, sizeof(plan), err,
	    sizeof(err)), IH_OK);
	plan_has(plan, "counts", "events_provider_status");
	plan_has(plan, "hours", "events_received");
	plan_has(plan, "latency", "events_received");
	plan_has(plan, "bounds", "events_pkey");
	plan_has(plan, "list", "Index Scan Backward using events_pkey");
	plan_has(plan, "last", "events_provider_status");
	/* No step reads the whole table row by row. */
	assert_null(strstr(plan, "Seq Scan"));
}

/* The event types the pattern cases look through. */
static const char *const TYPES[] = {
	"invoice.paid", "invoice.payment_failed", "charge.succeeded",
	"Invoice.Paid", "a*b", "a?b", "a[b]", "a\\b", "a.b", "axb", "a-b",
	"a]b", "a^b", "a$b", "a(b)", "a{2}", "a|b", "a+b", "ab", "",
	"caf\xc3\xa9", "caf\xc3\xa8", "push", "pull_request", "x\ny",
};

/* Patterns whose matches must agree with SQLite's GLOB. */
static const char *const GLOBS[] = {
	"invoice.*", "*.paid", "invoice.pa?d", "*", "?", "a*b", "a?b",
	"a[*]b", "a[?]b", "a[[]b]", "a[]]b", "a[^]]b", "a[\\]b", "a\\b",
	"a.b", "a[.x]b", "a[a-c]b", "a[^a-c]b", "a[-]b", "a[x-]b",
	"a[z-a]b", "a[-a]b", "a[!-/]b", "a[*-.]b", "a^b", "a$b", "a(b)",
	"a{2}", "a|b", "a+b", "a[", "a[b", "[", "]", "a]b", "[a-c-e]*",
	"caf?", "caf[\xc3\xa0-\xc3\xa9]", "caf[^\xc3\xa9]", "Invoice.*",
	"*[Pp]aid", "x?y", "x*", "[^a-z]*", "p[a-z]*", "a[b]", "a[[]b",
	"\xff*", "caf\xc3",
};

#define NTYPES	(sizeof(TYPES) / sizeof(TYPES[0]))

struct matched {
	char	 ids[NTYPES + 1];	/* 'y' per TYPES index matched */
};

static int
matched_row(void *arg, const struct store_row *r)
{
	struct matched *m = arg;
	long i = strtol(r->event_id + 1, NULL, 10);

	assert_true(i >= 0 && (size_t)i < NTYPES);
	m->ids[i] = 'y';
	return IH_OK;
}

static void
matches(struct store *st, const char *glob, const char *text,
    struct matched *m)
{
	struct store_console_query q;
	char err[STORE_ERR_MAX];
	int64_t next;

	memset(m->ids, '.', NTYPES);
	m->ids[NTYPES] = '\0';
	memset(&q, 0, sizeof(q));
	q.page = STORE_CONSOLE_PAGE_MAX;
	q.type_glob = glob;
	q.text = text;
	assert_int_equal(store_console_list(st, &q, matched_row, m, &next, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(next, 0);
}

/* Both backends, the same events: the same matches for every filter. */
static void
test_glob_same(void **state)
{
	struct unit_store *pg = *state, lite;
	struct matched a, b;
	char id[16];
	size_t i;

	memset(&lite, 0, sizeof(lite));
	assert_int_equal(unit_store_sqlite(&lite, "console", STORE_RELAXED),
	    0);
	for (i = 0; i < NTYPES; i++) {
		snprintf(id, sizeof(id), "e%zu", i);
		record(lite.st, "stripe", id, TYPES[i], 1000 + (int64_t)i);
		record(pg->st, "stripe", id, TYPES[i], 1000 + (int64_t)i);
	}
	for (i = 0; i < sizeof(GLOBS) / sizeof(GLOBS[0]); i++) {
		matches(lite.st, GLOBS[i], NULL, &a);
		matches(pg->st, GLOBS[i], NULL, &b);
		if (strcmp(a.ids, b.ids) != 0)
			fail_msg("GLOB '%s': sqlite %s, postgresql %s",
			    GLOBS[i], a.ids, b.ids);
	}
	/* The search text: a case-sensitive part of the id or type. */
	for (i = 0; i < 4; i++) {
		static const char *const texts[] = { "nvoice", "Inv", "e1",
		    "caf\xc3" };

		matches(lite.st, NULL, texts[i], &a);
		matches(pg->st, NULL, texts[i], &b);
		if (strcmp(a.ids, b.ids) != 0)
			fail_msg("text '%s': sqlite %s, postgresql %s",
			    texts[i], a.ids, b.ids);
	}
	unit_store_drop(&lite);
}

#define STORE_CASES(setup) \
	UNIT_STORE_CASE(test_list_pages, setup), \
	UNIT_STORE_CASE(test_scan_bound, setup), \
	UNIT_STORE_CASE(test_counts_series, setup), \
	UNIT_STORE_CASE(test_latency, setup)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escape),
		cmocka_unit_test(test_url_and_bound),
		cmocka_unit_test(test_password),
		cmocka_unit_test(test_cache),
		cmocka_unit_test(test_basic),
		cmocka_unit_test(test_csrf),
		STORE_CASES(setup_sqlite),
		UNIT_STORE_CASE(test_plans_sqlite, setup_sqlite),
	};
	const struct CMUnitTest pg[] = {
		STORE_CASES(setup_pg),
		UNIT_STORE_CASE(test_plans_pg, setup_pg),
		UNIT_STORE_CASE(test_glob_same, setup_pg),
	};
	int failed;

	failed = cmocka_run_group_tests_name("console: sqlite", tests, NULL,
	    NULL);
	failed += UNIT_RUN_PG("console: postgresql", pg);
	return failed != 0;
}
