/*
 * sqlite_queue.c -- SQLite: the writers' queue on <path>-lock, so that
 * writers wait their turn in order instead of polling, and the busy
 * wait when the queue cannot be used.
 */
#include <sys/file.h>
#include <sys/time.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "clock.h"
#include "ih.h"
#include "sqlite_int.h"

/*
 * SQLite's default busy handler sleeps in steps of up to 100 ms, which
 * turns a short wait for the write lock into a long tail.  Waiting in
 * short steps keeps the queue moving; the deadline is the same.
 */
int
sq_busy_wait(void *arg, int count)
{
	struct sq *st = arg;
	struct timespec nap;
	int64_t now = clock_mono_ms();
	long elapsed_ms;

	if (count == 0)
		st->busy_start_ms = now;
	elapsed_ms = (long)(now - st->busy_start_ms);
	if (elapsed_ms >= st->busy_timeout_ms)
		return 0;
	nap.tv_sec = 0;
	nap.tv_nsec = count < 50 ? 20000 : count < 500 ? 100000 : 1000000;
	nanosleep(&nap, NULL);
	return 1;
}

static void
on_alarm(int sig)
{
	(void)sig;
}

/*
 * Writers queue on a kernel lock before they ask SQLite for its write
 * lock.  SQLite's own wait is a poll: a waiting process notices the lock
 * is free only when its nap ends, and a busy writer can take it again
 * first, so two writers together commit less than one alone.  The kernel
 * instead wakes the next writer when the lock is released.  The wait is
 * bounded by the busy timeout: a timer interrupts it every few
 * milliseconds to check the deadline.  Any failure of the queue itself
 * falls back to SQLite's wait, which alone keeps the data correct.
 */
int
sq_queue_enter(struct sq *st, char *err, size_t errlen)
{
	struct sigaction sa, old_sa;
	struct itimerval tick, old_tick;
	int64_t t0;
	long waited;
	int rc = IH_OK;

	if (st->queuefd < 0 || st->queued)
		return IH_OK;
	if (flock(st->queuefd, LOCK_EX | LOCK_NB) == 0) {
		st->queued = 1;
		return IH_OK;
	}
	if (errno != EWOULDBLOCK)
		return IH_OK;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, &old_sa);
	memset(&tick, 0, sizeof(tick));
	tick.it_interval.tv_usec = 5000;
	tick.it_value.tv_usec = 5000;
	setitimer(ITIMER_REAL, &tick, &old_tick);
	t0 = clock_mono_ms();
	for (;;) {
		if (flock(st->queuefd, LOCK_EX) == 0) {
			st->queued = 1;
			break;
		}
		if (errno != EINTR)
			break;
		waited = (long)(clock_mono_ms() - t0);
		if (waited >= st->busy_timeout_ms) {
			snprintf(err, errlen, "cannot begin transaction: "
			    "other writers held the store past the busy "
			    "timeout (%ld ms)", st->busy_timeout_ms);
			rc = IH_ESTORE;
			break;
		}
	}
	memset(&tick, 0, sizeof(tick));
	setitimer(ITIMER_REAL, &old_tick, NULL);
	sigaction(SIGALRM, &old_sa, NULL);
	return rc;
}

void
sq_queue_leave(struct sq *st)
{
	if (st->queued) {
		flock(st->queuefd, LOCK_UN);
		st->queued = 0;
	}
}

void
sq_no_queue(struct store *base)
{
	struct sq *st = sq_of(base);

	/* flock(2) locks belong to this descriptor only: closing it frees
	 * nothing another connection holds. */
	if (st->queuefd >= 0 && !st->queued) {
		close(st->queuefd);
		st->queuefd = -1;
	}
}
