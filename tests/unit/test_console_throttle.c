/*
 * test_console_throttle.c -- the console's sign-in budgets on each
 * backend (store_signin.h, console_throttle.h): a charge is refused once
 * the window is spent and counts again once it has passed; a clean
 * client passes a spent name; IPv6 clients are budgeted by their /64;
 * which requests may carry a password (console_transport_ok()).  SQLite
 * always; PostgreSQL when IH_PG_URI names a server (as root it must).
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

#include "console_auth.h"
#include "console_throttle.h"
#include "ih.h"
#include "store.h"
#define UNIT_STORE_NAME	"throttle"
#include "store_fixture.h"
#include "store_signin.h"

#define T0	1700000000000LL
#define CLIENT_MS	(CONSOLE_CLIENT_WINDOW_S * 1000LL)
#define USER_MS		(CONSOLE_USER_WINDOW_S * 1000LL)

/* Charges, refusal when spent, a window past, refund and forget. */
static void
charge_window(void **state)
{
	struct unit_store *f = *state;
	struct store_signin b;
	char err[STORE_ERR_MAX];
	int i;

	for (i = 1; i <= 3; i++) {
		assert_int_equal(store_signin_charge(f->st, "k", T0 + i, 1000,
		    3, &b, err, sizeof(err)), IH_OK);
		assert_int_equal(b.charged, 1);
		assert_int_equal(b.failures, i);
		assert_int_equal(b.window_ms, T0 + 1);
	}
	assert_int_equal(store_signin_charge(f->st, "k", T0 + 500, 1000, 3,
	    &b, err, sizeof(err)), IH_OK);
	assert_int_equal(b.charged, 0);
	assert_int_equal(b.failures, 3);
	assert_int_equal(b.window_ms, T0 + 1);
	/* Another key is its own budget. */
	assert_int_equal(store_signin_charge(f->st, "other", T0 + 500, 1000,
	    3, &b, err, sizeof(err)), IH_OK);
	assert_int_equal(b.charged, 1);
	/* A refund gives one attempt back. */
	assert_int_equal(store_signin_refund(f->st, "k", 0, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(store_signin_charge(f->st, "k", T0 + 600, 1000, 3,
	    &b, err, sizeof(err)), IH_OK);
	assert_int_equal(b.charged, 1);
	assert_int_equal(b.failures, 3);
	/* The window past: counting begins again. */
	assert_int_equal(store_signin_charge(f->st, "k", T0 + 1001, 1000, 3,
	    &b, err, sizeof(err)), IH_OK);
	assert_int_equal(b.charged, 1);
	assert_int_equal(b.failures, 1);
	assert_int_equal(b.window_ms, T0 + 1001);
	/* Forgotten: a fresh budget. */
	assert_int_equal(store_signin_refund(f->st, "k", 1, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(store_signin_charge(f->st, "k", T0 + 1002, 1000, 3,
	    &b, err, sizeof(err)), IH_OK);
	assert_int_equal(b.failures, 1);
	assert_int_equal(b.window_ms, T0 + 1002);
	/* Pruning drops the windows begun before the time given. */
	assert_int_equal(store_signin_prune(f->st, T0 + 1002, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(store_signin_charge(f->st, "other", T0 + 1003, 1000,
	    3, &b, err, sizeof(err)), IH_OK);
	assert_int_equal(b.failures, 1);
	assert_int_equal(store_signin_charge(f->st, "k", T0 + 1003, 1000, 3,
	    &b, err, sizeof(err)), IH_OK);
	assert_int_equal(b.failures, 2);
}

/* The client budget, then the name's, and the clean client's pass. */
static void
gate_policy(void **state)
{
	struct unit_store *f = *state;
	struct console_gate g;
	char err[STORE_ERR_MAX], addr[32];
	int i, j, n = 0;

	for (i = 0; i < CONSOLE_CLIENT_TRIES; i++) {
		assert_int_equal(console_throttle_check(f->st, "192.0.2.1",
		    "admin", T0, &g, err, sizeof(err)), IH_OK);
		assert_int_equal(g.verify, 1);
		n++;
	}
	assert_int_equal(console_throttle_check(f->st, "192.0.2.1", "admin",
	    T0 + 1000, &g, err, sizeof(err)), IH_OK);
	assert_int_equal(g.verify, 0);
	assert_int_equal(g.retry_s, CONSOLE_CLIENT_WINDOW_S - 1);
	/* Another name from that address is not held. */
	assert_int_equal(console_throttle_check(f->st, "192.0.2.1", "root",
	    T0 + 1000, &g, err, sizeof(err)), IH_OK);
	assert_int_equal(g.verify, 1);
	/* Spend the name's budget from other addresses, none spent. */
	for (i = 2; n < CONSOLE_USER_TRIES; i++)
		for (j = 0; j < CONSOLE_CLIENT_TRIES - 1 && n <
		    CONSOLE_USER_TRIES; j++, n++) {
			snprintf(addr, sizeof(addr), "192.0.2.%d", i);
			assert_int_equal(console_throttle_check(f->st, addr,
			    "admin", T0 + 2000, &g, err, sizeof(err)), IH_OK);
			assert_int_equal(g.verify, 1);
		}
	/* A client that failed waits for the name's window... */
	assert_int_equal(console_throttle_check(f->st, addr, "admin",
	    T0 + 3000, &g, err, sizeof(err)), IH_OK);
	assert_int_equal(g.verify, 0);
	assert_int_equal(g.retry_s, CONSOLE_USER_WINDOW_S - 3);
	/* ...a clean one is checked once, then waits too. */
	assert_int_equal(console_throttle_check(f->st, "198.51.100.7",
	    "admin", T0 + 3000, &g, err, sizeof(err)), IH_OK);
	assert_int_equal(g.verify, 1);
	assert_int_equal(g.user_charged, 0);
	assert_int_equal(console_throttle_check(f->st, "198.51.100.7",
	    "admin", T0 + 3000, &g, err, sizeof(err)), IH_OK);
	assert_int_equal(g.verify, 0);
	/* A right password from a clean client clears its record. */
	assert_int_equal(console_throttle_check(f->st, "198.51.100.8",
	    "admin", T0 + 3000, &g, err, sizeof(err)), IH_OK);
	assert_int_equal(g.verify, 1);
	assert_int_equal(console_throttle_passed(f->st, &g, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(console_throttle_check(f->st, "198.51.100.8",
	    "admin", T0 + 3000, &g, err, sizeof(err)), IH_OK);
	assert_int_equal(g.verify, 1);
	/* Both windows past: all clients begin again. */
	assert_int_equal(console_throttle_check(f->st, "192.0.2.1", "admin",
	    T0 + USER_MS + CLIENT_MS, &g, err, sizeof(err)), IH_OK);
	assert_int_equal(g.verify, 1);
	assert_int_equal(g.user_charged, 1);
}

/* One IPv6 host holds a /64: its addresses share one client budget. */
static void
ipv6_by_prefix(void **state)
{
	struct unit_store *f = *state;
	struct console_gate g;
	char err[STORE_ERR_MAX], addr[64];
	int i;

	for (i = 0; i < CONSOLE_CLIENT_TRIES; i++) {
		snprintf(addr, sizeof(addr), "2001:db8:1:2::%x", i + 1);
		assert_int_equal(console_throttle_check(f->st, addr, "admin",
		    T0, &g, err, sizeof(err)), IH_OK);
		assert_int_equal(g.verify, 1);
	}
	assert_int_equal(console_throttle_check(f->st, "2001:db8:1:2:ffff::9",
	    "admin", T0, &g, err, sizeof(err)), IH_OK);
	assert_int_equal(g.verify, 0);
	assert_int_equal(console_throttle_check(f->st, "2001:db8:1:3::1",
	    "admin", T0, &g, err, sizeof(err)), IH_OK);
	assert_int_equal(g.verify, 1);
	/* A mapped IPv4 address is that address, not all of ::ffff:0/96. */
	assert_int_equal(console_throttle_check(f->st, "::ffff:192.0.2.9",
	    "admin", T0, &g, err, sizeof(err)), IH_OK);
	assert_int_equal(g.verify, 1);
}

static void
transport(void **state)
{
	(void)state;
	assert_true(console_transport_ok("on", "192.0.2.1", 0));
	assert_true(console_transport_ok("ON", "192.0.2.1", 0));
	assert_true(console_transport_ok(NULL, "192.0.2.1", 1));
	assert_true(console_transport_ok(NULL, "127.0.0.1", 0));
	assert_true(console_transport_ok("", "127.8.9.10", 0));
	assert_true(console_transport_ok(NULL, "::1", 0));
	assert_true(console_transport_ok(NULL, "::ffff:127.0.0.1", 0));
	assert_false(console_transport_ok(NULL, "192.0.2.1", 0));
	assert_false(console_transport_ok("off", "192.0.2.1", 0));
	assert_false(console_transport_ok(NULL, "128.0.0.1", 0));
	assert_false(console_transport_ok(NULL, "::ffff:192.0.2.1", 0));
	assert_false(console_transport_ok(NULL, "2001:db8::1", 0));
	assert_false(console_transport_ok(NULL, "localhost", 0));
	assert_false(console_transport_ok(NULL, NULL, 0));
	assert_true(console_over_tls("on", 0));
	assert_false(console_over_tls(NULL, 0));
	assert_false(console_over_tls("1", 0));
}

#define CASES(setup) \
	UNIT_STORE_CASE(charge_window, setup), \
	UNIT_STORE_CASE(gate_policy, setup), \
	UNIT_STORE_CASE(ipv6_by_prefix, setup)

int
main(void)
{
	const struct CMUnitTest plain[] = { cmocka_unit_test(transport) };
	const struct CMUnitTest sqlite[] = { CASES(setup_sqlite) };
	const struct CMUnitTest pg[] = { CASES(setup_pg) };
	int failed;

	failed = cmocka_run_group_tests_name("console transport", plain,
	    NULL, NULL);
	failed += cmocka_run_group_tests_name("console throttle: sqlite",
	    sqlite, NULL, NULL);
	failed += UNIT_RUN_PG("console throttle: postgresql", pg);
	return failed != 0;
}
