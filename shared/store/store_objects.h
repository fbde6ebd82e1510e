/*
 * store_objects.h -- the store's contract for objects: the current state
 * of each provider object and the events that touched it (store.h
 * includes it; the backends implement it in sqlite_objects.c and
 * pg_objects.c).
 *
 * Ownership: the callbacks get pointers valid during the call only; what
 * the caller passes in stays the caller's.  Limits: a filter's limit and
 * max_bytes bound a walk.  Failure: IH_ESTORE with text in err (never
 * payload bytes), IH_EINVAL for a call that needs a transaction without
 * one.
 */
#ifndef IH_STORE_OBJECTS_H
#define IH_STORE_OBJECTS_H

#include <stdint.h>

struct store;
struct store_txn;

/*
 * Objects (version 4): the current state of each provider object that
 * the switches map events to, keyed by (provider, kind, object_id),
 * under the ordering guard of object.h, and the history of the events
 * that touched each.  Neither is ever purged with the events.
 */
struct store_object {
	const char	*provider;
	const char	*account;	/* NULL: "default" (account.h) */
	const char	*kind;
	const char	*object_id;
	const char	*status;	/* "" when the object has none */
	const char	*json;		/* the object's JSON, or NULL */
	size_t		 json_len;
	int64_t		 source_ms;	/* the provider's time for the state */
	int		 rank;		/* the tie-break (object.h) */
	const char	*event_id;	/* the event that set it */
	const char	*event_type;	/* store_object_apply() only */
	int		 deleted;	/* a tombstone */
	int64_t		 created_ms;	/* reads only: first seen */
	int64_t		 changed_ms;	/* reads only: last applied */
};

/*
 * Inside tx (IH_EINVAL without one): applies o to its row under the
 * guard (object_guard()): the row takes o's state when it is new or o's
 * key is newer than the row's, else stays as it was.  Either way the
 * event joins the object's history with its verdict (OBJECT_APPLIED,
 * OBJECT_STALE or OBJECT_TIED) in *verdict; an event already in the
 * history keeps its first verdict.  Returns IH_OK or IH_ESTORE.
 */
int	store_object_apply(struct store *st, struct store_txn *tx,
	    const struct store_object *o, int64_t now_ms, int *verdict,
	    char *err, size_t errlen);

/* Which objects: each field set narrows the set. */
struct store_object_filter {
	const char	*provider;	/* or NULL */
	const char	*account;	/* or NULL: every account */
	const char	*kind;		/* or NULL */
	const char	*object_id;	/* or NULL */
	const char	*status;	/* or NULL */
	int64_t		 since_ms;	/* changed_at >= this, when > 0 */
	long		 limit;		/* at most this many, when > 0 */
	int64_t		 after_rowid;	/* requeue: rows past it, when > 0 */
	long		 max_bytes;	/* requeue: payload cap, when > 0 */
};

typedef int (*store_object_fn)(void *arg, const struct store_object *o);

/*
 * Calls fn for each object matching f, by provider, kind and id, with
 * pointers valid during the call only.  Returns IH_OK, IH_ESTORE or
 * what fn returned.
 */
int	store_objects(struct store *st, const struct store_object_filter *f,
	    store_object_fn fn, void *arg, char *err, size_t errlen);

/* One event in an object's history, borrowed for the callback. */
struct store_object_event {
	const char	*event_id;
	const char	*event_type;
	const char	*status;
	int64_t		 source_ms;
	int		 rank;
	int		 deleted;
	const char	*verdict;	/* "applied", "stale" or "tied" */
	int64_t		 recorded_ms;
};

/*
 * Calls fn for each event that touched (provider, kind, object_id), in
 * the order they were processed.  Returns IH_OK, IH_ESTORE or what fn
 * returned.
 */
int	store_object_history(struct store *st, const char *provider,
	    const char *account, const char *kind, const char *object_id,
	    int (*fn)(void *arg, const struct store_object_event *e),
	    void *arg, char *err, size_t errlen);

/*
 * Copying objects (idemhook copy; the PostgreSQL backend writes), inside
 * tx.  store_copy_object() brings the row to o's state, with o's
 * created and changed times, under the guard: a row already newer there
 * stays, so copying twice, or after the destination's receivers have
 * applied newer events, changes nothing; *added is 1 when it wrote.
 * store_copy_object_event() adds e to o's history unless the event is
 * there (*added), after the history already there.
 */
int	store_copy_object(struct store *st, struct store_txn *tx,
	    const struct store_object *o, int *added, char *err,
	    size_t errlen);
int	store_copy_object_event(struct store *st, struct store_txn *tx,
	    const struct store_object *o, const struct store_object_event *e,
	    int *added, char *err, size_t errlen);

#endif
