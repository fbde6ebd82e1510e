-- Version 12 to 13: events.status's CHECK joins = terms with OR instead
-- of IN (...), allowing the same values.  SQLite 3.40 checks an IN list
-- of more than two constants through a temporary b-tree built for each
-- statement that writes a row: the record of every event and each
-- change of its status paid one, about a tenth of a receiver's
-- instructions per event (make bench-pages, tests/bench/notes.md).
-- SQLite cannot change a CHECK in place, so events is made again as in
-- version 8: migrate() runs this with foreign keys off, so that dropping
-- the old table neither cascades nor copies its children (payloads,
-- effects, attempts), which find the new one by its name.
CREATE TABLE events_13 (
	id		INTEGER PRIMARY KEY,
	provider	TEXT	NOT NULL,
	event_id	TEXT	NOT NULL,
	event_type	TEXT	NOT NULL,
	subtype		TEXT,
	order_key	TEXT,
	headers		TEXT	NOT NULL DEFAULT '',
	received_at	INTEGER	NOT NULL,
	last_seen_at	INTEGER	NOT NULL,
	duplicates	INTEGER	NOT NULL DEFAULT 0,
	status		TEXT	NOT NULL DEFAULT 'received'
	    CHECK (status = 'received' OR status = 'processing' OR
	    status = 'done' OR status = 'failed' OR status = 'dead' OR
	    status = 'quarantined' OR status = 'held'),
	attempts	INTEGER	NOT NULL DEFAULT 0,
	next_attempt_at	INTEGER	NOT NULL DEFAULT 0,
	lease_until	INTEGER,
	lease_owner	TEXT,
	last_error	TEXT,
	done_at		INTEGER,
	purged_at	INTEGER,
	fingerprint	TEXT,
	api_version	TEXT,
	account		TEXT	NOT NULL DEFAULT 'default',
	needs_fetch	INTEGER	NOT NULL DEFAULT 0,
	source_account	TEXT,
	UNIQUE (provider, account, event_id)
);
INSERT INTO events_13 (id, provider, event_id, event_type, subtype,
    order_key, headers, received_at, last_seen_at, duplicates, status,
    attempts, next_attempt_at, lease_until, lease_owner, last_error,
    done_at, purged_at, fingerprint, api_version, account, needs_fetch,
    source_account)
    SELECT id, provider, event_id, event_type, subtype, order_key, headers,
	received_at, last_seen_at, duplicates, status, attempts,
	next_attempt_at, lease_until, lease_owner, last_error, done_at,
	purged_at, fingerprint, api_version, account, needs_fetch,
	source_account
    FROM events;
DROP TABLE events;
ALTER TABLE events_13 RENAME TO events;
CREATE INDEX IF NOT EXISTS events_source_account
    ON events (source_account) WHERE source_account IS NOT NULL;
CREATE INDEX IF NOT EXISTS events_due ON events (status, next_attempt_at)
    WHERE status IN ('received', 'processing', 'failed');
CREATE INDEX IF NOT EXISTS events_received ON events (received_at);
CREATE INDEX IF NOT EXISTS events_order ON events (provider, order_key)
    WHERE order_key IS NOT NULL;
CREATE INDEX IF NOT EXISTS events_fingerprint ON events (provider, fingerprint)
    WHERE fingerprint IS NOT NULL;
CREATE INDEX IF NOT EXISTS events_provider_status
    ON events (provider, status, received_at);
CREATE TRIGGER IF NOT EXISTS events_purge_payload
    AFTER UPDATE OF purged_at ON events WHEN new.purged_at IS NOT NULL
BEGIN
	DELETE FROM payloads WHERE event = new.id;
END;
