/*
 * test_allow.c -- the source-address allow-list: IPv4 and IPv6 ranges,
 * prefixes at and off byte boundaries, IPv4-mapped clients, and the
 * malformed lists refused whole.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "allow.h"
#include "ih.h"

static int
allowed(const char *list, const char *addr)
{
	char err[128];
	int ok = -1;

	assert_int_equal(allow_check(list, addr, &ok, err, sizeof(err)),
	    IH_OK);
	return ok;
}

static void
test_matches(void **state)
{
	static const struct {
		const char	*list, *addr;
		int		 want;
	} t[] = {
		{ "127.0.0.1", "127.0.0.1", 1 },
		{ "127.0.0.1", "127.0.0.2", 0 },
		{ "127.0.0.0/8", "127.255.1.2", 1 },
		{ "127.0.0.0/8", "128.0.0.1", 0 },
		/* GitHub's hook ranges, as its meta API lists them. */
		{ "192.30.252.0/22, 185.199.108.0/22, 140.82.112.0/20",
		    "140.82.127.255", 1 },
		{ "192.30.252.0/22, 185.199.108.0/22, 140.82.112.0/20",
		    "140.82.128.0", 0 },
		{ "192.30.252.0/22 185.199.108.0/22", "192.30.255.1", 1 },
		{ "10.0.0.0/31", "10.0.0.1", 1 },
		{ "10.0.0.0/31", "10.0.0.2", 0 },
		{ "0.0.0.0/0", "203.0.113.9", 1 },
		{ "2a0a:a440::/29", "2a0a:a447:ffff::1", 1 },
		{ "2a0a:a440::/29", "2a0a:a448::1", 0 },
		{ "::1", "::1", 1 },
		{ "::/0", "2001:db8::1", 1 },
		/* An IPv4-mapped client matches IPv4 entries. */
		{ "192.0.2.0/24", "::ffff:192.0.2.7", 1 },
		{ "192.0.2.0/24", "::ffff:192.0.3.7", 0 },
		/* An absent or unparsable client never matches. */
		{ "0.0.0.0/0", NULL, 0 },
		{ "0.0.0.0/0", "", 0 },
		{ "0.0.0.0/0", "localhost", 0 },
		{ "0.0.0.0/0", "::1", 0 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		if (allowed(t[i].list, t[i].addr) != t[i].want)
			fail_msg("%s in %s: expected %d", t[i].addr ?
			    t[i].addr : "(null)", t[i].list, t[i].want);
	}
}

static void
test_malformed(void **state)
{
	static const char *const bad[] = {
		"", " , ", "127.0.0.1/33", "::1/129", "127.0.0.1/", "1.2.3",
		"127.0.0.1/-1", "127.0.0.1/8x", "example.com", "10.0.0.0/8;",
		"10.0.0.0/8, nonsense",
		"1111:2222:3333:4444:5555:6666:7777:8888:9999:0000/64xxxxxxxxxxx"
		    "xxxxxxxxxxxxxxxxx",
	};
	char err[128];
	size_t i;
	int ok;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		ok = 1;
		if (allow_check(bad[i], "127.0.0.1", &ok, err, sizeof(err)) !=
		    IH_ECONFIG)
			fail_msg("\"%s\" accepted as an allow-list", bad[i]);
		assert_int_equal(ok, 0);
		assert_true(err[0] != '\0');
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_matches),
		cmocka_unit_test(test_malformed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
