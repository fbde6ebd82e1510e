/*
 * test_console.c -- the console's pieces: HTML escaping, password hashes,
 * the credential cache, CSRF tokens, and the store's console queries
 * (paging, filters, counts, series, and that each one uses an index).
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

#include "clock.h"
#include "console_auth.h"
#include "html.h"
#include "ih.h"
#include "store.h"
#include "store_console.h"

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

/* ---- store ---------------------------------------------------------- */

struct fixture {
	char		 dir[64];
	char		 path[128];
	struct store	*st;
};

static int
setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct store_opts o = { NULL, 1, 200 };
	char err[STORE_ERR_MAX];

	snprintf(f->dir, sizeof(f->dir), "/tmp/ih-console-XXXXXX");
	if (mkdtemp(f->dir) == NULL)
		return -1;
	snprintf(f->path, sizeof(f->path), "%s/events.db", f->dir);
	o.path = f->path;
	if (store_open(&o, &f->st, err, sizeof(err)) != IH_OK)
		return -1;
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fixture *f = *state;
	char cmd[128];

	store_close(f->st);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
	if (system(cmd) != 0)
		return -1;
	free(f);
	return 0;
}

static void
record(struct store *st, const char *provider, const char *id,
    const char *type, int64_t at)
{
	struct store_event ev;
	struct store_result res;
	char err[STORE_ERR_MAX];

	memset(&ev, 0, sizeof(ev));
	ev.provider = provider;
	ev.event_id = id;
	ev.event_type = type;
	ev.payload = "{}";
	ev.payload_len = 2;
	ev.headers = "";
	assert_int_equal(store_record(st, NULL, &ev, at, &res, err, sizeof(err)),
	    IH_OK);
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

static void
fill(struct store *st, int64_t now, int n)
{
	char id[32];
	int i;

	for (i = 0; i < n; i++) {
		snprintf(id, sizeof(id), "evt_%05d", i);
		record(st, i % 10 == 0 ? "github" : "stripe", id, i % 3 == 0 ?
		    "invoice.paid" : "charge.succeeded", now - (int64_t)(n - i) *
		    1000);
	}
}

static void
test_list_pages(void **state)
{
	struct fixture *f = *state;
	struct store_console_query q;
	struct seen s;
	char err[STORE_ERR_MAX];
	int64_t now = clock_wall_ms(), next;

	fill(f->st, now, 4500);
	memset(&q, 0, sizeof(q));
	q.page = 50;
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

struct counts {
	int64_t	 stripe_received, github_received, last;
};

static int
count_fn(void *arg, const char *provider, const char *status, int64_t n,
    int64_t last)
{
	struct counts *c = arg;

	assert_string_equal(status, "received");
	if (strcmp(provider, "stripe") == 0)
		c->stripe_received = n;
	else
		c->github_received = n;
	if (last > c->last)
		c->last = last;
	return IH_OK;
}

static void
test_counts_series(void **state)
{
	struct fixture *f = *state;
	struct store_console_series s;
	struct counts c;
	char err[STORE_ERR_MAX];
	int64_t now = clock_wall_ms(), size;

	fill(f->st, now, 100);
	record(f->st, "stripe", "old", "x", now - 48LL * 3600 * 1000);
	memset(&c, 0, sizeof(c));
	assert_int_equal(store_console_counts(f->st, count_fn, &c, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(c.stripe_received, 91);
	assert_int_equal(c.github_received, 10);
	assert_int_equal(c.last, now - 1000);
	assert_int_equal(store_console_series(f->st, now, &s, err,
	    sizeof(err)), IH_OK);
	/* The 48-hour-old event is outside the 24 hours. */
	assert_int_equal(s.accepted, 100);
	assert_int_equal(s.latency_n, 0);
	assert_int_equal(s.p50_ms, -1);
	assert_int_equal(store_console_size(f->st, &size, err, sizeof(err)),
	    IH_OK);
	assert_true(size > 0);
}

/* Every console read goes through an index or the row id. */
static void
test_plans(void **state)
{
	struct fixture *f = *state;
	char plan[4096], err[STORE_ERR_MAX];
	const char *line;

	assert_int_equal(store_console_explain(f->st, plan, sizeof(plan), err,
	    sizeof(err)), IH_OK);
	assert_non_null(strstr(plan, "counts: SCAN events USING COVERING INDEX "
	    "events_provider_status"));
	assert_non_null(strstr(plan, "hours: SEARCH events USING INDEX "
	    "events_received"));
	assert_non_null(strstr(plan, "latency: SEARCH events USING INDEX "
	    "events_received"));
	assert_non_null(strstr(plan, "list: SEARCH events USING INTEGER "
	    "PRIMARY KEY (rowid>? AND rowid<?)"));
	/* No step reads the whole table row by row. */
	for (line = plan; (line = strstr(line, "SCAN events")) != NULL; line++)
		assert_memory_equal(line, "SCAN events USING COVERING INDEX", 32);
}

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
		cmocka_unit_test_setup_teardown(test_list_pages, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_counts_series, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_plans, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
