-- Version 7 to 8: accounts (handlers/README.md, Accounts).  Each event,
-- object and object history row belongs to an account, 'default' for
-- every row written before; the keys become (provider, account, event_id) and
-- (provider, account, kind, object_id).  SQLite cannot drop a UNIQUE
-- constraint or change a primary key in place, so events, objects and
-- object_events are made again.  migrate() runs this one with foreign
-- keys off (SQLite's documented way to remake a table), so that dropping
-- the old events neither cascades nor copies payloads, effects or
-- attempts: they keep their rows and find the new table by its name.
-- The payloads, the bulk of a store, are not rewritten.  account comes
-- second in objects and object_events: a WITHOUT ROWID key whose columns
-- are not the first ones in order makes SQLite 3.40's integrity_check
-- report NULLs that are not there (idemhook backup runs that check).
CREATE TABLE events_8 (
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
	account		TEXT	NOT NULL DEFAULT 'default',
	UNIQUE (provider, account, event_id)
);
INSERT INTO events_8 (id, provider, event_id, event_type, subtype,
    order_key, headers, received_at, last_seen_at, duplicates, status,
    attempts, next_attempt_at, lease_until, lease_owner, last_error,
    done_at, purged_at, fingerprint, api_version)
    SELECT id, provider, event_id, event_type, subtype, order_key, headers,
	received_at, last_seen_at, duplicates, status, attempts,
	next_attempt_at, lease_until, lease_owner, last_error, done_at,
	purged_at, fingerprint, api_version
    FROM events;
DROP TABLE events;
ALTER TABLE events_8 RENAME TO events;
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
DROP VIEW IF EXISTS idemhook_objects;
DROP VIEW IF EXISTS idemhook_object_events;
CREATE TABLE objects_8 (
	provider	TEXT	NOT NULL,
	account		TEXT	NOT NULL DEFAULT 'default',
	kind		TEXT	NOT NULL,
	object_id	TEXT	NOT NULL,
	status		TEXT	NOT NULL DEFAULT '',
	object		TEXT,
	source_at	INTEGER	NOT NULL,
	rank		INTEGER	NOT NULL,
	event_id	TEXT	NOT NULL,
	deleted		INTEGER	NOT NULL DEFAULT 0,
	created_at	INTEGER	NOT NULL,
	changed_at	INTEGER	NOT NULL,
	PRIMARY KEY (provider, account, kind, object_id)
);
INSERT INTO objects_8 (provider, kind, object_id, status, object,
    source_at, rank, event_id, deleted, created_at, changed_at)
    SELECT provider, kind, object_id, status, object, source_at, rank,
	event_id, deleted, created_at, changed_at FROM objects;
DROP TABLE objects;
ALTER TABLE objects_8 RENAME TO objects;
CREATE INDEX IF NOT EXISTS objects_changed ON objects (changed_at);
CREATE TABLE object_events_8 (
	provider	TEXT	NOT NULL,
	account		TEXT	NOT NULL DEFAULT 'default',
	kind		TEXT	NOT NULL,
	object_id	TEXT	NOT NULL,
	event_id	TEXT	NOT NULL,
	event_type	TEXT	NOT NULL,
	status		TEXT	NOT NULL DEFAULT '',
	source_at	INTEGER	NOT NULL,
	rank		INTEGER	NOT NULL,
	deleted		INTEGER	NOT NULL DEFAULT 0,
	verdict		TEXT	NOT NULL
	    CHECK (verdict IN ('applied', 'stale', 'tied')),
	recorded_at	INTEGER	NOT NULL,
	seq		INTEGER	NOT NULL,
	PRIMARY KEY (provider, account, kind, object_id, event_id)
) WITHOUT ROWID;
INSERT INTO object_events_8 (provider, kind, object_id, event_id,
    event_type, status, source_at, rank, deleted, verdict, recorded_at, seq)
    SELECT provider, kind, object_id, event_id, event_type, status,
	source_at, rank, deleted, verdict, recorded_at, seq
    FROM object_events;
DROP TABLE object_events;
ALTER TABLE object_events_8 RENAME TO object_events;
CREATE VIEW IF NOT EXISTS idemhook_objects AS
    SELECT provider, kind, object_id, status, object AS object_json,
	deleted, source_at, event_id, created_at, changed_at, account
    FROM objects;
CREATE VIEW IF NOT EXISTS idemhook_object_events AS
    SELECT provider, kind, object_id, event_id, event_type, status,
	source_at, deleted, verdict, recorded_at, account
    FROM object_events;
