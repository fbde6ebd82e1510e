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

#define STORE_SCHEMA_VERSION	1
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
 * Records ev at time now_ms.  Outside a transaction it runs in its own
 * (BEGIN IMMEDIATE ... COMMIT) and returns only once that commit is
 * durable; inside store_begin() it joins the open transaction.  Returns
 * IH_OK with *res filled, IH_EINVAL for a missing field, or IH_ESTORE
 * with the cause in err; on failure nothing is recorded.
 */
int	store_record(struct store *st, const struct store_event *ev,
	    int64_t now_ms, struct store_result *res, char *err,
	    size_t errlen);

/* Opens a write transaction (BEGIN IMMEDIATE).  IH_OK or IH_ESTORE. */
int	store_begin(struct store *st, char *err, size_t errlen);
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
	long		 attempt;	/* 1 for the first */
	int64_t		 received_at;
};

/*
 * Claims one due event for owner, with a lease of lease_ms: the one at
 * rowid when rowid > 0, else the oldest due event of provider (any
 * provider when NULL).  Due means received, failed with its time come, or
 * processing with an expired lease; an event waits while an older event
 * with the same order key is neither done, dead nor quarantined.  Sets
 * *found to 0 when nothing is due.  Runs in its own transaction.
 * Returns IH_OK or IH_ESTORE.
 */
int	store_claim(struct store *st, const char *provider, int64_t rowid,
	    const char *owner, int64_t now_ms, int64_t lease_ms,
	    struct store_job *job, int *found, char *err, size_t errlen);

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

void	store_job_free(struct store_job *job);

/* Returns the current time in Unix milliseconds. */
int64_t	store_now_ms(void);

#endif
