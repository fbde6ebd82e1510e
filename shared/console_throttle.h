/*
 * console_throttle.h -- the console's sign-in budgets: which attempts
 * may have their password checked, and which are answered 429 at once.
 *
 * Two budgets, kept in the store (store_signin.h) so that every console
 * process sees them, FastCGI or plain CGI, on any host of the store:
 *
 *   client  one client address (an IPv6 address by its /64) and one user
 *           name: CONSOLE_CLIENT_TRIES attempts per CONSOLE_CLIENT_WINDOW_S;
 *   user    one user name, from every address: CONSOLE_USER_TRIES per
 *           CONSOLE_USER_WINDOW_S.
 *
 * An attempt is charged to both before its password is checked (so that
 * attempts at once can never take more than the budget) and given back
 * when it proves right.  It is refused unchecked when its client budget
 * is spent, or when the user budget is spent and its client has already
 * failed for that name in its window: a client with a clean record still
 * gets its password checked, so a flood against the name from elsewhere
 * never locks the operator out, while each address that floods gets one
 * checked guess per client window once the user budget is spent.  A
 * name nobody uses is budgeted the same way, so the answers never tell
 * which name is real.  Nothing here sleeps.
 */
#ifndef IH_CONSOLE_THROTTLE_H
#define IH_CONSOLE_THROTTLE_H

#include <stddef.h>
#include <stdint.h>

#include "store.h"

#define CONSOLE_CLIENT_TRIES	5
#define CONSOLE_CLIENT_WINDOW_S	300
#define CONSOLE_USER_TRIES	20
#define CONSOLE_USER_WINDOW_S	900

/* One attempt's verdict and what to give back if it proves right. */
struct console_gate {
	int	verify;		/* 1: check the password */
	long	retry_s;	/* when not: seconds before trying again */
	int	user_charged;
	char	client_key[65];
	char	user_key[65];
};

/*
 * Charges the attempt of name from the client address addr (REMOTE_ADDR;
 * NULL is "-") at now_ms and fills *g.  Returns IH_OK, or IH_ESTORE with
 * the cause in err (then refuse: the budget cannot be kept).
 */
int	console_throttle_check(struct store *st, const char *addr,
	    const char *name, int64_t now_ms, struct console_gate *g,
	    char *err, size_t errlen);

/* What console_throttle_signin() found. */
enum console_verdict {
	CONSOLE_SIGNED_IN,
	CONSOLE_WRONG,		/* wrong name or password: 401 */
	CONSOLE_WAIT		/* a budget is spent, nothing checked: 429 */
};

/*
 * One Basic sign-in of name with pw from addr: charges the budgets,
 * checks the password against hash when they allow (hash NULL: name is
 * not the console's user, nothing to check), gives back on success.
 * Sets *v, and *retry_s for CONSOLE_WAIT.  Returns IH_OK, IH_ECONFIG
 * when hash is malformed, or IH_ESTORE with the cause in err.
 */
int	console_throttle_signin(struct store *st, const char *addr,
	    const char *name, const char *hash, const char *pw, size_t pwlen,
	    int64_t now_ms, enum console_verdict *v, long *retry_s, char *err,
	    size_t errlen);

/* The attempt of g proved right: forgets its client budget, gives the
 * user budget its attempt back.  IH_OK or IH_ESTORE. */
int	console_throttle_passed(struct store *st, const struct console_gate *g,
	    char *err, size_t errlen);

#endif
