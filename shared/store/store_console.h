/*
 * store_console.h -- the console's read-only queries on the store, on
 * either backend (the console's part of the store's interface; the
 * backends implement it in sqlite_console.c and pg_console.c).
 *
 * Every function here reads; replay goes through store_requeue() like
 * `idemhook replay`.  Each statement runs on its own (autocommit), so a
 * read holds one short snapshot (SQLite's WAL read, PostgreSQL's MVCC)
 * and never takes a write lock: a receiver's write never waits for the
 * console.  Each query is bounded: counts read one covering index
 * (events_provider_status, migration 3), the hourly series read the last
 * 24 hours through an index (on SQLite the same one, a search per
 * provider and status; on PostgreSQL events_received), the bounds of the
 * row ids one row at each end, and a page of events scans at most
 * STORE_CONSOLE_SCAN_MAX rows by row id, whatever its filters.  Both
 * backends give the same answers: the type pattern is SQLite's GLOB
 * (case-sensitive, `*`, `?`, `[...]`) on both, the search text a
 * case-sensitive substring.
 */
#ifndef IH_STORE_CONSOLE_H
#define IH_STORE_CONSOLE_H

#include <stddef.h>
#include <stdint.h>

#include "store.h"

#define STORE_CONSOLE_HOURS	24
/* Rows of one id window, and most rows one page may scan. */
#define STORE_CONSOLE_WINDOW	2000
#define STORE_CONSOLE_SCAN_MAX	20000
/* Most done events measured for the answer-time percentiles. */
#define STORE_CONSOLE_LATENCY_MAX	100000
#define STORE_CONSOLE_PAGE_MAX	200

/* Called per (provider, status): its count and latest received_at. */
typedef int (*store_console_count_fn)(void *arg, const char *provider,
    const char *status, int64_t n, int64_t last_received_ms);

/*
 * Calls fn for each (provider, status) pair present, by provider then
 * status.  Returns IH_OK, IH_ESTORE with the cause in err, or what fn
 * returned.
 */
int	store_console_counts(struct store *st, store_console_count_fn fn,
	    void *arg, char *err, size_t errlen);

/*
 * One hour of the last 24, by the hour each event was first received:
 * events first received, their later duplicate deliveries, those now
 * failed or dead, and the time from receipt to done (done_at minus
 * received_at) of the done ones, as p50 and p99 (-1 when none).
 */
struct store_console_hour {
	int64_t	start_ms;
	int64_t	accepted;
	int64_t	duplicates;
	int64_t	failed;
	int64_t	latency_n;
	int64_t	p50_ms;
	int64_t	p99_ms;
};

struct store_console_series {
	/* Oldest first. */
	struct store_console_hour hour[STORE_CONSOLE_HOURS];
	int64_t	accepted;	/* totals over the 24 hours */
	int64_t	duplicates;
	int64_t	failed;
	int64_t	latency_n;
	int64_t	p50_ms;
	int64_t	p99_ms;
};

/*
 * Fills *s for the 24 whole-or-current hours ending at now_ms.  At most
 * STORE_CONSOLE_LATENCY_MAX done events are measured (the oldest first).
 * Returns IH_OK, IH_ENOMEM or IH_ESTORE.
 */
int	store_console_series(struct store *st, int64_t now_ms,
	    struct store_console_series *s, char *err, size_t errlen);

/* Sets *bytes to the store's size (pages in use times page size). */
int	store_console_size(struct store *st, int64_t *bytes, char *err,
	    size_t errlen);

/* A page of the events list, newest first; unset fields match all. */
struct store_console_query {
	const char	*provider;	/* or NULL: exact */
	const char	*account;	/* or NULL: every account */
	const char	*status;	/* or NULL: exact */
	const char	*type_glob;	/* or NULL: a GLOB on the type */
	const char	*text;		/* or NULL: part of the id or type */
	int64_t		 since_ms;	/* received_at >= this, when > 0 */
	int64_t		 until_ms;	/* received_at < this, when > 0 */
	int64_t		 before_id;	/* rows below this id; 0: newest */
	long		 page;		/* rows wanted, 1..PAGE_MAX */
};

/*
 * Calls fn for up to q->page matching events, newest first, with the
 * list's fields of struct store_row (no headers, payload or JSON).  Scans
 * whole id windows down from q->before_id until the page is full, the
 * oldest row is passed, or STORE_CONSOLE_SCAN_MAX rows were scanned.
 * *next_before is where the next page starts (0 when nothing older is
 * left); a partial page with *next_before > 0 means the scan stopped at
 * its bound and older rows may still match.  Returns IH_OK, IH_EINVAL
 * for a bad page size, IH_ESTORE, or what fn returned.
 */
int	store_console_list(struct store *st,
	    const struct store_console_query *q, store_row_fn fn, void *arg,
	    int64_t *next_before, char *err, size_t errlen);

/*
 * Sets *ms to the latest received_at of provider's events other than
 * quarantined ones and idemhook smoke's test events (0 when it has
 * none): its last accepted delivery, for the silence and bad-signature
 * alerts and Shopify's catch-up.  One index look-up per status.  IH_OK
 * or IH_ESTORE.
 */
int	store_console_last_received(struct store *st, const char *provider,
	    int64_t *ms, char *err, size_t errlen);

/*
 * store_console_last_received() for the events of one event_type only
 * (a Shopify topic): where the gap of a missing subscription starts.
 * Reads every such event of provider: for catch-up and health, not for
 * a page.  IH_OK or IH_ESTORE.
 */
int	store_console_last_of_type(struct store *st, const char *provider,
	    const char *event_type, int64_t *ms, char *err, size_t errlen);

/*
 * Writes the backend's query plan of each console statement into buf,
 * one "statement: plan" line per step, for the unit test that checks
 * every read can use an index.  SQLite: EXPLAIN QUERY PLAN, the plan it
 * runs.  PostgreSQL picks a plan by the table's statistics (a small
 * table is read whole, being cheaper), so its EXPLAIN is taken with
 * sequential scans priced out (enable_seqscan off, in a transaction
 * rolled back): each statement then shows the index it uses once the
 * table is large.  Returns IH_OK, IH_ETOOBIG or IH_ESTORE.
 */
int	store_console_explain(struct store *st, char *buf, size_t len,
	    char *err, size_t errlen);

#endif
