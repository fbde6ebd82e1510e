/*
 * store_backend.h -- what a store backend provides (shared/store/ only).
 *
 * store.c owns transactions: a call given no transaction gets one of its
 * own there, so every write operation below runs inside an open
 * transaction of its backend.  Read-only operations (due, list, show,
 * attempts, stats, audit) and purge, which works in short batches of its
 * own, run outside one.  A backend's struct starts with struct store.
 * A new read-only query is one more member here and one function per
 * backend.
 */
#ifndef IH_STORE_BACKEND_H
#define IH_STORE_BACKEND_H

#include "store.h"
#include "store_version.h"
#include "store_console.h"
#include "store_dest.h"
#include "store_health.h"
#include "store_signin.h"

struct store_txn {
	struct store		*st;
	int			 open;
	enum store_durability	 d;
};

struct store_ops {
	const char	*name;
	void	(*close)(struct store *);
	void	(*no_queue)(struct store *);
	int	(*begin)(struct store *, enum store_durability, char *, size_t);
	int	(*commit)(struct store *, char *, size_t);
	void	(*rollback)(struct store *);
	int	(*savepoint)(struct store *, enum store_sp, char *, size_t);
	/* Writes, inside the open transaction. */
	int	(*record)(struct store *, const struct event *, int64_t,
		    const char *owner, int64_t lease_until,
		    struct store_result *, char *, size_t);
	/*
	 * Optional: the next begin may travel with the next statement that
	 * waits for an answer (its failure then that statement's), for a
	 * caller that can redo the transaction (store_begin_many()).
	 */
	void	(*defer_begin)(struct store *);
	/*
	 * Optional (NULL: one record at a time): n records at once, each
	 * new event claimed in its insert when its owner is set, with its
	 * first attempt started, and inserted done when done (NULL: none)
	 * says so, as store_record_done() would; any failure fails the
	 * transaction.
	 */
	int	(*record_many)(struct store *, const struct event *const *,
		    size_t, int64_t, const char *const *owners,
		    const int *done, int64_t lease_until,
		    struct store_result *, char *, size_t);
	/* Deletes a held event of ev's id (struct event's replaces_held). */
	int	(*release_held)(struct store *, const struct event *,
		    char *, size_t);
	int	(*attempt_start)(struct store *, int64_t rowid, int64_t now,
		    int64_t *seq, char *, size_t);
	int	(*replay_of)(struct store *, const struct event *,
		    const char *, int *, struct store_first *, char *,
		    size_t);
	int	(*claim)(struct store *, const char *, int64_t, const char *,
		    int64_t, int64_t, struct store_job *, int *, char *,
		    size_t);
	int	(*effect)(struct store *, const struct store_job *,
		    const char *, int64_t, char *, size_t);
	int	(*complete)(struct store *, const struct store_job *,
		    const char *, int64_t, char *, size_t);
	int	(*fail)(struct store *, const struct store_job *, const char *,
		    const char *, int64_t, int, int64_t, char *, size_t);
	int	(*renew)(struct store *, const struct store_job *,
		    const char *, int64_t, char *, size_t);
	int	(*attempt_lost)(struct store *, const struct store_job *,
		    int64_t, char *, size_t);
	int	(*forget)(struct store *, const struct store_job *,
		    const char *, char *, size_t);
	/* A thin event's fetched payload (store_thin.h), inside tx. */
	int	(*fetched)(struct store *, const struct store_job *,
		    const char *, const unsigned char *, size_t,
		    const char *, char *, size_t);
	/* Requeue: inside the transaction unless dry_run. */
	int	(*requeue)(struct store *, const struct store_filter *, int,
		    int64_t, store_row_fn, void *, long *, char *, size_t);
	/* Reads and purge, outside a transaction. */
	int	(*due)(struct store *, const char *, int64_t, int *, char *,
		    size_t);
	int	(*list)(struct store *, const struct store_filter *,
		    store_row_fn, void *, char *, size_t);
	int	(*show)(struct store *, const char *, const char *,
		    const char *, store_row_fn, void *, char *, size_t);
	/* The kept headers alone (store_kept.h). */
	int	(*kept)(struct store *, int64_t, char **, char *, size_t);
	/* The destinations' state (store_dest.h). */
	int	(*dest_put)(struct store *, const char *,
		    const struct store_dest *, struct store_dest_was *, char *,
		    size_t);
	int	(*dest_prune)(struct store *, const char *, const char *,
		    char *, size_t);
	int	(*dest_claimed)(struct store *, const char *, const char *,
		    int64_t, char *, size_t);
	int	(*dest_ok)(struct store *, const char *, const char *, int *,
		    long *, char *, size_t);
	int	(*dest_failed)(struct store *, const char *, const char *,
		    int64_t, int64_t, long *, int *, char *, size_t);
	int	(*dest_state)(struct store *, const char *, const char *,
		    int64_t, struct store_dest_state *, char *, size_t);
	/* What an event waits behind (store_waiting.h). */
	int	(*behind)(struct store *, int64_t, char *, size_t, char *,
		    size_t);
	int	(*attempts)(struct store *, int64_t,
		    int (*)(void *, const struct store_attempt *), void *,
		    char *, size_t);
	int	(*purge)(struct store *, struct store_purge *, char *, size_t);
	int	(*stats)(struct store *, const char *, int64_t, int64_t,
		    int (*)(void *, const struct store_stats *), void *,
		    char *, size_t);
	int	(*audit)(struct store *,
		    int (*)(void *, const struct store_audit *), void *,
		    char *, size_t);
	int	(*versions)(struct store *, const char *, int64_t, int64_t,
		    int (*)(void *, const struct store_version_count *),
		    void *, char *, size_t);
	/*
	 * The console's reads (store_console.h; sqlite_console.c and
	 * pg_console.c), each one statement outside a transaction.  hours
	 * calls its fn per hour present (its index from start, events
	 * received, their duplicates, those failed or dead); latency per
	 * done event, oldest first, at most max; window per event of
	 * q's filters with lo <= id < hi, newest first, at most limit;
	 * bounds sets *empty or the lowest and highest row id.
	 */
	int	(*console_counts)(struct store *, store_console_count_fn,
		    void *, char *, size_t);
	int	(*console_hours)(struct store *, int64_t start, int64_t end,
		    int (*)(void *, int64_t, int64_t, int64_t, int64_t),
		    void *, char *, size_t);
	int	(*console_latency)(struct store *, int64_t start, int64_t end,
		    long max, int (*)(void *, int64_t hour, int64_t ms),
		    void *, char *, size_t);
	int	(*console_size)(struct store *, int64_t *, char *, size_t);
	int	(*console_bounds)(struct store *, int *empty, int64_t *lo,
		    int64_t *hi, char *, size_t);
	int	(*console_window)(struct store *,
		    const struct store_console_query *, int64_t hi, int64_t lo,
		    long limit, store_row_fn, void *, char *, size_t);
	int	(*console_last)(struct store *, const char *, int64_t *,
		    char *, size_t);
	int	(*console_last_type)(struct store *, const char *,
		    const char *, int64_t *, char *, size_t);
	int	(*console_explain)(struct store *, char *, size_t, char *,
		    size_t);
	/*
	 * The console's sign-in budgets (store_signin.h), each one
	 * statement in autocommit, outside a transaction.
	 */
	int	(*signin_charge)(struct store *, const char *, int64_t,
		    int64_t, long, struct store_signin *, char *, size_t);
	int	(*signin_refund)(struct store *, const char *, int, char *,
		    size_t);
	int	(*signin_prune)(struct store *, int64_t, char *, size_t);
	/* Copying (NULL where the backend does not take that side). */
	int	(*copy_count)(struct store *, int64_t *, char *, size_t);
	int	(*copy_read)(struct store *, int64_t, long, store_row_fn,
		    void *, char *, size_t);
	int	(*effects)(struct store *, int64_t,
		    int (*)(void *, const char *, int64_t), void *, char *,
		    size_t);
	int	(*copy_put)(struct store *, const struct store_row *,
		    int64_t *, int *, char *, size_t);
	int	(*copy_attempt)(struct store *, int64_t,
		    const struct store_attempt *, int *, char *, size_t);
	int	(*copy_effect)(struct store *, int64_t, const char *, int64_t,
		    int *, char *, size_t);
	/* Objects: apply inside the open transaction; reads outside. */
	int	(*object_apply)(struct store *, const struct store_object *,
		    int64_t, int *, char *, size_t);
	int	(*objects)(struct store *, const struct store_object_filter *,
		    store_object_fn, void *, char *, size_t);
	int	(*object_history)(struct store *, const char *, const char *,
		    const char *, const char *,
		    int (*)(void *, const struct store_object_event *),
		    void *, char *, size_t);
	int	(*copy_object)(struct store *, const struct store_object *,
		    int *, char *, size_t);
	int	(*copy_object_event)(struct store *,
		    const struct store_object *,
		    const struct store_object_event *, int *, char *, size_t);
	/*
	 * Endpoint health and refused signatures (store_health.h), each
	 * one statement in autocommit; sigfails_* (the table sigfails)
	 * NULL on SQLite.
	 */
	int	(*health_put)(struct store *, const struct store_health *,
		    char *, size_t);
	int	(*health_list)(struct store *,
		    int (*)(void *, const struct store_health *), void *,
		    char *, size_t);
	int	(*sigfails_add)(struct store *, const char *, int64_t minute,
		    long count, int64_t prune_before, char *, size_t);
	int	(*sigfails_count)(struct store *, const char *, int64_t,
		    int64_t, long *, int64_t *, char *, size_t);
	int	(*sigfails_sums)(struct store *, int64_t, int64_t, int64_t,
		    store_sigfail_fn, void *, char *, size_t);
};

/* The part of every backend's store that store.c reads. */
struct store {
	const struct store_ops	*ops;
	struct store_txn	 tx;
	/* Which events claims take (store_thin.h): STORE_FETCH_*. */
	int			 fetch;
	/*
	 * 1 while store_claim_fresh() runs: the claim leaves the payload
	 * unread (job->ev.payload NULL), its caller holding those bytes.
	 */
	int			 bare;
	/*
	 * 1 while store_record_done() runs: a backend that can records the
	 * claimed event as done, its switch following in the transaction.
	 */
	int			 as_done;
};

/*
 * Gives the text columns a backend read as NULL their defaults: "" for
 * provider, event_id, event_type and status, "{}" for json.  Every
 * backend's row decoding ends with it, so callers never see NULL there.
 */
void	store_row_defaults(struct store_row *row);

/*
 * Points job->ev's provider, ids, type and subtype (each may be NULL) at
 * the job's own copies, for a claim.  Returns IH_OK or IH_ENOMEM; either
 * way store_job_free() frees what was copied.
 */
int	store_job_set(struct store_job *job, const char *provider,
	    const char *event_id, const char *event_type, const char *subtype);
/* The job's own copy of its account (NULL: "default"), as above. */
int	store_job_account(struct store_job *job, const char *account);

/*
 * The ordering guard's verdict for o against the row's key (row NULL:
 * no row yet); see object_guard().  Both backends decide it in C, under
 * their own lock of the row.
 */
struct object_key;
int	store_object_verdict(const struct object_key *row,
	    const struct store_object *o);

/*
 * Appends "name: line" and a newline to buf (len bytes, *used of them
 * used), one line of a backend's console_explain; IH_ETOOBIG, and buf
 * as it was, when it does not fit.
 */
int	store_plan_line(char *buf, size_t len, size_t *used, const char *name,
	    const char *line);

/*
 * Refuses a store whose schema version is newer than this build's:
 * IH_ECONFIG with the reason in err, else IH_OK.  Both backends' set-up
 * asks it before migrating.
 */
int	store_schema_newer(int version, char *err, size_t errlen);

int	store_sqlite_open(const struct store_opts *, struct store **, char *,
	    size_t);
int	store_pg_open(const struct store_opts *, struct store **, char *,
	    size_t);

#endif
