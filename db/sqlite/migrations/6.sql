-- Version 5 to 6: each event's payload in a table of its own, written
-- once: a status change (claim, done, failed, replay) rewrote the whole
-- events row with its payload, a page or more per change, and for a large
-- body a copy of it in memory.  The copy below rewrites every row once.
CREATE TABLE IF NOT EXISTS payloads (
	event		INTEGER	PRIMARY KEY REFERENCES events (id)
	    ON DELETE CASCADE,
	payload		BLOB	NOT NULL
);
INSERT INTO payloads (event, payload)
    SELECT id, payload FROM events WHERE payload IS NOT NULL;
ALTER TABLE events DROP COLUMN payload;
CREATE TRIGGER IF NOT EXISTS events_purge_payload
    AFTER UPDATE OF purged_at ON events WHEN new.purged_at IS NOT NULL
BEGIN
	DELETE FROM payloads WHERE event = new.id;
END;

-- effects, attempts and object_events become WITHOUT ROWID: each row in
-- one b-tree instead of the table and the index of its primary key, one
-- page fewer per table for each commit that writes it.  The view on
-- object_events is made again around the rename.
DROP VIEW IF EXISTS idemhook_object_events;
CREATE TABLE effects_6 (
	event		INTEGER	NOT NULL REFERENCES events (id)
	    ON DELETE CASCADE,
	kind		TEXT	NOT NULL,
	created_at	INTEGER	NOT NULL,
	PRIMARY KEY (event, kind)
) WITHOUT ROWID;
INSERT INTO effects_6 (event, kind, created_at)
    SELECT event, kind, created_at FROM effects;
DROP TABLE effects;
ALTER TABLE effects_6 RENAME TO effects;
CREATE TABLE attempts_6 (
	event		INTEGER	NOT NULL REFERENCES events (id)
	    ON DELETE CASCADE,
	attempt		INTEGER	NOT NULL,
	started_at	INTEGER	NOT NULL,
	finished_at	INTEGER,
	outcome		TEXT,
	error		TEXT,
	PRIMARY KEY (event, attempt)
) WITHOUT ROWID;
INSERT INTO attempts_6 (event, attempt, started_at, finished_at, outcome,
    error)
    SELECT event, attempt, started_at, finished_at, outcome, error
    FROM attempts;
DROP TABLE attempts;
ALTER TABLE attempts_6 RENAME TO attempts;
CREATE TABLE object_events_6 (
	provider	TEXT	NOT NULL,
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
	PRIMARY KEY (provider, kind, object_id, event_id)
) WITHOUT ROWID;
INSERT INTO object_events_6 SELECT provider, kind, object_id, event_id,
    event_type, status, source_at, rank, deleted, verdict, recorded_at, seq
    FROM object_events;
DROP TABLE object_events;
ALTER TABLE object_events_6 RENAME TO object_events;
CREATE VIEW IF NOT EXISTS idemhook_object_events AS
    SELECT provider, kind, object_id, event_id, event_type, status,
	source_at, deleted, verdict, recorded_at
    FROM object_events;
