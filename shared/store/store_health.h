/*
 * store_health.h -- the endpoints as the providers see them, kept in the
 * store for the console (which holds no API key) and idemhook work:
 *
 *   - the last health result per provider (endpoint_health, migration
 *     10), written by `idemhook health` and idemhook work's checks;
 *   - on PostgreSQL, refused signatures per provider and minute
 *     (sigfails, migration 10), counted by the receivers of every host
 *     (in memory, then added by their writer thread: sigfail_pend.h).
 *     A SQLite store has them in the file beside it, which its caller
 *     keeps (sigfail.h, above the store): there store_sigfail_note()
 *     counts nothing and store_sigfail_count() answers IH_ENOTFOUND.
 *
 * Each call is one statement in autocommit, its values bound.  Strings
 * given are borrowed for the call; a row given to a callback lives until
 * it returns.  Failures return IH_ESTORE with the cause in err.
 */
#ifndef IH_STORE_HEALTH_H
#define IH_STORE_HEALTH_H

#include <stddef.h>
#include <stdint.h>

#include "store.h"

/* Longest findings text kept. */
#define STORE_HEALTH_TEXT_MAX	4096
/* Refused signatures are kept this many minutes (a day). */
#define STORE_SIGFAIL_KEEP_MIN	1440

struct store_health {
	const char	*provider;
	int64_t		 checked_at;	/* Unix ms */
	const char	*outcome;	/* "ok", "problem", "failed", ... */
	long		 problems;
	const char	*findings;	/* the problem lines, or "" */
};

/* Replaces h->provider's last result with h. */
int	store_health_put(struct store *st, const struct store_health *h,
	    char *err, size_t errlen);

/* Calls fn per provider with a result, by provider name. */
int	store_health_list(struct store *st,
	    int (*fn)(void *, const struct store_health *), void *arg,
	    char *err, size_t errlen);

/* Counts one refused signature of provider at now_ms (PostgreSQL). */
int	store_sigfail_note(struct store *st, const char *provider,
	    int64_t now_ms, char *err, size_t errlen);

/*
 * Adds count refused signatures of provider to Unix minute minute
 * (PostgreSQL; nothing on SQLite, nor for a count of 0 or less): the
 * counts a FastCGI receiver kept in memory (sigfail_pend.h).
 */
int	store_sigfail_add(struct store *st, const char *provider,
	    int64_t minute, long count, char *err, size_t errlen);

/*
 * Sets *count to provider's refused signatures in the minutes after
 * minute from_min up to minute to_min (Unix minutes), and *first_min to
 * the oldest such minute (0 when none).  IH_ENOTFOUND on a SQLite store.
 */
int	store_sigfail_count(struct store *st, const char *provider,
	    int64_t from_min, int64_t to_min, long *count, int64_t *first_min,
	    char *err, size_t errlen);

/* Called per provider: refused signatures in the hour and the day. */
typedef int (*store_sigfail_fn)(void *arg, const char *provider,
    long hour, long day);

/*
 * Calls fn per provider with refused signatures after minute day_min up
 * to to_min: those after hour_min, and all.  IH_ENOTFOUND on SQLite.
 */
int	store_sigfail_sums(struct store *st, int64_t hour_min,
	    int64_t day_min, int64_t to_min, store_sigfail_fn fn, void *arg,
	    char *err, size_t errlen);

#endif
