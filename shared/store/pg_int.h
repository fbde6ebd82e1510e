/*
 * pg_int.h -- the PostgreSQL backend's own parts, shared by its files:
 * pg_conn.c (connection, reconnection, schema, transactions, audit),
 * pg_stmt.c (the statements prepared once per connection),
 * pg_wait.c (timeouts: every wait on the server bounded), pg_audit.c
 * (what idemhook check reports),
 * pg_record.c (recording and processing), pg_query.c (the operator's
 * queries), pg_objects.c (the objects table) and pg_console.c (the
 * console's).
 */
#ifndef IH_PG_INT_H
#define IH_PG_INT_H

#include <libpq-fe.h>

#include "pg_dl.h"
#include "store_backend.h"

/* The statements prepared once per connection (pg_stmt.c's table). */
enum pg_stmt {
	PG_RECORD,
	PG_CLAIM,
	PG_DUE,
	PG_ATTEMPT_START,
	PG_UNDONE,
	PG_ATTEMPT_END,
	PG_COMPLETE,
	PG_FAILED,
	PG_EFFECT,
	PG_REPLAY,
	PG_RENEW,
	PG_STALE,
	PG_LOST,
	PG_FORGET,
	PG_COMPLETE_OWN,
	PG_OBJECT_TAKE,
	PG_OBJECT_KEY,
	PG_OBJECT_SET,
	PG_OBJECT_SET_HIST,
	PG_HISTORY,
	PG_NSTMT
};

/*
 * Leases are set and compared on the server's clock (transaction start),
 * never a host's: hosts whose clocks disagree would otherwise take over
 * each other's live leases.
 */
#define PG_NOW_MS	"(extract(epoch FROM now()) * 1000)::bigint"

/*
 * An event's payload, kept in a table of its own (version 6) so that a
 * status change never rewrites it; NULL once purged.  For statements on
 * events that name the table events (no alias).
 */
#define PG_PAYLOAD	"(SELECT payload FROM payloads WHERE event = events.id)"
#define PG_PAYLOAD_LEN	"(SELECT octet_length(payload) FROM payloads" \
	" WHERE event = events.id)"
#define PG_HAS_PAYLOAD \
	"EXISTS (SELECT 1 FROM payloads WHERE event = events.id)"
/* A payload larger than this is read back in slices (pg_payload.c). */
#define PG_PAYLOAD_STREAM	(1024 * 1024)

#define PG_OWN_MAX	64	/* a batch's events (batch.h) */
#define PG_MANY_MAX	64	/* pg_record_many's at most */

struct pgs {
	struct store		 base;	/* first: the front's part */
	PGconn			*conn;
	char			*uri;
	enum store_durability	 durable_as;
	long			 busy_timeout_ms;	/* lock_timeout */
	int			 ready;	/* connected, statements prepared */
	/* pg_wait.c: the deadline of one round trip (0: none). */
	long			 wait_ms;
	int			 silent;	/* the last call timed out */
	/* Deferred statements sent in pipeline mode, answers unread. */
	int			 npend;
	/* The event the last record inserted claimed, else 0 (pg_record.c). */
	int64_t			 fresh_claim;
	/*
	 * The events this transaction inserted claimed and started, not yet
	 * completed: their done needs no lease check's answer.
	 */
	int64_t			 own[PG_OWN_MAX];
	/* 1: own[i] was inserted done (store_record_done()). */
	char			 own_done[PG_OWN_MAX];
	int			 nown;
	/* The event the last record inserted done, else 0. */
	int64_t			 fresh_done;
	/* The next BEGIN is deferred (pg_conn.c, store_begin_many()). */
	int			 lazy_begin;
	/* 1: pg_exec_sql's answer in binary (pg_payload.c's slices). */
	int			 binary;
	char			 why[160];	/* why there is no conn */
};

#define PG_MAXP	24

/* A statement's parameters, in text form except bytea. */
struct pg_params {
	const char	*v[PG_MAXP];
	int		 len[PG_MAXP];
	int		 fmt[PG_MAXP];
	char		 num[PG_MAXP][24];
	int		 n;
};

static inline struct pgs *
pg_of(struct store *st)
{
	return (struct pgs *)(void *)st;
}

/*
 * The forwarding destinations' hold on a claim (store_dest.h), for an
 * event e at the time now (an SQL expression for the rate; leases on
 * the server's clock): the deliveries in flight to destination d
 * (events processing under a live lease), and the
 * condition that holds e back: its destination's rate not come, paused
 * with a pending probe that is not e, or its in-flight deliveries at the
 * limit (one while paused).  No row in destinations: nothing is held.
 */
#define PG_DEST_FLIGHT(now) \
	"(SELECT count(*) FROM events f WHERE f.provider = d.provider" \
	" AND f.status = 'processing' AND f.lease_until > " PG_NOW_MS \
	" AND (f.account = d.account OR (d.account = 'default'" \
	" AND NOT EXISTS (SELECT 1 FROM destinations o2" \
	" WHERE o2.provider = f.provider AND o2.account = f.account))))"
#define PG_DEST_HOLD(now) \
	" NOT EXISTS (SELECT 1 FROM destinations d" \
	"  WHERE d.provider = e.provider AND d.account = CASE WHEN EXISTS" \
	"  (SELECT 1 FROM destinations o WHERE o.provider = e.provider" \
	"  AND o.account = e.account) THEN e.account ELSE 'default' END" \
	"  AND ((d.rate_ms > 0 AND d.next_at > " now ")" \
	"  OR (d.paused_at IS NOT NULL AND d.probe <> e.id AND EXISTS" \
	"  (SELECT 1 FROM events q WHERE q.id = d.probe" \
	"  AND q.status IN ('received', 'processing', 'failed')))" \
	"  OR " PG_DEST_FLIGHT(now) " >= CASE WHEN d.paused_at IS NULL" \
	"  THEN d.concurrency ELSE 1 END))"

void	pg_text(struct pg_params *, const char *);
void	pg_int(struct pg_params *, int64_t);
void	pg_bytes(struct pg_params *, const void *, size_t);
/* Converts "bcdt..." into PostgreSQL type oids (text, int8, bytea). */
void	pg_types(const char *, unsigned int *, int *);

/*
 * Says the failure of res (or of the connection) in err, frees res, and
 * marks a broken connection to be reopened (pg_wait.c).  IH_ESTORE.
 */
int	pg_fail(struct pgs *, PGresult *, const char *, char *, size_t);
int	pg_ensure(struct pgs *, char *, size_t);
/* Prepares every statement of enum pg_stmt on st's connection. */
int	pg_prepare_all(struct pgs *, char *, size_t);
/* Runs a prepared statement; NULL result on failure (err filled). */
PGresult *pg_exec_stmt(struct pgs *, enum pg_stmt, const struct pg_params *,
	    ExecStatusType, const char *, char *, size_t);
/*
 * Deferred (pg_wait.c): sends a prepared statement, or sql with types,
 * whose answer is read with the next statement's; IH_OK, or IH_ESTORE
 * when it could not be sent.  For writes whose answer is only an error.
 */
int	pg_defer_stmt(struct pgs *, enum pg_stmt, const struct pg_params *,
	    const char *, char *, size_t);
int	pg_defer_sql(struct pgs *, const char *, const char *,
	    const struct pg_params *, const char *, char *, size_t);
/*
 * Reads the len bytes of rowid's payload in slices into *out (malloc'd,
 * NUL-terminated, *outlen bytes): IH_OK, IH_ENOMEM or IH_ESTORE.
 */
int	pg_payload_read(struct pgs *, int64_t, int64_t, unsigned char **,
	    size_t *, char *, size_t);
/*
 * Writes the payloads row of the new event rowid, len bytes of b larger
 * than PG_PAYLOAD_STREAM, in slices (PG_RECORD leaves it out); inside
 * the recording transaction.  IH_OK or IH_ESTORE.
 */
int	pg_payload_write(struct pgs *, int64_t, const unsigned char *, size_t,
	    char *, size_t);
/* Runs sql with types (see pg_types) once, unprepared. */
PGresult *pg_exec_sql(struct pgs *, const char *, const char *,
	    const struct pg_params *, ExecStatusType, const char *, char *,
	    size_t);
/*
 * Runs sql, a statement that writes (pg_exec_sql's arguments); *n is the
 * number of rows it changed, 0 on failure.
 */
int	pg_exec_change(struct pgs *, const char *, const char *,
	    const struct pg_params *, const char *, long *, char *, size_t);
/*
 * Runs sql, a query (pg_exec_sql's arguments), and hands its rows in
 * order to row(arg, result, i) until one returns other than IH_OK.
 * Returns that, IH_ESTORE when the query failed, else IH_OK.
 */
typedef int (*pg_row_fn)(void *, const PGresult *, int);
int	pg_each(struct pgs *, const char *, const char *,
	    const struct pg_params *, const char *, pg_row_fn, void *, char *,
	    size_t);
int64_t	pg_getint(const PGresult *, int, int);
const char *pg_gettext(const PGresult *, int, int);
long	pg_changes(const PGresult *);

/*
 * pg_wait.c: opens st->conn with the default timeouts (NULL conn and
 * IH_ESTORE on failure), and the round trips with their deadline: each
 * returns what PQexec would, or NULL when the server was silent (its
 * connection dropped) or there is no connection; st->why then says so.
 */
int	pg_connect(struct pgs *, char *, size_t);
PGresult *pg_wait_exec(struct pgs *, const char *);
PGresult *pg_wait_prepared(struct pgs *, const char *, int,
	    const char *const *, const int *, const int *);
PGresult *pg_wait_params(struct pgs *, const char *, int,
	    const unsigned int *, const char *const *, const int *,
	    const int *);
PGresult *pg_wait_prepare(struct pgs *, const char *, const char *, int,
	    const unsigned int *);
/*
 * Deferred statements (pipeline mode): sent now, their answers read by
 * the next pg_wait_* call, which answers with a deferred one's failure
 * if there is one.  Each returns 1 sent, 0 not (no connection).
 * pg_wait_pending reads the deferred answers alone.
 */
int	pg_defer_prepared(struct pgs *, const char *, int, const char *const *,
	    const int *, const int *);
int	pg_defer_params(struct pgs *, const char *, int, const unsigned int *,
	    const char *const *, const int *, const int *);
PGresult *pg_wait_pending(struct pgs *);
/*
 * As pg_wait_pending, but the answers of the last n deferred statements
 * go to keep[0..n) (the caller frees each): NULL when the server was
 * silent or the connection broke, else a deferred one's failure or an
 * empty PGRES_COMMAND_OK result.
 */
PGresult *pg_wait_kept(struct pgs *, int, PGresult **);

/* pg_audit.c: store_audit()'s findings, TLS and timeouts included. */
int	pg_audit(struct store *, int (*)(void *, const struct store_audit *),
	    void *, char *, size_t);

/* pg_thin.c */
int	pg_fetched(struct store *, const struct store_job *, const char *,
	    const unsigned char *, size_t, const char *, char *, size_t);

/* pg_version.c */
int	pg_release_held(struct store *, const struct event *, char *,
	    size_t);
int	pg_versions(struct store *, const char *, int64_t, int64_t,
	    int (*)(void *, const struct store_version_count *), void *,
	    char *, size_t);

/* pg_record.c */
int	pg_record(struct store *, const struct event *, int64_t,
	    const char *, int64_t, struct store_result *, char *, size_t);
int	pg_attempt_start(struct store *, int64_t, int64_t, int64_t *, char *,
	    size_t);
int	pg_record_many(struct store *, const struct event *const *, size_t,
	    int64_t, const char *const *, const int *, int64_t,
	    struct store_result *, char *, size_t);
int	pg_replay_of(struct store *, const struct event *, const char *,
	    int *, struct store_first *, char *, size_t);
int	pg_claim(struct store *, const char *, int64_t, const char *, int64_t,
	    int64_t, struct store_job *, int *, char *, size_t);
int	pg_effect(struct store *, const struct store_job *, const char *,
	    int64_t, char *, size_t);
int	pg_complete(struct store *, const struct store_job *, const char *,
	    int64_t, char *, size_t);
int	pg_fail_job(struct store *, const struct store_job *, const char *,
	    const char *, int64_t, int, int64_t, char *, size_t);
int	pg_renew(struct store *, const struct store_job *, const char *,
	    int64_t, char *, size_t);
int	pg_attempt_lost(struct store *, const struct store_job *, int64_t,
	    char *, size_t);
int	pg_forget(struct store *, const struct store_job *, const char *,
	    char *, size_t);
int	pg_due(struct store *, const char *, int64_t, int *, char *, size_t);

/* pg_query.c */
int	pg_requeue(struct store *, const struct store_filter *, int, int64_t,
	    store_row_fn, void *, long *, char *, size_t);
int	pg_list(struct store *, const struct store_filter *, store_row_fn,
	    void *, char *, size_t);
int	pg_show(struct store *, const char *, const char *,
	    const char *, store_row_fn,
	    void *, char *, size_t);
int	pg_kept(struct store *, int64_t, char **, char *, size_t);
int	pg_attempts(struct store *, int64_t,
	    int (*)(void *, const struct store_attempt *), void *, char *,
	    size_t);
int	pg_purge(struct store *, struct store_purge *, char *, size_t);
/* The destinations' state (pg_dest.c, store_dest.h). */
int	pg_dest_put(struct store *, const char *, const struct store_dest *,
	    struct store_dest_was *, char *, size_t);
int	pg_dest_prune(struct store *, const char *, const char *, char *,
	    size_t);
int	pg_dest_claimed(struct store *, const char *, const char *, int64_t,
	    char *, size_t);
int	pg_dest_ok(struct store *, const char *, const char *, int *, long *,
	    char *, size_t);
int	pg_dest_failed(struct store *, const char *, const char *, int64_t,
	    int64_t, long *, int *, char *, size_t);
int	pg_dest_state(struct store *, const char *, const char *, int64_t,
	    struct store_dest_state *, char *, size_t);
/* What an event waits behind (pg_waiting.c, store_waiting.h). */
int	pg_behind(struct store *, int64_t, char *, size_t, char *, size_t);
/* The waiting and attempt figures of x (pg_waiting.c). */
int	pg_stats_waiting(struct pgs *, struct store_stats *, int64_t,
	    int64_t, char *, size_t);
int	pg_stats(struct store *, const char *, int64_t, int64_t,
	    int (*)(void *, const struct store_stats *), void *, char *,
	    size_t);
int	pg_copy_put(struct store *, const struct store_row *, int64_t *,
	    int *, char *, size_t);
int	pg_copy_attempt(struct store *, int64_t, const struct store_attempt *,
	    int *, char *, size_t);
int	pg_copy_effect(struct store *, int64_t, const char *, int64_t, int *,
	    char *, size_t);

/* pg_objects.c */
int	pg_object_apply(struct store *, const struct store_object *, int64_t,
	    int *, char *, size_t);
int	pg_objects(struct store *, const struct store_object_filter *,
	    store_object_fn, void *, char *, size_t);
int	pg_copy_object(struct store *, const struct store_object *, int *,
	    char *, size_t);
int	pg_copy_object_event(struct store *, const struct store_object *,
	    const struct store_object_event *, int *, char *, size_t);
int	pg_object_history(struct store *, const char *, const char *,
	    const char *,
	    const char *, int (*)(void *, const struct store_object_event *),
	    void *, char *, size_t);
/* pg_console.c */
int	pg_console_counts(struct store *, store_console_count_fn, void *,
	    char *, size_t);
int	pg_console_hours(struct store *, int64_t, int64_t,
	    int (*)(void *, int64_t, int64_t, int64_t, int64_t), void *,
	    char *, size_t);
int	pg_console_latency(struct store *, int64_t, int64_t, long,
	    int (*)(void *, int64_t, int64_t), void *, char *, size_t);
int	pg_console_size(struct store *, int64_t *, char *, size_t);
int	pg_console_bounds(struct store *, int *, int64_t *, int64_t *, char *,
	    size_t);
int	pg_console_window(struct store *, const struct store_console_query *,
	    int64_t, int64_t, long, store_row_fn, void *, char *, size_t);
int	pg_console_last_type(struct store *, const char *, const char *,
	    int64_t *, char *, size_t);
int	pg_console_last(struct store *, const char *, int64_t *, char *,
	    size_t);
int	pg_console_explain(struct store *, char *, size_t, char *, size_t);

/* pg_health.c */
int	pg_health_put(struct store *, const struct store_health *, char *,
	    size_t);
int	pg_health_list(struct store *,
	    int (*)(void *, const struct store_health *), void *, char *,
	    size_t);
int	pg_sigfail_note(struct store *, const char *, int64_t, long,
	    int64_t, char *, size_t);
int	pg_sigfail_count(struct store *, const char *, int64_t, int64_t,
	    long *, int64_t *, char *, size_t);
int	pg_sigfail_sums(struct store *, int64_t, int64_t, int64_t,
	    store_sigfail_fn, void *, char *, size_t);

/* pg_signin.c */
int	pg_signin_charge(struct store *, const char *, int64_t, int64_t, long,
	    struct store_signin *, char *, size_t);
int	pg_signin_refund(struct store *, const char *, int, char *, size_t);
int	pg_signin_prune(struct store *, int64_t, char *, size_t);

#endif
