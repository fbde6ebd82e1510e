-- Version 13 to 14: no temporary b-tree per written row, and a claim
-- that reads the due rows from the front.  An IN list of more than two
-- values makes SQLite build a temporary b-tree each time it evaluates a
-- row against it, so events_due's WHERE and object_events' CHECK are
-- written with = and OR.  events_due holds the due rows in id order:
-- a claim of the oldest due event reads the first ones instead of
-- sorting every due row.  object_events is made again, as in version 6
-- (SQLite cannot change a CHECK in place); nothing refers to it.
DROP INDEX IF EXISTS events_due;
CREATE INDEX IF NOT EXISTS events_due ON events (id)
    WHERE status = 'received' OR status = 'processing' OR status = 'failed';
DROP VIEW IF EXISTS idemhook_object_events;
CREATE TABLE object_events_14 (
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
INSERT INTO object_events_14 (provider, account, kind, object_id,
    event_id, event_type, status, source_at, rank, deleted, verdict,
    recorded_at, seq)
    SELECT provider, account, kind, object_id, event_id, event_type,
	status, source_at, rank, deleted, verdict, recorded_at, seq
    FROM object_events;
DROP TABLE object_events;
ALTER TABLE object_events_14 RENAME TO object_events;
CREATE VIEW IF NOT EXISTS idemhook_object_events AS
    SELECT provider, kind, object_id, event_id, event_type, status,
	source_at, deleted, verdict, recorded_at, account
    FROM object_events;
