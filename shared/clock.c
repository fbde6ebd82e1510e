/*
 * clock.c -- the one clock: wall and monotonic time.  See clock.h.
 */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "clock.h"

/*
 * The test builds (IH_FAULTS, as fault.h) let IDEMHOOK_CLOCK_SKEW_MS set
 * this process's wall clock off by that many milliseconds, to play a
 * host whose clock is wrong.  Other builds read the clock as it is.
 */
static int64_t
skew_ns(void)
{
#ifdef IH_FAULTS
	static int64_t skew;
	static int done;
	const char *v;

	if (!done) {
		v = getenv("IDEMHOOK_CLOCK_SKEW_MS");
		skew = v != NULL ? strtoll(v, NULL, 10) * 1000000 : 0;
		done = 1;
	}
	return skew;
#else
	return 0;
#endif
}

/* Nanoseconds on clock id, or 0 if it cannot be read. */
static int64_t
read_ns(clockid_t id)
{
	struct timespec ts;

	if (clock_gettime(id, &ts) != 0)
		return 0;
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec +
	    (id == CLOCK_REALTIME ? skew_ns() : 0);
}

time_t
clock_wall_s(void)
{
	return (time_t)(read_ns(CLOCK_REALTIME) / 1000000000);
}

int64_t
clock_wall_ms(void)
{
	return read_ns(CLOCK_REALTIME) / 1000000;
}

int64_t
clock_wall_ns(void)
{
	return read_ns(CLOCK_REALTIME);
}

int64_t
clock_mono_ms(void)
{
	return read_ns(CLOCK_MONOTONIC) / 1000000;
}

int64_t
clock_mono_ns(void)
{
	return read_ns(CLOCK_MONOTONIC);
}

double
clock_ms_since(int64_t t0_ns)
{
	return (double)(read_ns(CLOCK_MONOTONIC) - t0_ns) / 1e6;
}
