/*
 * pg_stmt.c -- PostgreSQL: the statements prepared once per connection
 * (recording, processing, the objects table), their preparation, and
 * running them, waited for or deferred.
 */
#include <stdio.h>
#include <string.h>

#include <libpq-fe.h>

#include "ih.h"
#include "pg_int.h"

/* An event done by its lease's owner ($1 rowid, $2 owner, $3 now). */
#define PG_DONE_SQL \
	"UPDATE events SET status = 'done', done_at = $3," \
	" lease_owner = NULL, lease_until = NULL, last_error = NULL" \
	" WHERE id = $1 AND lease_owner = $2 AND status = 'processing'"

/*
 * What is due, for a claim ($1 provider or NULL, $2 rowid or 0, $4 now),
 * as in the SQLite backend: received, failed with its time come, or
 * processing with an expired lease; and not behind an unfinished older
 * event of its order key, nor held back by its forwarding destination
 * (store_dest.h); and as $6 (the store's fetch mode,
 * store_thin.h) says of thin events.
 */
#define PG_DUE_SQL \
	" e.status IN ('received', 'processing', 'failed')" \
	" AND ($1::text IS NULL OR e.provider = $1)" \
	" AND ($2::bigint = 0 OR e.id = $2)" \
	" AND (e.status = 'received'" \
	"  OR (e.status = 'failed' AND e.next_attempt_at <= $4)" \
	"  OR (e.status = 'processing' AND e.lease_until <= " PG_NOW_MS "))" \
	" AND (e.order_key IS NULL OR NOT EXISTS (SELECT 1 FROM events p" \
	"  WHERE p.provider = e.provider AND p.account = e.account" \
	"  AND p.order_key = e.order_key" \
	"  AND p.id < e.id" \
	"  AND p.status NOT IN ('done', 'dead', 'quarantined')))" \
	" AND CASE $6::int WHEN 0 THEN e.needs_fetch = 0" \
	"  WHEN 2 THEN e.needs_fetch <> 0 ELSE true END" \
	" AND" PG_DEST_HOLD("$4")

/*
 * An object's history row from PG_OBJECT_TAKE's parameters ($13 the
 * event's type, $14 when recorded) with the verdict v; the caller adds
 * FROM/WHERE and ON CONFLICT.  Its seq is the column's default, the
 * next of a sequence (version 17): under the object row's lock, after
 * the object's earlier rows, without reading them.
 */
#define PG_HISTORY_SQL(v) \
	"INSERT INTO object_events (provider, kind, object_id, event_id," \
	" event_type, status, source_at, rank, deleted, verdict," \
	" recorded_at, account) SELECT $1, $2, $3, $8, $13, $4, $6, $7," \
	" $9, " v ", $14, $12"

static const struct {
	const char	*name;
	const char	*types;	/* one letter per parameter: see pg_types() */
	const char	*sql;
} pg_sql[PG_NSTMT] = {
	/*
	 * One statement inserts the event or counts the duplicate: under
	 * UNIQUE (provider, account, event_id) a concurrent second insert
	 * waits for the first and then takes the conflict branch.  A new
	 * event's payload goes to its own table in the same statement (one
	 * round trip), written once: status changes never touch it.
	 */
	/*
	 * $18 set: the claimed event goes in done, without a lease, its
	 * switch next in the transaction (store_record_done()).  A new
	 * event claimed in its insert ($11 its owner) gets its first
	 * attempt in the same statement, closed at once when done: a
	 * statement fewer per event for the server to start and end.
	 */
	[PG_RECORD] = { "ih_record", "ttttbtittttitittti",
	    "WITH ev AS (INSERT INTO events (provider, event_id, event_type,"
	    " order_key, headers, received_at, last_seen_at, status,"
	    " next_attempt_at, subtype, fingerprint, lease_owner, lease_until,"
	    " attempts, api_version, needs_fetch, account, source_account,"
	    " last_error, done_at)"
	    " VALUES ($1, $2, $3, $4, $6, $7, $7,"
	    " CASE WHEN $18::bigint <> 0 THEN 'done'"
	    " WHEN $11::text IS NOT NULL THEN 'processing'"
	    " ELSE coalesce($8, 'received') END, $7, $9, $10,"
	    " CASE WHEN $18 = 0 THEN $11 END,"
	    " CASE WHEN $18 = 0 THEN " PG_NOW_MS " + $12 END,"
	    " CASE WHEN $11::text IS NOT NULL THEN 1 ELSE 0 END, $13, $14, $15,"
	    " $16, $17, CASE WHEN $18 <> 0 THEN $7 END)"
	    " ON CONFLICT (provider, account, event_id) DO UPDATE SET"
	    " duplicates = events.duplicates + 1,"
	    " last_seen_at = excluded.received_at"
	    " RETURNING id, duplicates, status),"
	    " pl AS (INSERT INTO payloads (event, payload)"
	    " SELECT id, $5 FROM ev WHERE duplicates = 0"
	    " AND $5::bytea IS NOT NULL),"
	    " at AS (INSERT INTO attempts (event, attempt, started_at,"
	    " finished_at, outcome) SELECT id, 1, $7,"
	    " CASE WHEN $18 <> 0 THEN $7 END,"
	    " CASE WHEN $18 <> 0 THEN 'done' END FROM ev"
	    " WHERE duplicates = 0 AND $11::text IS NOT NULL)"
	    " SELECT id, duplicates, status FROM ev" },
	/* A row another claim holds is skipped, never waited for. */
	[PG_CLAIM] = { "ih_claim", "titiii",
	    "UPDATE events SET status = 'processing', lease_owner = $3,"
	    " lease_until = " PG_NOW_MS " + $5, attempts = attempts + 1"
	    " WHERE id = (SELECT e.id FROM events e WHERE " PG_DUE_SQL
	    "  ORDER BY e.id LIMIT 1 FOR UPDATE SKIP LOCKED)"
	    " RETURNING id, provider, event_id, event_type, subtype,"
	    " (SELECT CASE WHEN octet_length(payload) <= 1048576"
	    "  THEN payload END FROM payloads WHERE event = events.id),"
	    " attempts, received_at, needs_fetch, account,"
	    " (SELECT octet_length(payload) FROM payloads"
	    "  WHERE event = events.id)" },
	[PG_DUE] = { "ih_due", "titiii",
	    "SELECT 1 FROM events e WHERE " PG_DUE_SQL " LIMIT 1" },
	[PG_ATTEMPT_START] = { "ih_attempt_start", "ii",
	    "INSERT INTO attempts (event, attempt, started_at)"
	    " VALUES ($1, (SELECT coalesce(max(attempt), 0) + 1 FROM attempts"
	    " WHERE event = $1), $2) RETURNING attempt" },
	/* An event inserted done whose switch failed (pg_fail_job). */
	[PG_UNDONE] = { "ih_undone", "itii",
	    "UPDATE events SET status = CASE WHEN $4 <> 0 THEN 'dead'"
	    " ELSE 'failed' END, next_attempt_at = $3, last_error = $2,"
	    " done_at = NULL"
	    " WHERE id = $1 AND status = 'done' AND lease_owner IS NULL" },
	[PG_ATTEMPT_END] = { "ih_attempt_end", "iiitt",
	    "UPDATE attempts SET finished_at = $3, outcome = $4, error = $5"
	    " WHERE event = $1 AND attempt = $2" },
	[PG_COMPLETE] = { "ih_complete", "iti", PG_DONE_SQL },
	[PG_FAILED] = { "ih_failed", "ittii",
	    "UPDATE events SET status = CASE WHEN $5 <> 0 THEN 'dead'"
	    " ELSE 'failed' END, next_attempt_at = $4, last_error = $3,"
	    " lease_owner = NULL, lease_until = NULL"
	    " WHERE id = $1 AND lease_owner = $2 AND status = 'processing'" },
	[PG_EFFECT] = { "ih_effect", "iti",
	    "INSERT INTO effects (event, kind, created_at) VALUES ($1, $2, $3)"
	    " ON CONFLICT DO NOTHING" },
	[PG_REPLAY] = { "ih_replay", "ttttt",
	    "SELECT event_id, event_type,"
	    " coalesce($4::text IS NOT NULL"
	    " AND strpos(E'\\n' || headers, $4) > 0, false)::int,"
	    " (SELECT count(*) FROM events h WHERE h.provider = $1"
	    "  AND h.account = $5 AND h.fingerprint = $2"
	    "  AND h.status = 'held')"
	    " FROM events WHERE provider = $1 AND fingerprint = $2"
	    " AND account = $5 AND NOT EXISTS (SELECT 1 FROM events"
	    "  WHERE provider = $1 AND account = $5 AND event_id = $3)"
	    " ORDER BY id LIMIT 1" },
	[PG_RENEW] = { "ih_renew", "iti",
	    "UPDATE events SET lease_until = " PG_NOW_MS " + $3"
	    " WHERE id = $1 AND lease_owner = $2 AND status = 'processing'" },
	[PG_STALE] = { "ih_stale", "iti",
	    "UPDATE attempts SET finished_at = $3,"
	    " outcome = 'lease_expired', error = $2"
	    " WHERE event = $1 AND finished_at IS NULL" },
	[PG_LOST] = { "ih_lost", "itii",
	    "UPDATE attempts SET finished_at = $3,"
	    " outcome = 'lease_lost', error = $2"
	    " WHERE event = $1 AND attempt = $4 AND finished_at IS NULL" },
	/* Its attempts and effects go with it (ON DELETE CASCADE). */
	[PG_FORGET] = { "ih_forget", "it",
	    "DELETE FROM events WHERE id = $1"
	    " AND lease_owner = $2 AND status = 'processing'" },
	/*
	 * PG_COMPLETE whose answer is not waited for (pg_complete): a lost
	 * lease fails it, as a cast that names the event.  The cast reads
	 * count(*), so that a custom plan cannot fold it into an error.
	 */
	[PG_COMPLETE_OWN] = { "ih_complete_own", "iti",
	    "WITH u AS (" PG_DONE_SQL " RETURNING 1)"
	    " SELECT CASE count(*) WHEN 1 THEN 1 ELSE"
	    " ('lease on event ' || $1 || ' was lost (' || count(*)"
	    " || ' rows)')::int END FROM u" },
	/*
	 * The objects table (pg_objects.c), prepared so that an event's
	 * switch is not parsed and planned anew each time.  The insert of a
	 * new row, or the lock and read of an existing row's key, in one
	 * statement; its parameters are the table's columns in order, then
	 * the event's type and, for the switch ($14 set), when its history
	 * row is recorded: a new row's history ('applied', nothing to
	 * compare) goes in the same statement, which saves the server a
	 * statement's start and end per event.
	 */
	[PG_OBJECT_TAKE] = { "ih_object_take", "tttttiitiiitti",
	    "WITH ins AS (INSERT INTO objects (provider, kind, object_id,"
	    " status, object, source_at, rank, event_id, deleted, created_at,"
	    " changed_at, account) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9,"
	    " $10, $11, $12) ON CONFLICT (provider, account, kind, object_id)"
	    " DO NOTHING RETURNING 1),"
	    " hist AS (" PG_HISTORY_SQL("'applied'")
	    " FROM ins WHERE $14::bigint IS NOT NULL"
	    " ON CONFLICT (provider, account, kind, object_id, event_id)"
	    " DO NOTHING),"
	    " cur AS (SELECT source_at, rank, event_id FROM objects"
	    " WHERE provider = $1 AND kind = $2 AND object_id = $3"
	    " AND account = $12 FOR UPDATE)"
	    " SELECT (SELECT count(*) FROM ins), cur.source_at, cur.rank,"
	    " cur.event_id FROM (SELECT 1) AS one LEFT JOIN cur ON true" },
	[PG_OBJECT_KEY] = { "ih_object_key", "tttt",
	    "SELECT source_at, rank, event_id FROM objects"
	    " WHERE provider = $1 AND kind = $2 AND object_id = $3"
	    " AND account = $4 FOR UPDATE" },
	[PG_OBJECT_SET] = { "ih_object_set", "tttttiitiiit",
	    "UPDATE objects SET status = $4, object = $5, source_at = $6,"
	    " rank = $7, event_id = $8, deleted = $9, changed_at = $11"
	    " WHERE provider = $1 AND kind = $2 AND object_id = $3"
	    " AND account = $12 AND $10::bigint IS NOT NULL" },
	/*
	 * The switch's update of a row the guard found older, with its
	 * history row ('applied'), in one statement sent deferred: the row
	 * is locked by this transaction's PG_OBJECT_TAKE, so only an error
	 * can come back.  PG_OBJECT_TAKE's parameters.
	 */
	[PG_OBJECT_SET_HIST] = { "ih_object_set_hist", "tttttiitiiitti",
	    "WITH u AS (UPDATE objects SET status = $4, object = $5,"
	    " source_at = $6, rank = $7, event_id = $8, deleted = $9,"
	    " changed_at = $11 WHERE provider = $1 AND kind = $2"
	    " AND object_id = $3 AND account = $12 AND $10::bigint IS NOT NULL"
	    " RETURNING 1) " PG_HISTORY_SQL("'applied'")
	    " WHERE $14::bigint IS NOT NULL"
	    " ON CONFLICT (provider, account, kind, object_id, event_id)"
	    " DO NOTHING" },
	[PG_HISTORY] = { "ih_history", "ttttttiiitit",
	    "INSERT INTO object_events (provider, kind, object_id, event_id,"
	    " event_type, status, source_at, rank, deleted, verdict,"
	    " recorded_at, account) VALUES ($1, $2, $3, $4, $5, $6, $7,"
	    " $8, $9, $10, $11, $12)"
	    " ON CONFLICT (provider, account, kind, object_id, event_id)"
	    " DO NOTHING" },
};

/* Prepares every statement of pg_sql on the connection. */
int
pg_prepare_all(struct pgs *st, char *err, size_t errlen)
{
	unsigned int oids[PG_MAXP];
	PGresult *res;
	int i, n;

	for (i = 0; i < PG_NSTMT; i++) {
		pg_types(pg_sql[i].types, oids, &n);
		res = pg_wait_prepare(st, pg_sql[i].name, pg_sql[i].sql, n,
		    oids);
		if (PQresultStatus(res) != PGRES_COMMAND_OK)
			return pg_fail(st, res, "cannot prepare statement",
			    err, errlen);
		PQclear(res);
	}
	return IH_OK;
}

PGresult *
pg_exec_stmt(struct pgs *st, enum pg_stmt i, const struct pg_params *p,
    ExecStatusType want, const char *what, char *err, size_t errlen)
{
	PGresult *res;

	res = pg_wait_prepared(st, pg_sql[i].name, p->n, p->v, p->len,
	    p->fmt);
	if (PQresultStatus(res) != want) {
		pg_fail(st, res, what, err, errlen);
		return NULL;
	}
	return res;
}

int
pg_defer_stmt(struct pgs *st, enum pg_stmt i, const struct pg_params *p,
    const char *what, char *err, size_t errlen)
{
	if (pg_defer_prepared(st, pg_sql[i].name, p->n, p->v, p->len,
	    p->fmt))
		return IH_OK;
	return pg_fail(st, NULL, what, err, errlen);
}
