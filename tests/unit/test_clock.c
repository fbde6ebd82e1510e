/* test_clock.c -- the one clock (shared/clock.c): wall and monotonic. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cmocka.h>

#include "clock.h"

/* The wall readings agree with each other and with the system's. */
static void
wall_units_agree(void **state)
{
	time_t before, after;
	int64_t ms, ns, s;

	(void)state;
	before = time(NULL);
	s = (int64_t)clock_wall_s();
	ms = clock_wall_ms();
	ns = clock_wall_ns();
	after = time(NULL);
	assert_true(s >= (int64_t)before && s <= (int64_t)after);
	assert_true(ms / 1000 >= (int64_t)before);
	assert_true(ms / 1000 <= (int64_t)after);
	assert_true(ns / 1000000 >= ms && ns / 1000000 - ms < 1000);
}

/* Monotonic time never goes back, and measures a sleep. */
static void
mono_measures_a_sleep(void **state)
{
	struct timespec nap = { 0, 20 * 1000000 };
	int64_t t0_ns, t0_ms;
	double ms;

	(void)state;
	t0_ns = clock_mono_ns();
	t0_ms = clock_mono_ms();
	assert_true(t0_ns > 0 && t0_ms > 0);
	assert_true(t0_ns / 1000000 <= t0_ms);
	nanosleep(&nap, NULL);
	ms = clock_ms_since(t0_ns);
	assert_true(ms >= 20.0 && ms < 10000.0);
	assert_true(clock_mono_ms() - t0_ms >= 20);
	assert_true(clock_mono_ns() >= t0_ns + 20 * 1000000);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(wall_units_agree),
		cmocka_unit_test(mono_measures_a_sleep),
	};

	return cmocka_run_group_tests_name("clock", tests, NULL, NULL);
}
