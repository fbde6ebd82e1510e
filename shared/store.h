/*
 * store.h -- the durable record of events: the only module that speaks
 * SQL about them.
 *
 * Today the store is one SQLite file in WAL mode.  Its contract is what
 * a PostgreSQL store will keep:
 *   - store_record() inserts (provider, event_id) under a unique
 *     constraint in one atomic statement; a second delivery of the same
 *     event is reported as a duplicate and never inserted twice.
 *   - IH_OK from store_record() or store_commit() means the commit is
 *     durable (synchronous=FULL by default: the WAL is fsynced).
 *   - Any failure to record durably (busy past the timeout, disk full,
 *     read-only file, I/O error, corruption) is IH_ESTORE, which the
 *     programs answer with 503 so that the provider retries.
 *
 * A store is used by one thread.  It owns its connection and prepared
 * statements, which stay open across requests.  Error text for the log
 * goes to the caller's buffer and never contains payload bytes.
 */
#ifndef IH_STORE_H
#define IH_STORE_H

#include <stddef.h>
#include <stdint.h>

#define STORE_SCHEMA_VERSION	3
#define STORE_ERR_MAX		256

struct store;

struct store_opts {
	const char	*path;
	int		 synchronous;	/* 2 FULL, 1 NORMAL */
	long		 busy_timeout_ms;
};

/* An event as received, borrowed from the request for the call. */
struct store_event {
	const char	*provider;
	const char	*event_id;
	const char	*event_type;
	const char	*subtype;	/* may be NULL */
	const char	*order_key;	/* may be NULL */
	const void	*payload;
	size_t		 payload_len;
	const char	*headers;	/* "name: value\n" lines, or "" */
	const char	*status;	/* NULL for "received"; or "quarantined" */
	const char	*fingerprint;	/* hex SHA-256 of the payload, or NULL */
};

struct store_result {
	int		 duplicate;	/* 1 when the event was already there */
	int64_t		 rowid;		/* the event's row */
	int64_t		 duplicates;	/* deliveries after the first */
	char		 status[16];	/* its status now */
};

/*
 * Opens (creating owner-only, with any missing directories 0700) the
 * store at opts->path, sets WAL mode, the synchronous level and the busy
 * timeout, and applies db/schema.sql when the file's schema version is
 * older.  Returns IH_OK; IH_ESTORE with the cause in err when the file
 * cannot be opened or migrated; IH_ECONFIG for a store written by a newer
 * version.  *out is NULL on failure.
 */
int	store_open(const struct store_opts *opts, struct store **out,
	    char *err, size_t errlen);
void	store_close(struct store *st);

/*
 * Makes st wait for the write lock in SQLite's busy handler only, without
 * the <path>-lock queue.  The queue's bounded wait uses the process's one
 * interval timer and SIGALRM, so only one thread of a process may use it:
 * a second connection in another thread (a receiver's processing thread)
 * must call this right after store_open().
 */
void	store_no_queue(struct store *st);

/*
 * Records ev at time now_ms.  Outside a transaction it runs in its own
 * (BEGIN IMMEDIATE ... COMMIT) and returns only once that commit is
 * durable; inside store_begin() it joins the open transaction.  Returns
 * IH_OK with *res filled, IH_EINVAL for a missing field, or IH_ESTORE
 * with the cause in err; on failure nothing is recorded.
 */
int	store_record(struct store *st, const struct store_event *ev,
	    int64_t now_ms, struct store_result *res, char *err,
	    size_t errlen);

/*
 * Sets *found to 1 when the provider already holds an event with ev's
 * fingerprint and another type, while (provider, event_id) is new: the
 * same signed bytes under a new identity claiming another type, which a
 * provider that signs only the body cannot tell from a real event.  An
 * earlier event whose headers hold the line same_action ("\nName: value\n",
 * or NULL for none) does not count: the provider sends one action's body
 * under several types with a shared header (Shopify's Event-Id).  The
 * earlier event's id and type go to other_id and other_type (truncated
 * to their sizes).  Call it inside the transaction that records ev, so
 * that no other process records between the look-up and the insert.
 * Returns IH_OK (*found 0 when ev has no fingerprint) or IH_ESTORE.
 */
int	store_replay_of(struct store *st, const struct store_event *ev,
	    const char *same_action, int *found, char *other_id, size_t idlen, char *other_type,
	    size_t typelen, char *err, size_t errlen);

/*
 * Opens a write transaction (BEGIN IMMEDIATE).  A durable one commits at
 * the configured synchronous level (FULL: fsynced before IH_OK).  A
 * relaxed one commits at NORMAL: it survives a crash of the program but
 * not of the machine, which is enough for processing moves (claim, done,
 * failed), because losing one only makes the event due again.  The next
 * durable commit makes every earlier relaxed one durable too.
 * Returns IH_OK or IH_ESTORE.
 */
int	store_begin(struct store *st, int durable, char *err, size_t errlen);
/*
 * Reads the connection's synchronous level now (2 FULL, 1 NORMAL), for
 * audits and tests.  IH_OK or IH_ESTORE.
 */
int	store_sync_level(struct store *st, int *level);

/* Commits durably.  On IH_ESTORE the transaction is rolled back. */
int	store_commit(struct store *st, char *err, size_t errlen);
/* Rolls back the open transaction, if any. */
void	store_rollback(struct store *st);

/*
 * Processing.  An event moves received -> processing -> done; a failed
 * attempt moves it to failed (retried at next_attempt_at) or, after the
 * last attempt, to dead.  Each move is one atomic statement.  A claim
 * holds a lease: when it expires (its holder crashed), the event is due
 * again.  Moves out of processing check the lease owner, so a holder
 * whose lease was taken over cannot complete the event twice.
 */
struct store_job {
	int64_t		 rowid;
	char		*provider;
	char		*event_id;
	char		*event_type;
	char		*subtype;	/* or NULL */
	unsigned char	*payload;	/* or NULL once purged */
	size_t		 payload_len;
	long		 attempt;	/* 1 for the first since (re)queued */
	int64_t		 seq;		/* its row in attempts, over all time */
	int64_t		 received_at;
};

/*
 * Claims one due event for owner, with a lease of lease_ms: the one at
 * rowid when rowid > 0, else the oldest due event of provider (any
 * provider when NULL).  Due means received, failed with its time come, or
 * processing with an expired lease; an event waits while an older event
 * with the same order key is neither done, dead nor quarantined.  Sets
 * *found to 0 when nothing is due.  Runs in its own relaxed transaction,
 * or joins the open one (a receiver claims the event it is recording).
 * Taking over an expired lease closes the attempt rows left open by the
 * earlier holders ("lease_expired").  Returns IH_OK or IH_ESTORE.
 */
int	store_claim(struct store *st, const char *provider, int64_t rowid,
	    const char *owner, int64_t now_ms, int64_t lease_ms,
	    struct store_job *job, int *found, char *err, size_t errlen);

/*
 * Sets *due to 1 when store_claim() with rowid 0 would find an event of
 * provider (any when NULL) at now_ms.  A plain read: it takes no write
 * lock, so looking when nothing is due costs other writers nothing.
 * Returns IH_OK or IH_ESTORE.
 */
int	store_due(struct store *st, const char *provider, int64_t now_ms,
	    int *due, char *err, size_t errlen);

/*
 * Records a local effect of kind for the claimed job inside the open
 * transaction; a second identical effect is ignored.  Returns IH_OK,
 * IH_EINVAL outside a transaction, or IH_ESTORE.
 */
int	store_effect(struct store *st, const struct store_job *job,
	    const char *kind, int64_t now_ms, char *err, size_t errlen);

/*
 * Marks the job done.  Joins an open transaction (so that the switch's
 * effects and this move commit together) or runs in its own.  Returns
 * IH_OK, IH_ENOTFOUND when owner no longer holds the lease (nothing is
 * changed), or IH_ESTORE.
 */
int	store_complete(struct store *st, const struct store_job *job,
	    const char *owner, int64_t now_ms, char *err, size_t errlen);

/*
 * Marks the job failed with error, due again at next_ms, or dead when
 * dead is set.  Same transaction rules and returns as store_complete().
 */
int	store_fail(struct store *st, const struct store_job *job,
	    const char *owner, const char *error, int64_t next_ms, int dead,
	    int64_t now_ms, char *err, size_t errlen);

/*
 * Renews the job's lease: it runs lease_ms from the moment the write lock
 * is held.  Called before each action, so that an event whose actions
 * together outlast one lease stays with its holder.  Returns IH_OK,
 * IH_ENOTFOUND when owner no longer holds the lease (nothing changes:
 * the caller must stop), or IH_ESTORE.  Joins an open transaction.
 */
int	store_renew(struct store *st, const struct store_job *job,
	    const char *owner, int64_t lease_ms, char *err, size_t errlen);

/*
 * Closes the job's attempt row as "lease_lost", when the holder finds
 * that another process took the event over; a row already closed (by
 * the claim that took it over) is left as it is.  IH_OK or IH_ESTORE.
 */
int	store_attempt_lost(struct store *st, const struct store_job *job,
	    int64_t now_ms, char *err, size_t errlen);

/*
 * Inline mode: deletes the claimed job's event, with its attempts and
 * effects, after a failed attempt, so that the provider's retry is
 * recorded afresh.  Returns IH_OK, IH_ENOTFOUND when owner no longer
 * holds the lease, or IH_ESTORE.
 */
int	store_forget(struct store *st, const struct store_job *job,
	    const char *owner, char *err, size_t errlen);

void	store_job_free(struct store_job *job);

/*
 * Inside an open transaction: records ev as store_record() does and,
 * when it is new, claims it for owner in the same insert (status
 * processing, attempt 1, a lease of lease_ms, its attempt row started),
 * filling *job except the payload, which stays NULL: the caller holds the
 * bytes it just recorded, and reading them back would copy them again.
 * A duplicate is not claimed (*job stays empty).  The order key is not
 * consulted: use store_claim() for an event that has one.  Returns IH_OK,
 * IH_EINVAL outside a transaction, IH_ENOMEM or IH_ESTORE.
 */
int	store_record_claim(struct store *st, const struct store_event *ev,
	    int64_t now_ms, const char *owner, int64_t lease_ms,
	    struct store_result *res, struct store_job *job, char *err,
	    size_t errlen);

/* Returns the current time in Unix milliseconds. */
int64_t	store_now_ms(void);

/*
 * The operator's view (idemhook list, show, replay, purge, stats, check).
 * Every function below reads or changes events through the open store;
 * each change is one atomic statement, or a series of short ones, so the
 * receivers and workers may run meanwhile.
 */

/* Which events: every field set narrows the set; unset fields match all. */
struct store_filter {
	const char	*provider;	/* or NULL */
	const char	*event_id;	/* or NULL */
	const char	*event_type;	/* or NULL: exact type */
	const char	*status;	/* or NULL */
	int64_t		 since_ms;	/* received_at >= this, when > 0 */
	int64_t		 until_ms;	/* received_at < this, when > 0 */
	long		 limit;		/* at most this many, when > 0 */
};

/*
 * One event as the operator sees it.  Every pointer is borrowed from the
 * statement and valid only during the callback.  Times are Unix ms, 0
 * when unset.  headers and payload are filled by store_show() only.
 */
struct store_row {
	int64_t			 rowid;
	const char		*provider;
	const char		*event_id;
	const char		*event_type;
	const char		*subtype;	/* or NULL */
	const char		*order_key;	/* or NULL */
	const char		*status;
	int64_t			 received_at;
	int64_t			 last_seen_at;
	int64_t			 duplicates;
	int64_t			 attempts;
	int64_t			 next_attempt_at;
	int64_t			 done_at;
	int64_t			 purged_at;
	int64_t			 lease_until;
	const char		*lease_owner;	/* or NULL */
	const char		*last_error;	/* or NULL */
	int			 has_payload;	/* 0 once purged */
	int64_t			 payload_len;
	const char		*json;		/* the metadata as JSON */
	const char		*headers;	/* "name: value\n" lines */
	const unsigned char	*payload;	/* or NULL once purged */
};

/* Called once per row; a return other than IH_OK stops the walk. */
typedef int (*store_row_fn)(void *arg, const struct store_row *row);

/*
 * Calls fn for each event matching f, oldest first (by row).  Returns
 * IH_OK, IH_ESTORE with the cause in err, or what fn returned.
 */
int	store_list(struct store *st, const struct store_filter *f,
	    store_row_fn fn, void *arg, char *err, size_t errlen);

/*
 * Calls fn once for the event (provider, event_id), with its headers and
 * payload.  Returns IH_OK, IH_ENOTFOUND when there is no such event,
 * IH_ESTORE, or what fn returned.
 */
int	store_show(struct store *st, const char *provider,
	    const char *event_id, store_row_fn fn, void *arg, char *err,
	    size_t errlen);

/* One processing attempt, borrowed for the callback. */
struct store_attempt {
	int64_t		 attempt;
	int64_t		 started_at;
	int64_t		 finished_at;	/* 0 while running or lost */
	const char	*outcome;	/* or NULL */
	const char	*error;		/* or NULL */
};

/* Calls fn for each attempt of the event at rowid, in order. */
int	store_attempts(struct store *st, int64_t rowid,
	    int (*fn)(void *arg, const struct store_attempt *a), void *arg,
	    char *err, size_t errlen);

/*
 * Replay: makes every event matching f that is done, failed, dead or
 * quarantined and still has its payload due again (status received,
 * next attempt now, no lease, attempts counted from zero), in one atomic
 * statement, and calls fn for each.  Events being processed or already
 * due are left alone.  With dry_run nothing changes; fn sees what would.
 * *count is the number of events.  Returns IH_OK, IH_ESTORE or what fn
 * returned (the statement is then rolled back).
 */
int	store_requeue(struct store *st, const struct store_filter *f,
	    int dry_run, int64_t now_ms, store_row_fn fn, void *arg,
	    long *count, char *err, size_t errlen);

/*
 * Retention for one provider.  Payloads of done and quarantined events
 * (and dead ones with include_dead) received before payload_before_ms
 * are dropped (payload NULL, purged_at set); rows of such events both
 * received before payload_before_ms and last seen before row_before_ms
 * are deleted with their attempts and effects.  Rows in any other status
 * are never touched: a dead letter stays whole until it is replayed.
 * Works in transactions of at most batch rows, so receivers wait for the
 * lock only briefly.  With dry_run only counts.
 */
struct store_purge {
	const char	*provider;
	int64_t		 payload_before_ms;
	int64_t		 row_before_ms;	/* 0: never delete rows */
	long		 batch;
	int		 dry_run;
	int		 include_dead;	/* purge dead events like done ones */
	long		 payloads;	/* out: payloads dropped */
	long		 rows;		/* out: rows deleted */
	long		 dead_kept;	/* out: dead events kept past cutoff */
};

int	store_purge(struct store *st, struct store_purge *p, char *err,
	    size_t errlen);

/* Per-provider figures over events received in [since_ms, until_ms). */
struct store_stats {
	char		 provider[64];
	int64_t		 events;	/* first received in the window */
	int64_t		 duplicates;	/* their later deliveries */
	int64_t		 received, processing, done, failed, dead,
			 quarantined;	/* their status now */
	int64_t		 latency_n;	/* done events measured */
	int64_t		 latency_sum_ms;
	int64_t		 p50_ms, p95_ms, p99_ms;	/* -1 when none */
	int64_t		 oldest_pending_ms;	/* any time; 0 when none */
	int64_t		 pending;	/* any time: received/processing/failed */
};

/*
 * Calls fn for each provider that has events in the window (or pending
 * ones), by name; provider NULL means all.  Returns IH_OK, IH_ESTORE or
 * what fn returned.
 */
int	store_stats(struct store *st, const char *provider, int64_t since_ms,
	    int64_t until_ms, int (*fn)(void *arg, const struct store_stats *s),
	    void *arg, char *err, size_t errlen);

/* Writes the connection's journal mode ("wal") into mode. */
int	store_journal_mode(struct store *st, char *mode, size_t len,
	    char *err, size_t errlen);

/*
 * The console's accessor: the store's SQLite connection, for the
 * read-only queries of store_console.c and nothing else.
 */
struct sqlite3;
struct sqlite3	*store_sqlite(struct store *st);

#endif
