-- Version 11 to 12: no temporary b-tree per written row, and a claim
-- that reads the due rows from the front.  An IN list of more than two
-- values makes SQLite build a temporary b-tree each time it evaluates a
-- row against it, so the events' status CHECK, events_due's WHERE and
-- object_events' verdict CHECK are written with = and OR.  events_due
-- holds the due rows in id order: a claim of the oldest due event reads
-- the first ones instead of sorting every due row.  SQLite cannot change
-- a CHECK in place, so events and object_events are made again, as in
-- versions 8 and 6: migrate() runs this with foreign keys off, so that
-- dropping the old events neither cascades nor copies payloads, effects
-- or attempts, which keep their rows and find the new table by its name.
CREATE TABLE events_12 (
	id		INTEGER PRIMARY KEY,
	provider	TEXT	NOT NULL,
	event_id	TEXT	NOT NULL,
	event_type	TEXT	NOT NULL,
	-- A finer type where the provider has one (GitHub's "action").
	subtype		TEXT,
	-- Events sharing an order key are processed in arrival order.
	order_key	TEXT,
	-- The body is in payloads (version 6), apart from the row that
	-- each status change rewrites.
	-- The headers needed to re-verify the signature, "name: value\n".
	headers		TEXT	NOT NULL DEFAULT '',
	received_at	INTEGER	NOT NULL,
	last_seen_at	INTEGER	NOT NULL,
	duplicates	INTEGER	NOT NULL DEFAULT 0,
	-- Its CHECK with = and OR (version 12): see events_due below.
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
	-- The lowercase hex SHA-256 of the payload as received (version 2):
	-- the same signed bytes under another identity are a replay.
	fingerprint	TEXT,
	-- The provider's API version of the event (version 7), or NULL.
	api_version	TEXT,
	-- The account the event came to (version 8; handlers/README.md,
	-- Accounts): 'default' for the implicit one of an installation
	-- without accounts.
	account		TEXT	NOT NULL DEFAULT 'default',
	-- 1 for a Stripe thin event (version 9) that idemhook work has not
	-- fetched yet: the receivers never claim it.
	needs_fetch	INTEGER	NOT NULL DEFAULT 0,
	-- Stripe Connect's "account" of the signed body (version 11), or
	-- NULL: the provider's own sub-account the event is about.
	source_account	TEXT,
	UNIQUE (provider, account, event_id)
);
INSERT INTO events_12 (
    id, provider, event_id, event_type, subtype, order_key,
    headers, received_at, last_seen_at, duplicates, status,
    attempts, next_attempt_at, lease_until, lease_owner,
    last_error, done_at, purged_at, fingerprint, api_version,
    account, needs_fetch, source_account)
    SELECT
    id, provider, event_id, event_type, subtype, order_key,
    headers, received_at, last_seen_at, duplicates, status,
    attempts, next_attempt_at, lease_until, lease_owner,
    last_error, done_at, purged_at, fingerprint, api_version,
    account, needs_fetch, source_account
    FROM events;
DROP TABLE events;
ALTER TABLE events_12 RENAME TO events;
CREATE INDEX IF NOT EXISTS events_source_account
    ON events (source_account) WHERE source_account IS NOT NULL;
-- The work queue (version 12): the due rows in id order, so that a claim
-- of the oldest due event reads from the front instead of sorting every
-- due row.  Written with = and OR: an IN list of more than two values
-- makes SQLite build a temporary b-tree each time a row is written.
CREATE INDEX IF NOT EXISTS events_due ON events (id)
    WHERE status = 'received' OR status = 'processing' OR status = 'failed';
CREATE INDEX IF NOT EXISTS events_received ON events (received_at);
CREATE INDEX IF NOT EXISTS events_order ON events (provider, order_key)
    WHERE order_key IS NOT NULL;
CREATE INDEX IF NOT EXISTS events_fingerprint ON events (provider, fingerprint)
    WHERE fingerprint IS NOT NULL;
-- The console's counts and last deliveries (version 3).
CREATE INDEX IF NOT EXISTS events_provider_status
    ON events (provider, status, received_at);
CREATE TRIGGER IF NOT EXISTS events_purge_payload
    AFTER UPDATE OF purged_at ON events WHEN new.purged_at IS NOT NULL
BEGIN
	DELETE FROM payloads WHERE event = new.id;
END;
DROP VIEW IF EXISTS idemhook_object_events;
CREATE TABLE object_events_12 (
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
	    CHECK (verdict = 'applied' OR verdict = 'stale' OR
	    verdict = 'tied'),
	recorded_at	INTEGER	NOT NULL,
	seq		INTEGER	NOT NULL,
	PRIMARY KEY (provider, account, kind, object_id, event_id)
) WITHOUT ROWID;
INSERT INTO object_events_12 (provider, account, kind, object_id,
    event_id, event_type, status, source_at, rank, deleted, verdict,
    recorded_at, seq)
    SELECT provider, account, kind, object_id, event_id, event_type,
	status, source_at, rank, deleted, verdict, recorded_at, seq
    FROM object_events;
DROP TABLE object_events;
ALTER TABLE object_events_12 RENAME TO object_events;
CREATE VIEW IF NOT EXISTS idemhook_object_events AS
    SELECT provider, kind, object_id, event_id, event_type, status,
	source_at, deleted, verdict, recorded_at, account
    FROM object_events;
