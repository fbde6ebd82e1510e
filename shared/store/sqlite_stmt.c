/*
 * sqlite_stmt.c -- SQLite: every statement prepared once per connection,
 * in one table, and their preparing and finalizing.  Each is prepared
 * when first used: a plain CGI delivery, which opens the store for one
 * event, prepares only the statements that event needs.
 */
#include <stddef.h>
#include <stdio.h>

#include <sqlite3.h>

#include "ih.h"
#include "sqlite_int.h"

/*
 * What is due, for a claim (?1 provider or NULL, ?2 rowid or 0, ?4 now):
 * received, failed with its time come, or processing with an expired
 * lease; and not behind an unfinished older event of its order key, nor
 * held back by its forwarding destination (store_dest.h); and
 * as ?6 (the store's fetch mode, store_thin.h) says of thin events.  The
 * status term repeats the partial index's WHERE so that the index serves
 * the search.
 */
#define STORE_DUE_SQL \
	" e.status IN ('received', 'processing', 'failed')" \
	" AND (?1 IS NULL OR e.provider = ?1)" \
	" AND (?2 = 0 OR e.id = ?2)" \
	" AND (e.status = 'received'" \
	"  OR (e.status = 'failed' AND e.next_attempt_at <= ?4)" \
	"  OR (e.status = 'processing' AND e.lease_until <= ?4))" \
	" AND (e.order_key IS NULL OR NOT EXISTS (SELECT 1 FROM events p" \
	"  WHERE p.provider = e.provider AND p.account = e.account" \
	"  AND p.order_key = e.order_key" \
	"  AND p.id < e.id" \
	"  AND p.status NOT IN ('done', 'dead', 'quarantined')))" \
	" AND CASE ?6 WHEN 0 THEN e.needs_fetch = 0" \
	"  WHEN 2 THEN e.needs_fetch <> 0 ELSE 1 END" \
	" AND" SQ_DEST_HOLD("?4")

/*
 * The record, its claim, the first attempt and an object's history avoid
 * RETURNING and INSERT ... SELECT from the table written: SQLite runs
 * either through a temporary b-tree built for each execution, about as
 * much work as the row itself (make bench-pages).
 */

/* The statements prepared once per connection, in struct order. */
static const struct {
	size_t		 off;
	const char	*sql;
} store_sql[] = {
	{ offsetof(struct sq, begin), "BEGIN IMMEDIATE" },
	{ offsetof(struct sq, commit), "COMMIT" },
	{ offsetof(struct sq, rollback), "ROLLBACK" },
	{ offsetof(struct sq, sp_begin), "SAVEPOINT ih" },
	{ offsetof(struct sq, sp_release), "RELEASE ih" },
	{ offsetof(struct sq, sp_undo), "ROLLBACK TO ih" },
	{ offsetof(struct sq, record),
	    "INSERT INTO events (provider, event_id, event_type, order_key,"
	    " headers, received_at, last_seen_at, status,"
	    " next_attempt_at, subtype, fingerprint, lease_owner, lease_until,"
	    " attempts, api_version, needs_fetch, account, source_account,"
	    " last_error, done_at)"
	    " VALUES (?1, ?2, ?3, ?4, ?6, ?7, ?7,"
	    " CASE WHEN ?18 THEN 'done' WHEN ?11 IS NOT NULL THEN 'processing'"
	    " ELSE coalesce(?8, 'received') END, ?7, ?9, ?10,"
	    " CASE WHEN ?18 THEN NULL ELSE ?11 END,"
	    " CASE WHEN ?18 THEN NULL ELSE ?12 END,"
	    " ?11 IS NOT NULL, ?13, ?14, ?15, ?16, ?17,"
	    " CASE WHEN ?18 THEN ?7 END)"
	    " ON CONFLICT (provider, account, event_id) DO NOTHING" },
	/* The record of an event already there (sq_record()). */
	{ offsetof(struct sq, record_dup),
	    "UPDATE events SET duplicates = duplicates + 1,"
	    " last_seen_at = ?4"
	    " WHERE provider = ?1 AND account = ?2 AND event_id = ?3"
	    " RETURNING id, duplicates, status" },
	/* A new event's payload, written once; status changes leave it. */
	{ offsetof(struct sq, record_payload),
	    "INSERT INTO payloads (event, payload) VALUES (?1, ?2)" },
	{ offsetof(struct sq, payload_get),
	    "SELECT payload FROM payloads WHERE event = ?1" },
	/* One statement picks and takes the event: two never both take it. */
	{ offsetof(struct sq, claim),
	    "UPDATE events SET status = 'processing', lease_owner = ?3,"
	    " lease_until = ?5, attempts = attempts + 1"
	    " WHERE id = (SELECT e.id FROM events e WHERE " STORE_DUE_SQL
	    "  ORDER BY e.id LIMIT 1)"
	    " RETURNING id, provider, event_id, event_type, subtype,"
	    " (SELECT length(payload) FROM payloads WHERE event = events.id),"
	    " attempts, received_at, needs_fetch, account" },
	/* The same search as a plain read, which takes no write lock. */
	{ offsetof(struct sq, due),
	    "SELECT 1 FROM events e WHERE " STORE_DUE_SQL " LIMIT 1" },
	/*
	 * Any row in events_due at all: when none is, nothing is due, and
	 * the search above (300 k instructions to compile, which a plain
	 * CGI process pays for one use) is not needed.
	 */
	{ offsetof(struct sq, due_any),
	    "SELECT 1 FROM events"
	    " WHERE status IN ('received', 'processing', 'failed') LIMIT 1" },
	{ offsetof(struct sq, attempt_start),
	/*
	 * Attempts are numbered per event over its whole life, so that a
	 * replay, which restarts the retry budget, keeps the history.
	 */
	    "INSERT INTO attempts (event, attempt, started_at)"
	    " VALUES (?1, (SELECT coalesce(max(attempt), 0) + 1 FROM attempts"
	    " WHERE event = ?1), ?2) RETURNING attempt" },
	/*
	 * The first attempt of an event this transaction inserted, closed
	 * as done at once when the event was inserted done.
	 */
	{ offsetof(struct sq, attempt_first),
	    "INSERT INTO attempts (event, attempt, started_at, finished_at,"
	    " outcome) VALUES (?1, 1, ?2, CASE WHEN ?3 THEN ?2 END,"
	    " CASE WHEN ?3 THEN 'done' END)" },
	{ offsetof(struct sq, attempt_end),
	    "UPDATE attempts SET finished_at = ?3, outcome = ?4, error = ?5"
	    " WHERE event = ?1 AND attempt = ?2" },
	{ offsetof(struct sq, complete),
	    "UPDATE events SET status = 'done', done_at = ?3,"
	    " lease_owner = NULL, lease_until = NULL, last_error = NULL"
	    " WHERE id = ?1 AND lease_owner = ?2 AND status = 'processing'" },
	/* An event store_record_done() inserted done, still so. */
	{ offsetof(struct sq, done_check),
	    "SELECT 1 FROM events WHERE id = ?1 AND status = 'done'"
	    " AND lease_owner IS NULL" },
	{ offsetof(struct sq, failed),
	    "UPDATE events SET status = CASE WHEN ?5 THEN 'dead'"
	    " ELSE 'failed' END, next_attempt_at = ?4, last_error = ?3,"
	    " lease_owner = NULL, lease_until = NULL"
	    " WHERE id = ?1 AND lease_owner = ?2 AND status = 'processing'" },
	{ offsetof(struct sq, effect),
	    "INSERT INTO effects (event, kind, created_at) VALUES (?1, ?2, ?3)"
	    " ON CONFLICT DO NOTHING" },
	/*
	 * The first event of the provider with the same payload, when
	 * (provider, event_id) is new: see store_replay_of().
	 */
	{ offsetof(struct sq, replay),
	    "SELECT event_id, event_type,"
	    " ?4 IS NOT NULL AND instr(char(10) || headers, ?4) > 0,"
	    " (SELECT count(*) FROM events h WHERE h.provider = ?1"
	    "  AND h.account = ?5 AND h.fingerprint = ?2"
	    "  AND h.status = 'held')"
	    " FROM events WHERE provider = ?1 AND fingerprint = ?2"
	    " AND account = ?5"
	    " AND NOT EXISTS (SELECT 1 FROM events"
	    "  WHERE provider = ?1 AND account = ?5 AND event_id = ?3)"
	    " ORDER BY id LIMIT 1" },
	/* The ordering guard's statements (sqlite_objects.c), per event. */
	{ offsetof(struct sq, obj_key),
	    "SELECT source_at, rank, event_id FROM objects"
	    " WHERE provider = ?1 AND kind = ?2 AND object_id = ?3"
	    " AND account = ?4" },
	{ offsetof(struct sq, obj_put),
	    "INSERT INTO objects (provider, kind, object_id,"
	    " status, object, source_at, rank, event_id, deleted, created_at,"
	    " changed_at, account) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8,"
	    " ?9, ?10, ?10, ?11)"
	    " ON CONFLICT (provider, account, kind, object_id) DO UPDATE SET"
	    " status = excluded.status, object = excluded.object,"
	    " source_at = excluded.source_at, rank = excluded.rank,"
	    " event_id = excluded.event_id, deleted = excluded.deleted,"
	    " changed_at = excluded.changed_at" },
	{ offsetof(struct sq, obj_hist),
	    "INSERT INTO object_events (provider, kind,"
	    " object_id, event_id, event_type, status, source_at, rank,"
	    " deleted, verdict, recorded_at, seq, account) VALUES (?1, ?2, ?3,"
	    " ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11,"
	    " (SELECT coalesce(max(seq), 0) + 1 FROM object_events"
	    " WHERE provider = ?1 AND kind = ?2"
	    " AND object_id = ?3 AND account = ?12), ?12)"
	    " ON CONFLICT (provider, account, kind, object_id, event_id)"
	    " DO NOTHING" },
};
#define STORE_NSQL	(sizeof(store_sql) / sizeof(store_sql[0]))

sqlite3_stmt *
sq_stmt(struct sq *st, sqlite3_stmt **slot, char *err, size_t errlen)
{
	size_t i, off = (size_t)((char *)slot - (char *)st);

	if (*slot != NULL)
		return *slot;
	for (i = 0; i < STORE_NSQL && store_sql[i].off != off; i++)
		;
	if (i == STORE_NSQL) {
		snprintf(err, errlen, "cannot prepare statement: unknown");
		return NULL;
	}
	if (sq_prepare(st, store_sql[i].sql, slot, err, errlen) != IH_OK)
		return NULL;
	return *slot;
}

int
sq_prepare_all(struct sq *st, char *err, size_t errlen)
{
	size_t i;

	for (i = 0; i < STORE_NSQL; i++)
		if (sq_stmt(st, (sqlite3_stmt **)(void *)((char *)st +
		    store_sql[i].off), err, errlen) == NULL)
			return IH_ESTORE;
	return IH_OK;
}

void
sq_finalize_all(struct sq *st)
{
	size_t i;

	for (i = 0; i < STORE_NSQL; i++)
		sqlite3_finalize(*(sqlite3_stmt **)(void *)((char *)st +
		    store_sql[i].off));
}
