-- Version 7 to 8: each event's payload in a table of its own, written
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
