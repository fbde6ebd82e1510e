/*
 * sqlite_int.h -- the SQLite backend's own parts, shared by its files:
 * sqlite_conn.c (the connection), sqlite_exec.c (the helpers that run
 * statements and report failures), sqlite_stmt.c (the statement table),
 * sqlite_queue.c (the writers' queue), sqlite_schema.c (creation,
 * schema, migrations), sqlite_txn.c (transactions),
 * sqlite_audit.c (what check reports), sqlite_record.c (recording and
 * processing), sqlite_restore.c (restore, with sqlite_shape.c),
 * sqlite_payload.c (the payloads table), sqlite_query.c
 * (the operator's queries), sqlite_objects.c (the objects table) and
 * sqlite_console.c (the console's).
 */
#ifndef IH_SQLITE_INT_H
#define IH_SQLITE_INT_H

#include <sqlite3.h>
#include <time.h>

#include "sqlite_sync.h"
#include "store_backend.h"

/*
 * An event's payload, kept in a table of its own (version 6) so that a
 * status change never rewrites it; NULL once purged.  For statements on
 * events that name the table events (no alias).
 */
#define SQ_MANY_MAX	64	/* sq_record_many()'s most (store_many.c) */
#define SQ_PAYLOAD	"(SELECT payload FROM payloads WHERE event = events.id)"
#define SQ_PAYLOAD_LEN \
	"(SELECT length(payload) FROM payloads WHERE event = events.id)"
#define SQ_HAS_PAYLOAD \
	"EXISTS (SELECT 1 FROM payloads WHERE event = events.id)"

/*
 * The (provider, status) pairs present, as ps(p, s), read from
 * events_provider_status a seek each (a loose scan): a read of a window
 * of received_at searches that index pair by pair (version 16 dropped
 * the index on received_at alone, a page of every commit).  Join it
 * first (CROSS JOIN ps, events) so that each pair is one search.
 */
#define SQ_PAIRS \
	"WITH RECURSIVE pv(p) AS (SELECT min(provider) FROM events" \
	" UNION ALL SELECT (SELECT min(provider) FROM events" \
	" WHERE provider > pv.p) FROM pv WHERE pv.p IS NOT NULL)," \
	" ps(p, s) AS (SELECT p, (SELECT min(status) FROM events" \
	" WHERE provider = pv.p) FROM pv WHERE p IS NOT NULL" \
	" UNION ALL SELECT p, (SELECT min(status) FROM events" \
	" WHERE provider = ps.p AND status > ps.s) FROM ps" \
	" WHERE s IS NOT NULL) "

struct sq {
	struct store	 base;	/* first: the front's part */
	sqlite3		*db;
	int		 queuefd;	/* <path>-lock: writers queue on it */
	int		 queued;	/* this store holds the queue lock */
	long		 busy_timeout_ms;
	int64_t		 busy_start_ms;
	int		 distrusted;	/* code refused: sqlite_trust.h */
	sqlite3_stmt	*record;
	sqlite3_stmt	*record_dup;
	sqlite3_stmt	*record_payload;
	sqlite3_stmt	*payload_get;
	sqlite3_stmt	*begin;
	sqlite3_stmt	*commit;
	sqlite3_stmt	*rollback;
	sqlite3_stmt	*sp_begin;
	sqlite3_stmt	*sp_release;
	sqlite3_stmt	*sp_undo;
	sqlite3_stmt	*claim;
	sqlite3_stmt	*due;
	sqlite3_stmt	*due_any;
	sqlite3_stmt	*attempt_start;
	sqlite3_stmt	*attempt_first;
	sqlite3_stmt	*attempt_end;
	sqlite3_stmt	*complete;
	sqlite3_stmt	*done_check;
	sqlite3_stmt	*failed;
	sqlite3_stmt	*effect;
	sqlite3_stmt	*replay;
	sqlite3_stmt	*obj_key;
	sqlite3_stmt	*obj_put;
	sqlite3_stmt	*obj_hist;
	/* The event this connection's last record inserted and claimed. */
	int64_t		 fresh_claim;
	/*
	 * The event this transaction's last record inserted done
	 * (store_record_done()), which sq_complete() completes without a
	 * statement and sq_fail_job() turns to failed; 0 after any other.
	 */
	int64_t		 done_row;
	/*
	 * The events sq_record_many() inserted done in this transaction,
	 * which sq_complete() and sq_fail_job() treat as done_row.
	 */
	int64_t		 done_many[SQ_MANY_MAX];
	size_t		 ndone_many;
	int		 sync_durable;	/* the configured level: 2 or 1 */
	int		 sync_now;	/* the connection's level now */
	struct sqsync	*shared;	/* SHARED: the cross-process sync */
	int		 tx_shared;	/* this transaction waits on it */
	int		 wal_frames;	/* the log's length at our commit */
	int		 checkpoint_due; /* after leaving the writers' queue */
};

static inline struct sq *
sq_of(struct store *st)
{
	return (struct sq *)(void *)st;
}

/*
 * The forwarding destinations' hold on a claim (store_dest.h), for an
 * event e at the time now (an SQL expression): the deliveries in flight
 * to destination d (events processing under a live lease), and the
 * condition that holds e back: its destination's rate not come, paused
 * with a pending probe that is not e, or its in-flight deliveries at the
 * limit (one while paused).  No row in destinations: nothing is held.
 */
#define SQ_DEST_FLIGHT(now) \
	"(SELECT count(*) FROM events f WHERE f.provider = d.provider" \
	" AND f.status = 'processing' AND f.lease_until > " now \
	" AND (f.account = d.account OR (d.account = 'default'" \
	" AND NOT EXISTS (SELECT 1 FROM destinations o2" \
	" WHERE o2.provider = f.provider AND o2.account = f.account))))"
#define SQ_DEST_HOLD(now) \
	" NOT EXISTS (SELECT 1 FROM destinations d" \
	"  WHERE d.provider = e.provider AND d.account = CASE WHEN EXISTS" \
	"  (SELECT 1 FROM destinations o WHERE o.provider = e.provider" \
	"  AND o.account = e.account) THEN e.account ELSE 'default' END" \
	"  AND ((d.rate_ms > 0 AND d.next_at > " now ")" \
	"  OR (d.paused_at IS NOT NULL AND d.probe <> e.id AND EXISTS" \
	"  (SELECT 1 FROM events q WHERE q.id = d.probe" \
	"  AND q.status IN ('received', 'processing', 'failed')))" \
	"  OR " SQ_DEST_FLIGHT(now) " >= CASE WHEN d.paused_at IS NULL" \
	"  THEN d.concurrency ELSE 1 END))"

int	sq_fail(struct sq *, int, const char *, char *, size_t);
int	sq_exec(struct sq *, const char *, const char *, char *, size_t);
int	sq_prepare(struct sq *, const char *, sqlite3_stmt **, char *,
	    size_t);
/*
 * Prepares a statement that runs once (not kept), *stmt NULL on failure;
 * what names it in the error.  Defined in sqlite_console.c.
 */
int	sq_prepare_once(struct sq *, const char *, sqlite3_stmt **,
	    const char *, char *, size_t);
int	sq_step_done(struct sq *, sqlite3_stmt *, const char *, char *,
	    size_t);
/* Binds v to parameter i of s, as text, or NULL when v is NULL. */
void	sq_bind_text(sqlite3_stmt *, int, const char *);
/*
 * Steps a query: 1 with a row to read; 0 when there is none left (*rc
 * IH_OK) or the step failed (*rc the error, err filled with what).
 */
int	sq_row(struct sq *, sqlite3_stmt *, const char *, int *, char *,
	    size_t);

/*
 * sqlite_stmt.c: the statement in slot (a field of st), prepared when
 * first asked for; NULL with err filled when it cannot be (a schema that
 * does not match: loud at first use, and in idemhook check, which
 * prepares them all).  Every statement of struct sq, prepared or
 * finalized.
 */
sqlite3_stmt *sq_stmt(struct sq *, sqlite3_stmt **, char *, size_t);
int	sq_prepare_all(struct sq *, char *, size_t);
void	sq_finalize_all(struct sq *);

/* sqlite_queue.c */
/* SQLite's busy handler (arg the struct sq): waits, bounded. */
int	sq_busy_wait(void *, int);
/* Takes the writers' queue for a transaction, or leaves it. */
int	sq_queue_enter(struct sq *, char *, size_t);
void	sq_queue_leave(struct sq *);
void	sq_no_queue(struct store *);

/*
 * sqlite_conn.c: the checkpoint a commit inside the writers' queue found
 * due (the log past SQLite's auto-checkpoint length), run once the queue
 * is left; nothing when none is.
 */
void	sq_checkpoint_due(struct sq *);

/* sqlite_schema.c */
/* The store's folders (0700) and file (0600), never through a link. */
int	sq_make_parents(const char *, char *, size_t);
int	sq_make_file(const char *, char *, size_t);
/*
 * Brings db, a copy no other connection has open, to this build's schema
 * version (restore: before its schema is compared with this build's).
 */
int	sq_migrate_copy(sqlite3 *, char *, size_t);
/* WAL, the schema or its migrations, then the readiness check. */
int	sq_set_up(struct sq *, char *, size_t);

/* sqlite_txn.c */
int	sq_begin(struct store *, enum store_durability, char *, size_t);
int	sq_commit(struct store *, char *, size_t);
void	sq_rollback(struct store *);
int	sq_savepoint(struct store *, enum store_sp, char *, size_t);

/* sqlite_audit.c */
int	sq_audit(struct store *, int (*)(void *, const struct store_audit *),
	    void *, char *, size_t);

/* sqlite_payload.c */
/* Payloads past this many bytes go through SQLite's blob I/O. */
#define SQ_PAYLOAD_STREAM	(1024 * 1024)
int	sq_payload_put(struct sq *, const struct event *, int64_t,
	    char *, size_t);
int	sq_payload_get(struct sq *, struct store_job *, int64_t, char *,
	    size_t);

/* sqlite_thin.c */
int	sq_fetched(struct store *, const struct store_job *, const char *,
	    const unsigned char *, size_t, const char *, char *, size_t);

/* sqlite_version.c */
int	sq_release_held(struct store *, const struct event *, char *,
	    size_t);
int	sq_versions(struct store *, const char *, int64_t, int64_t,
	    int (*)(void *, const struct store_version_count *), void *,
	    char *, size_t);

/* sqlite_record.c */
int	sq_record(struct store *, const struct event *, int64_t,
	    const char *, int64_t, struct store_result *, char *, size_t);
int	sq_record_many(struct store *, const struct event *const *, size_t,
	    int64_t, const char *const *, const int *, int64_t,
	    struct store_result *, char *, size_t);
int	sq_attempt_start(struct store *, int64_t, int64_t, int64_t *, char *,
	    size_t);
int	sq_replay_of(struct store *, const struct event *, const char *,
	    int *, struct store_first *, char *, size_t);
int	sq_claim(struct store *, const char *, int64_t, const char *, int64_t,
	    int64_t, struct store_job *, int *, char *, size_t);
int	sq_effect(struct store *, const struct store_job *, const char *,
	    int64_t, char *, size_t);
int	sq_complete(struct store *, const struct store_job *, const char *,
	    int64_t, char *, size_t);
int	sq_fail_job(struct store *, const struct store_job *, const char *,
	    const char *, int64_t, int, int64_t, char *, size_t);
int	sq_renew(struct store *, const struct store_job *, const char *,
	    int64_t, char *, size_t);
int	sq_attempt_lost(struct store *, const struct store_job *, int64_t,
	    char *, size_t);
int	sq_forget(struct store *, const struct store_job *, const char *,
	    char *, size_t);
int	sq_due(struct store *, const char *, int64_t, int *, char *, size_t);

/* sqlite_query.c */
int	sq_requeue(struct store *, const struct store_filter *, int, int64_t,
	    store_row_fn, void *, long *, char *, size_t);
int	sq_list(struct store *, const struct store_filter *, store_row_fn,
	    void *, char *, size_t);
int	sq_show(struct store *, const char *, const char *,
	    const char *, store_row_fn,
	    void *, char *, size_t);
int	sq_kept(struct store *, int64_t, char **, char *, size_t);
int	sq_attempts(struct store *, int64_t,
	    int (*)(void *, const struct store_attempt *), void *, char *,
	    size_t);
int	sq_purge(struct store *, struct store_purge *, char *, size_t);
/* The destinations' state (sqlite_dest.c, store_dest.h). */
int	sq_dest_put(struct store *, const char *, const struct store_dest *,
	    struct store_dest_was *, char *, size_t);
int	sq_dest_prune(struct store *, const char *, const char *, char *,
	    size_t);
int	sq_dest_claimed(struct store *, const char *, const char *, int64_t,
	    char *, size_t);
int	sq_dest_ok(struct store *, const char *, const char *, int *, long *,
	    char *, size_t);
int	sq_dest_failed(struct store *, const char *, const char *, int64_t,
	    int64_t, long *, int *, char *, size_t);
int	sq_dest_state(struct store *, const char *, const char *, int64_t,
	    struct store_dest_state *, char *, size_t);
/* What an event waits behind (sqlite_waiting.c, store_waiting.h). */
int	sq_behind(struct store *, int64_t, char *, size_t, char *, size_t);
/* The waiting and attempt figures of x (sqlite_waiting.c). */
int	sq_stats_waiting(struct sq *, struct store_stats *, int64_t,
	    int64_t, char *, size_t);
int	sq_stats(struct store *, const char *, int64_t, int64_t,
	    int (*)(void *, const struct store_stats *), void *, char *,
	    size_t);
int	sq_copy_count(struct store *, int64_t *, char *, size_t);
int	sq_copy_read(struct store *, int64_t, long, store_row_fn, void *,
	    char *, size_t);
int	sq_effects(struct store *, int64_t,
	    int (*)(void *, const char *, int64_t), void *, char *, size_t);

/* sqlite_objects.c */
int	sq_object_apply(struct store *, const struct store_object *, int64_t,
	    int *, char *, size_t);
int	sq_objects(struct store *, const struct store_object_filter *,
	    store_object_fn, void *, char *, size_t);
int	sq_object_history(struct store *, const char *, const char *,
	    const char *,
	    const char *, int (*)(void *, const struct store_object_event *),
	    void *, char *, size_t);
/* sqlite_console.c */
int	sq_console_counts(struct store *, store_console_count_fn, void *,
	    char *, size_t);
int	sq_console_hours(struct store *, int64_t, int64_t,
	    int (*)(void *, int64_t, int64_t, int64_t, int64_t), void *,
	    char *, size_t);
int	sq_console_latency(struct store *, int64_t, int64_t, long,
	    int (*)(void *, int64_t, int64_t), void *, char *, size_t);
int	sq_console_size(struct store *, int64_t *, char *, size_t);
int	sq_console_bounds(struct store *, int *, int64_t *, int64_t *, char *,
	    size_t);
int	sq_console_window(struct store *, const struct store_console_query *,
	    int64_t, int64_t, long, store_row_fn, void *, char *, size_t);
int	sq_console_last_type(struct store *, const char *, const char *,
	    int64_t *, char *, size_t);
int	sq_console_last(struct store *, const char *, int64_t *, char *,
	    size_t);
int	sq_console_explain(struct store *, char *, size_t, char *, size_t);

/* sqlite_health.c */
int	sq_health_put(struct store *, const struct store_health *, char *,
	    size_t);
int	sq_health_list(struct store *,
	    int (*)(void *, const struct store_health *), void *, char *,
	    size_t);

/* sqlite_signin.c */
int	sq_signin_charge(struct store *, const char *, int64_t, int64_t, long,
	    struct store_signin *, char *, size_t);
int	sq_signin_refund(struct store *, const char *, int, char *, size_t);
int	sq_signin_prune(struct store *, int64_t, char *, size_t);

#endif
