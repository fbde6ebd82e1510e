-- Version 6 to 7: each event's API version (the provider's, from the
-- signed body or its header), and the status 'held' for an event whose
-- version is not one the settings expect (IDEMHOOK_<PROVIDER>_API_VERSIONS).
-- SQLite cannot change a CHECK in place, so events is made again.  The
-- migration runs in a transaction with foreign keys on, where dropping
-- events would delete its children: they are made again first, pointing
-- at the new table, whose rename then carries their references along.
CREATE TABLE events_7 (
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
	    CHECK (status IN ('received', 'processing', 'done', 'failed',
	    'dead', 'quarantined', 'held')),
	attempts	INTEGER	NOT NULL DEFAULT 0,
	next_attempt_at	INTEGER	NOT NULL DEFAULT 0,
	lease_until	INTEGER,
	lease_owner	TEXT,
	last_error	TEXT,
	done_at		INTEGER,
	purged_at	INTEGER,
	fingerprint	TEXT,
	api_version	TEXT,
	UNIQUE (provider, event_id)
);
INSERT INTO events_7 (id, provider, event_id, event_type, subtype,
    order_key, headers, received_at, last_seen_at, duplicates, status,
    attempts, next_attempt_at, lease_until, lease_owner, last_error,
    done_at, purged_at, fingerprint)
    SELECT id, provider, event_id, event_type, subtype, order_key, headers,
	received_at, last_seen_at, duplicates, status, attempts,
	next_attempt_at, lease_until, lease_owner, last_error, done_at,
	purged_at, fingerprint
    FROM events;
CREATE TABLE payloads_7 (
	event		INTEGER	PRIMARY KEY REFERENCES events_7 (id)
	    ON DELETE CASCADE,
	payload		BLOB	NOT NULL
);
INSERT INTO payloads_7 (event, payload) SELECT event, payload FROM payloads;
CREATE TABLE effects_7 (
	event		INTEGER	NOT NULL REFERENCES events_7 (id)
	    ON DELETE CASCADE,
	kind		TEXT	NOT NULL,
	created_at	INTEGER	NOT NULL,
	PRIMARY KEY (event, kind)
) WITHOUT ROWID;
INSERT INTO effects_7 SELECT event, kind, created_at FROM effects;
CREATE TABLE attempts_7 (
	event		INTEGER	NOT NULL REFERENCES events_7 (id)
	    ON DELETE CASCADE,
	attempt		INTEGER	NOT NULL,
	started_at	INTEGER	NOT NULL,
	finished_at	INTEGER,
	outcome		TEXT,
	error		TEXT,
	PRIMARY KEY (event, attempt)
) WITHOUT ROWID;
INSERT INTO attempts_7 SELECT event, attempt, started_at, finished_at,
    outcome, error FROM attempts;
DROP TABLE payloads;
DROP TABLE effects;
DROP TABLE attempts;
DROP TABLE events;
ALTER TABLE events_7 RENAME TO events;
ALTER TABLE payloads_7 RENAME TO payloads;
ALTER TABLE effects_7 RENAME TO effects;
ALTER TABLE attempts_7 RENAME TO attempts;
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
