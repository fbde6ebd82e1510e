/*
 * store_signin.h -- the console's sign-in budgets in the store (table
 * console_signin, schema version 5), on either backend (sqlite_signin.c,
 * pg_signin.c).
 *
 * A budget is a count of attempts under a key (any short text; the
 * console passes a hex digest) in a fixed window that starts at the
 * first attempt and lasts window_ms.  Each call is one statement in
 * autocommit, atomic against every other process of the store, so two
 * requests at once can never both take the last attempt.  Nothing here
 * sleeps or waits beyond the store's own busy timeout.  Failure is
 * IH_ESTORE with the cause in err; the caller then refuses the sign-in.
 */
#ifndef IH_STORE_SIGNIN_H
#define IH_STORE_SIGNIN_H

#include <stddef.h>
#include <stdint.h>

#include "store.h"

#define STORE_SIGNIN_KEY_MAX	80

/* A budget as it stands after a charge. */
struct store_signin {
	int	 charged;	/* 1: this attempt was counted */
	int64_t	 failures;	/* attempts counted in the window */
	int64_t	 window_ms;	/* when the window began */
};

/*
 * Counts one attempt against key at now_ms, unless key already has max
 * attempts in a window not yet past (then *out says so, charged 0, and
 * nothing is written).  A window past begins again at now_ms.  Returns
 * IH_OK or IH_ESTORE.
 */
int	store_signin_charge(struct store *st, const char *key, int64_t now_ms,
	    int64_t window_ms, long max, struct store_signin *out, char *err,
	    size_t errlen);

/*
 * Takes one attempt back from key (a sign-in that proved right), or with
 * forget, removes key's budget.  Returns IH_OK or IH_ESTORE.
 */
int	store_signin_refund(struct store *st, const char *key, int forget,
	    char *err, size_t errlen);

/* Removes every budget whose window began before before_ms. */
int	store_signin_prune(struct store *st, int64_t before_ms, char *err,
	    size_t errlen);

#endif
