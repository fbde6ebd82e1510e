/*
 * clock.c -- the one clock: wall and monotonic time.  See clock.h.
 */
#include <stdint.h>
#include <time.h>

#include "clock.h"

/* Nanoseconds on clock id, or 0 if it cannot be read. */
static int64_t
read_ns(clockid_t id)
{
	struct timespec ts;

	if (clock_gettime(id, &ts) != 0)
		return 0;
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
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
