/*
 * clock.h -- the one clock: every reading of the time goes through here,
 * so a test or a port changes one place.
 *
 * Wall time (CLOCK_REALTIME) is for what is stored or shown: event
 * times, retry times, log stamps, signature tolerance.  Monotonic time
 * (CLOCK_MONOTONIC) is for durations and deadlines, which must not jump
 * when the system clock is set.  The readings cannot fail on Linux; if
 * clock_gettime ever did, they return 0, which every caller treats as
 * "long ago" (a deadline passed, a stamp too recent to trust).
 *
 * In the test builds only (-DIH_FAULTS), IDEMHOOK_CLOCK_SKEW_MS moves
 * this process's wall time by that many milliseconds: a host whose
 * clock is wrong, for the tests of what must not depend on it.
 */
#ifndef IH_CLOCK_H
#define IH_CLOCK_H

#include <stdint.h>
#include <time.h>

/* Wall time in Unix seconds. */
time_t	clock_wall_s(void);

/* Wall time in Unix milliseconds: the store's timestamps. */
int64_t	clock_wall_ms(void);

/* Wall time in Unix nanoseconds: for comparing with file times. */
int64_t	clock_wall_ns(void);

/* Monotonic milliseconds: for deadlines. */
int64_t	clock_mono_ms(void);

/* Monotonic nanoseconds: a start point for clock_ms_since(). */
int64_t	clock_mono_ns(void);

/* Milliseconds elapsed since t0_ns, a clock_mono_ns() reading. */
double	clock_ms_since(int64_t t0_ns);

#endif
