/*
 * store.h -- the durable record of events: the backend-neutral contract.
 * Nothing outside shared/store/ speaks SQL about events.
 *
 * Two backends keep the same contract (see store_backend.h): SQLite, one
 * file in WAL mode (IDEMHOOK_DB an absolute path), and PostgreSQL
 * (IDEMHOOK_DB a postgresql:// or postgres:// libpq URI).
 *   - store_record() inserts (provider, event_id) under a unique
 *     constraint in one atomic statement; a second delivery of the same
 *     event is reported as a duplicate and never inserted twice.
 *   - IH_OK from store_record() or store_commit() of a durable
 *     transaction means the commit is durable.
 *   - Any failure to record durably (busy past the timeout, disk full,
 *     read-only file, I/O error, lost connection) is IH_ESTORE, which the
 *     programs answer with 503 so that the provider retries.
 *
 * Transactions are explicit: store_begin() hands out a struct store_txn,
 * and every call that may join a transaction takes one; NULL means the
 * call runs in a transaction of its own.
 *
 * A store is used by one thread.  It owns its connection and prepared
 * statements, which stay open across requests.  Error text for the log
 * goes to the caller's buffer and never contains payload bytes or a
 * password.
 */
#ifndef IH_STORE_H
#define IH_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "event.h"

#define STORE_SCHEMA_VERSION	16
#define STORE_ERR_MAX		256

struct store;
struct store_txn;

/*
 * How a commit is kept.  Durable: on disk before IH_OK (SQLite
 * synchronous=FULL, PostgreSQL synchronous_commit=on).  Relaxed: it
 * survives a crash of the program but maybe not of the machine, which is
 * enough for processing moves (claim, done, failed), because losing one
 * only makes the event due again.  The next durable commit makes every
 * earlier relaxed one durable too.
 */
enum store_durability {
	/*
	 * As opts->durable_as, SQLite writes a durable commit at NORMAL and
	 * then waits for an fdatasync of the log that one process runs for
	 * every commit before it (sqlite_sync.h; IDEMHOOK_SYNCHRONOUS=SHARED,
	 * the default).
	 */
	STORE_DURABLE,
	STORE_RELAXED,
	/*
	 * Only as opts->durable_as: the same guarantee, but each SQLite
	 * commit fsyncs the log itself (synchronous=FULL).  PostgreSQL
	 * treats it as STORE_DURABLE.
	 */
	STORE_DURABLE_EACH
};

/*
 * The durable_as of a synchronous setting as struct config holds it:
 * 1 NORMAL, 2 FULL, 3 SHARED.
 */
enum store_durability	store_durable_as(int synchronous);

struct store_opts {
	const char		*path;	/* absolute path, or a libpq URI */
	/* What a durable transaction means here (settings: synchronous). */
	enum store_durability	 durable_as;
	long			 busy_timeout_ms;
};

/*
 * Which backend a location names: 1 for PostgreSQL, 0 for SQLite, as
 * config_db_is_postgres() reads it (config.h, where locations are checked).
 */
int	store_is_postgres(const char *path);

struct store_result {
	int		 duplicate;	/* 1 when the event was already there */
	int64_t		 rowid;		/* the event's row */
	int64_t		 duplicates;	/* deliveries after the first */
	char		 status[16];	/* its status now */
};

/*
 * Opens the store at opts->path with the backend it names, and creates
 * or migrates its schema (db/sqlite/, db/postgres/) when it is older,
 * safely when several processes or hosts open it at once.  SQLite creates
 * the file owner-only, with any missing directories 0700.  Returns IH_OK;
 * IH_ESTORE with the cause in err when the file cannot be opened or
 * migrated; IH_ECONFIG for a store written by a newer version.  *out is
 * NULL on failure.
 */
int	store_open(const struct store_opts *opts, struct store **out,
	    char *err, size_t errlen);
void	store_close(struct store *st);

/*
 * Once per process, before any thread opens a store: turns off SQLite's
 * count of its memory, whose global mutex every allocation of every
 * connection would otherwise take.  Harmless when SQLite is already in
 * use (it then changes nothing).
 */
void	store_process_init(void);

/*
 * SQLite: makes st wait for the write lock in its busy handler only, without
 * the <path>-lock queue.  The queue's bounded wait uses the process's one
 * interval timer and SIGALRM, so only one thread of a process may use it:
 * a second connection in another thread (a receiver's processing thread)
 * must call this right after store_open().  Other backends ignore it.
 */
void	store_no_queue(struct store *st);

/*
 * Records ev at time now_ms.  With tx NULL it runs in a durable
 * transaction of its own and returns only once that commit is durable;
 * else it joins tx.  Returns IH_OK with *res filled, IH_EINVAL for a
 * missing field, or IH_ESTORE with the cause in err; on failure nothing
 * is recorded.
 */
int	store_record(struct store *st, struct store_txn *tx,
	    const struct event *ev, int64_t now_ms,
	    struct store_result *res, char *err, size_t errlen);

/*
 * Records the n events of evs in one transaction (tx, or a durable one of
 * its own when tx is NULL), so that one commit carries them all.  Each
 * event's outcome goes to rcs[i] (IH_OK with res[i] filled, IH_EINVAL
 * for an event lacking a field, or IH_ESTORE when its insert failed):
 * each event has a savepoint, so one that fails is undone alone.  A
 * failure of the transaction itself (begin, a savepoint, the commit)
 * fails the whole batch: nothing is recorded, every rcs[i] is IH_ESTORE
 * and so is the return.  Returns IH_OK once the batch is committed (or
 * joined).
 */
int	store_record_batch(struct store *st, struct store_txn *tx,
	    const struct event *evs, size_t n, int64_t now_ms,
	    struct store_result *res, int *rcs, char *err, size_t errlen);

/*
 * The first event a provider recorded with one body: what the body was
 * first recorded as, for the replay check.  Ids and types are at most
 * 1024 bytes (a longer one is truncated, and then matches nothing).
 */
struct store_first {
	char	event_id[1040];
	char	event_type[1040];
	/* 1 when its headers hold the line asked about (same_action). */
	int	same_action;
	/* How many events with the body are held now. */
	int64_t	held;
};

/*
 * Sets *found to 1 when (provider, event_id) of ev is new and the
 * provider already holds an event with ev's fingerprint: the same signed
 * bytes under a new identity, which a provider that signs only the body
 * cannot tell from a real event.  *first is then the earliest such event
 * (the lowest row); first->same_action says whether its headers hold the
 * line same_action ("\nName: value\n"; never, when NULL), and
 * first->held how many events with the body are held.  Whether ev may
 * be recorded too is the provider's decision (provider.h, repeat_ok).
 * Call it inside the transaction that records ev, so that no other
 * process records between the look-up and the insert.  Returns IH_OK
 * (*found 0 when ev has no fingerprint) or IH_ESTORE.
 */
int	store_replay_of(struct store *st, struct store_txn *tx,
	    const struct event *ev, const char *same_action, int *found,
	    struct store_first *first, char *err, size_t errlen);

/*
 * Opens a write transaction kept as d says (a durable one as
 * opts->durable_as says) and sets *tx to it; one transaction at a time
 * per store.  SQLite takes the write lock at once (BEGIN IMMEDIATE).
 * Returns IH_OK or IH_ESTORE (*tx NULL).
 */
int	store_begin(struct store *st, enum store_durability d,
	    struct store_txn **tx, char *err, size_t errlen);

/* Commits tx.  On IH_ESTORE the transaction is rolled back. */
int	store_commit(struct store_txn *tx, char *err, size_t errlen);
/* Rolls back tx; NULL or an ended transaction is ignored. */
void	store_rollback(struct store_txn *tx);

/*
 * Savepoints inside an open transaction, innermost first: OPEN starts
 * one, KEEP releases it (its changes stay in tx), UNDO rolls its changes
 * back and ends it.  They nest, so that one event of a batch, and the
 * switch inside that event, can each be undone alone.  CHECK waits for
 * the answers of the writes sent since (PostgreSQL sends some without
 * waiting): IH_ESTORE when one was refused, while UNDO can still undo it
 * alone (SQLite answers each write at once: nothing to wait for).
 * Returns IH_OK, IH_EINVAL without an open transaction, or IH_ESTORE.
 */
enum store_sp {
	STORE_SP_OPEN,
	STORE_SP_KEEP,
	STORE_SP_UNDO,
	STORE_SP_CHECK
};

int	store_savepoint(struct store_txn *tx, enum store_sp op, char *err,
	    size_t errlen);

/*
 * Processing.  An event moves received -> processing -> done; a failed
 * attempt moves it to failed (retried at next_attempt_at) or, after the
 * last attempt, to dead.  Each move is one atomic statement.  A claim
 * holds a lease: when it expires (its holder crashed), the event is due
 * again.  Moves out of processing check the lease owner, so a holder
 * whose lease was taken over cannot complete the event twice.
 */
/*
 * A claim: the event (rowid, attempt and received_at set) and the lease's
 * bookkeeping.  It is not the event itself because it OWNS what ev points
 * at (provider, ids, type, subtype and payload are its own copies, freed
 * by store_job_free()): a job outlives the request that recorded it, and
 * is handed to the processing thread while the request's buffers serve
 * the next delivery.  The one exception is ingest.c's job, whose payload
 * is borrowed from the request (ingest_job_borrow()).
 */
struct store_job {
	struct event	 ev;
	int64_t		 seq;		/* its row in attempts, over all time */
	/* Kept as the attempt's note when it ends done (borrowed), or NULL:
	 * what the application answered a forwarded event (forward.h). */
	const char	*done_note;
};

/*
 * Claims one due event for owner, with a lease of lease_ms: the one at
 * rowid when rowid > 0, else the oldest due event of provider (any
 * provider when NULL).  Due means received, failed with its time come, or
 * processing with an expired lease; an event waits while an older event
 * with the same order key is neither done, dead nor quarantined.  Sets
 * *found to 0 when nothing is due.  Runs in a relaxed transaction of its
 * own, or joins tx (a receiver claims the event it is recording).
 * Taking over an expired lease closes the attempt rows left open by the
 * earlier holders ("lease_expired").  Returns IH_OK or IH_ESTORE.
 */
int	store_claim(struct store *st, struct store_txn *tx,
	    const char *provider, int64_t rowid,
	    const char *owner, int64_t now_ms, int64_t lease_ms,
	    struct store_job *job, int *found, char *err, size_t errlen);
/*
 * store_claim() of the event rowid that tx has just recorded from bytes
 * the caller still holds: the payload is not read back (job->ev.payload
 * stays NULL; the caller points it at its bytes), so that a large event
 * is never held twice.
 */
int	store_claim_fresh(struct store *st, struct store_txn *tx,
	    const char *provider, int64_t rowid,
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
 * Records a local effect of kind for the claimed job inside tx; a second
 * identical effect is ignored.  Returns IH_OK, IH_EINVAL without a
 * transaction, or IH_ESTORE.
 */
int	store_effect(struct store *st, struct store_txn *tx,
	    const struct store_job *job,
	    const char *kind, int64_t now_ms, char *err, size_t errlen);

/*
 * Marks the job done.  Joins tx (so that the switch's effects and this
 * move commit together) or, with tx NULL, runs in a relaxed one of its
 * own.  Returns
 * IH_OK, IH_ENOTFOUND when owner no longer holds the lease (nothing is
 * changed), or IH_ESTORE.
 */
int	store_complete(struct store *st, struct store_txn *tx,
	    const struct store_job *job,
	    const char *owner, int64_t now_ms, char *err, size_t errlen);

/*
 * Marks the job failed with error, due again at next_ms, or dead when
 * dead is set.  Same transaction rules and returns as store_complete().
 */
int	store_fail(struct store *st, struct store_txn *tx,
	    const struct store_job *job,
	    const char *owner, const char *error, int64_t next_ms, int dead,
	    int64_t now_ms, char *err, size_t errlen);

/*
 * Renews the job's lease: it runs lease_ms from the moment the write lock
 * is held.  Called before each action, so that an event whose actions
 * together outlast one lease stays with its holder.  Returns IH_OK,
 * IH_ENOTFOUND when owner no longer holds the lease (nothing changes:
 * the caller must stop), or IH_ESTORE.  Joins an open transaction.
 */
int	store_renew(struct store *st, struct store_txn *tx,
	    const struct store_job *job,
	    const char *owner, int64_t lease_ms, char *err, size_t errlen);

/*
 * Closes the job's attempt row as "lease_lost", when the holder finds
 * that another process took the event over; a row already closed (by
 * the claim that took it over) is left as it is.  IH_OK or IH_ESTORE.
 */
int	store_attempt_lost(struct store *st, struct store_txn *tx,
	    const struct store_job *job,
	    int64_t now_ms, char *err, size_t errlen);

/*
 * Inline mode: deletes the claimed job's event, with its attempts and
 * effects, after a failed attempt, so that the provider's retry is
 * recorded afresh.  Returns IH_OK, IH_ENOTFOUND when owner no longer
 * holds the lease, or IH_ESTORE.
 */
int	store_forget(struct store *st, struct store_txn *tx,
	    const struct store_job *job,
	    const char *owner, char *err, size_t errlen);

void	store_job_free(struct store_job *job);

/*
 * Inside tx: records ev as store_record() does and,
 * when it is new, claims it for owner in the same insert (status
 * processing, attempt 1, a lease of lease_ms, its attempt row started),
 * filling *job except the payload, which stays NULL: the caller holds the
 * bytes it just recorded, and reading them back would copy them again.
 * A duplicate is not claimed (*job stays empty).  The order key is not
 * consulted: use store_claim() for an event that has one.  Returns IH_OK,
 * IH_EINVAL without a transaction, IH_ENOMEM or IH_ESTORE.
 */
int	store_record_claim(struct store *st, struct store_txn *tx,
	    const struct event *ev,
	    int64_t now_ms, const char *owner, int64_t lease_ms,
	    struct store_result *res, struct store_job *job, char *err,
	    size_t errlen);

/*
 * The operator's view (idemhook list, show, replay, purge, stats, check).
 * Every function below reads or changes events through the open store;
 * each change is one atomic statement, or a series of short ones, so the
 * receivers and workers may run meanwhile.
 */

/* Which events: every field set narrows the set; unset fields match all. */
struct store_filter {
	const char	*provider;	/* or NULL */
	const char	*account;	/* or NULL: every account */
	const char	*event_id;	/* or NULL */
	const char	*event_type;	/* or NULL: exact type */
	const char	*status;	/* or NULL */
	int64_t		 since_ms;	/* received_at >= this, when > 0 */
	int64_t		 until_ms;	/* received_at < this, when > 0 */
	long		 limit;		/* at most this many, when > 0 */
	int64_t		 after_rowid;	/* requeue: rows past it, when > 0 */
	long		 max_bytes;	/* requeue: payload cap, when > 0 */
	int		 needs_fetch;	/* list: only events waiting for */
					/* their fetch (store_thin.h) */
	/* list only: Stripe Connect's account (version 11), or NULL. */
	const char	*source_account;
};

/*
 * One event as the operator sees it.  Every pointer is borrowed from the
 * statement and valid only during the callback.  Times are Unix ms, 0
 * when unset.  headers and payload are filled by store_show() only.
 */
struct store_row {
	int64_t			 rowid;
	const char		*provider;
	const char		*account;	/* "default" or a name */
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
	const char		*fingerprint;	/* store_copy_read() only */
	const char		*api_version;	/* or NULL (version 7) */
	int			 needs_fetch;	/* waits for its fetch (v9) */
	/* Stripe Connect's account (version 11), or NULL. */
	const char		*source_account;
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
/* store_show() in one account (NULL: the default account). */
int	store_show_account(struct store *st, const char *provider,
	    const char *account, const char *event_id, store_row_fn fn,
	    void *arg, char *err, size_t errlen);

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
 * next attempt now, no lease, attempts counted from zero), and calls fn
 * for each.  Events being processed or already due are left alone.  The
 * change is made in batches, oldest first, each its own short durable
 * transaction of at most STORE_REQUEUE_ROWS events and (past its first)
 * STORE_REQUEUE_BYTES of payload in all, so that receivers never wait
 * long for the lock; a row a batch has passed is never taken again, so
 * each event is replayed once even when a worker finishes it meanwhile.
 * With
 * dry_run nothing changes (one read); fn sees what would.  *count is the
 * number of events, *batches (when not NULL) of transactions.  Returns
 * IH_OK, IH_ESTORE or what fn returned: the batch under way is then
 * rolled back, the ones before it stay, and *count says how many.
 */
#define STORE_REQUEUE_ROWS	500
#define STORE_REQUEUE_BYTES	(2L * 1024 * 1024)

int	store_requeue(struct store *st, const struct store_filter *f,
	    int dry_run, int64_t now_ms, store_row_fn fn, void *arg,
	    long *count, char *err, size_t errlen);
int	store_requeue_batches(struct store *st, const struct store_filter *f,
	    int dry_run, int64_t now_ms, store_row_fn fn, void *arg,
	    long *count, long *batches, char *err, size_t errlen);

/*
 * The rule a replay by filter (not of one event by id) must pass, the
 * same for idemhook replay and the console: a status is needed (done,
 * failed, dead or quarantined; never received or processing), and done
 * with no other narrowing filter (provider, type, since, until) needs
 * all, the operator's explicit "every done event".  A dry run is not
 * held to it.
 */
enum store_bulk {
	STORE_BULK_OK,
	STORE_BULK_NOT_REPLAYABLE,	/* status received or processing */
	STORE_BULK_NO_STATUS,		/* no status given */
	STORE_BULK_DONE_ALL		/* done, not narrowed, without all */
};

enum store_bulk	store_bulk_check(const struct store_filter *f, int all);
/* One sentence saying why, for a refusal. */
const char	*store_bulk_why(enum store_bulk b);

/*
 * Retention for one provider.  Payloads of done and quarantined events
 * (and dead ones with include_dead) received before payload_before_ms
 * are dropped (payload NULL, purged_at set); rows of such events both
 * received before payload_before_ms and last seen before row_before_ms
 * are deleted with their attempts and effects; with event_type set,
 * only events of that type (idemhook smoke --purge).  Rows in any other
 * status are never touched: a dead letter stays whole until it is
 * replayed.
 * Works in transactions of at most batch rows, so receivers wait for the
 * lock only briefly.  With dry_run only counts.
 */
struct store_purge {
	const char	*provider;
	const char	*account;	/* or NULL: every account */
	int64_t		 payload_before_ms;
	int64_t		 row_before_ms;	/* 0: never delete rows */
	long		 batch;
	int		 dry_run;
	int		 include_dead;	/* purge dead events like done ones */
	const char	*event_type;	/* or NULL: every type */
	long		 payloads;	/* out: payloads dropped */
	long		 rows;		/* out: rows deleted */
	long		 dead_kept;	/* out: dead events kept past cutoff */
};

int	store_purge(struct store *st, struct store_purge *p, char *err,
	    size_t errlen);

/*
 * Per-provider figures over events received in [since_ms, until_ms), one
 * set per account when by_account is set in store_stats_account().
 */
struct store_stats {
	char		 provider[64];
	char		 account[64];	/* "" unless by account */
	int64_t		 events;	/* first received in the window */
	int64_t		 duplicates;	/* their later deliveries */
	int64_t		 received, processing, done, failed, dead,
			 quarantined;	/* their status now */
	int64_t		 latency_n;	/* done events measured */
	int64_t		 latency_sum_ms;
	int64_t		 p50_ms, p95_ms, p99_ms;	/* -1 when none */
	int64_t		 oldest_pending_ms;	/* any time; 0 when none */
	/* At any time: received, processing or failed. */
	int64_t		 pending;
	/* At any time: held (never processed until released). */
	int64_t		 held;
	/*
	 * At any time, pending events waiting, by why: behind an unfinished
	 * earlier event of their order key (an object's, forward.h), or
	 * failed and due again later (and not behind one).
	 */
	int64_t		 wait_order, wait_retry;
	/*
	 * At any time, pending events due otherwise that their forwarding
	 * destination holds back (store_dest.h): paused (all but the probe),
	 * its concurrency's deliveries in flight, or its rate.  The
	 * destination's pause: 1 paused, 0 running, -1 none (not forwarded).
	 */
	int64_t		 wait_paused, wait_concurrency, wait_rate;
	int		 forward_paused;
	/*
	 * The attempts started in the window (a forwarded event's attempt
	 * is its delivery, with the switch after it): how many ended, and
	 * their durations' percentiles (nearest rank), -1 when none.
	 */
	int64_t		 attempt_n;
	int64_t		 attempt_p50_ms, attempt_p99_ms;
};

/*
 * Calls fn for each provider that has events in the window (or pending
 * ones), by name; provider NULL means all.  Returns IH_OK, IH_ESTORE or
 * what fn returned.
 */
int	store_stats(struct store *st, const char *provider, int64_t since_ms,
	    int64_t until_ms, int (*fn)(void *arg, const struct store_stats *s),
	    void *arg, char *err, size_t errlen);

/*
 * The backend's own health checks, for idemhook check: one call of fn per
 * finding.  SQLite: the journal mode (WAL), synchronous level and the
 * schema objects against this build's ("schema": sqlite_shape.h);
 * PostgreSQL: the server version, synchronous_commit, TLS and any
 * trigger or rule on idemhook's tables ("schema").  Values never hold a
 * password.  Returns IH_OK, IH_ESTORE or what fn returned.
 */
struct store_audit {
	const char	*name;		/* "journal_mode", "synchronous", ... */
	char		 value[128];	/* what was found */
	int		 ok;		/* 0: a problem, with advice */
	char		 advice[256];	/* "" when ok */
};

int	store_audit(struct store *st,
	    int (*fn)(void *arg, const struct store_audit *a), void *arg,
	    char *err, size_t errlen);

/*
 * Copying one store into another (idemhook copy), a batch at a time, so
 * that the source's receivers keep writing meanwhile.  Reading is done by
 * the SQLite backend, writing by the PostgreSQL backend; the other
 * combinations answer IH_EINVAL.
 */

/* Sets *events to the number of events in st. */
int	store_copy_count(struct store *st, int64_t *events, char *err,
	    size_t errlen);

/*
 * Calls fn for at most limit events with rowid > after, by rowid, with
 * their headers, payload and fingerprint.  Returns IH_OK, IH_ESTORE or
 * what fn returned.
 */
int	store_copy_read(struct store *st, int64_t after, long limit,
	    store_row_fn fn, void *arg, char *err, size_t errlen);

/* Calls fn for each effect (kind, created_at) of the event at rowid. */
int	store_effects(struct store *st, int64_t rowid,
	    int (*fn)(void *arg, const char *kind, int64_t created_at),
	    void *arg, char *err, size_t errlen);

/*
 * Inside tx: inserts row (all its columns) unless (provider, event_id) is
 * already there; *added says which.  An event already there is left as it
 * is, except that a finished source (done, dead, quarantined) finishes an
 * unfinished copy, so an event processed by the source after an earlier
 * copy is not processed again.  *rowid is the event's row in st.
 */
int	store_copy_put(struct store *st, struct store_txn *tx,
	    const struct store_row *row, int64_t *rowid, int *added, char *err,
	    size_t errlen);

/* Inside tx: the attempt or effect, unless already there (*added). */
int	store_copy_attempt(struct store *st, struct store_txn *tx,
	    int64_t rowid, const struct store_attempt *a, int *added,
	    char *err, size_t errlen);
int	store_copy_effect(struct store *st, struct store_txn *tx,
	    int64_t rowid, const char *kind, int64_t created_at, int *added,
	    char *err, size_t errlen);

/* Objects, their history and copying them: store_objects.h. */
#include "store_objects.h"

/* The backend's name: "sqlite" or "postgresql". */
const char *store_backend(const struct store *st);

#endif
