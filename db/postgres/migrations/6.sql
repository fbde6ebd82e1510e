-- Version 5 to 6: each event's payload in a table of its own, written
-- once with the event; status changes update only the events row.
CREATE TABLE IF NOT EXISTS payloads (
	event		BIGINT	PRIMARY KEY REFERENCES events (id)
	    ON DELETE CASCADE,
	payload		BYTEA	NOT NULL
);
INSERT INTO payloads (event, payload)
    SELECT id, payload FROM events WHERE payload IS NOT NULL;
ALTER TABLE events DROP COLUMN payload;
