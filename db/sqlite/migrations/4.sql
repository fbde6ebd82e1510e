-- Version 3 to 4: the objects table, its history and the views.
-- The current state of each object the switches map events to (version
-- 4): one row per (provider, kind, object_id), set by the event with the
-- greatest key (source_at, rank, event_id) under the ordering guard
-- (shared/object.h).  Not tied to events: purging events keeps it.
CREATE TABLE IF NOT EXISTS objects (
	provider	TEXT	NOT NULL,
	kind		TEXT	NOT NULL,
	object_id	TEXT	NOT NULL,
	status		TEXT	NOT NULL DEFAULT '',
	-- The object's JSON as the event carried it, checked by the strict
	-- parser; NULL when the event carried none (a bare tombstone).
	object		TEXT,
	source_at	INTEGER	NOT NULL,
	rank		INTEGER	NOT NULL,
	event_id	TEXT	NOT NULL,
	deleted		INTEGER	NOT NULL DEFAULT 0,
	created_at	INTEGER	NOT NULL,
	changed_at	INTEGER	NOT NULL,
	PRIMARY KEY (provider, kind, object_id)
);
CREATE INDEX IF NOT EXISTS objects_changed ON objects (changed_at);

-- Every event that touched an object, with the guard's verdict.
CREATE TABLE IF NOT EXISTS object_events (
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
);

-- The applications' interface, version 1: read-only views whose
-- columns are promised across upgrades (the tables behind may change).
-- Times are Unix milliseconds; deleted is 0 or 1.
CREATE VIEW IF NOT EXISTS idemhook_objects AS
    SELECT provider, kind, object_id, status, object AS object_json,
	deleted, source_at, event_id, created_at, changed_at
    FROM objects;
CREATE VIEW IF NOT EXISTS idemhook_object_events AS
    SELECT provider, kind, object_id, event_id, event_type, status,
	source_at, deleted, verdict, recorded_at
    FROM object_events;
CREATE VIEW IF NOT EXISTS idemhook_views AS SELECT 1 AS version;
