-- Version 13 to 14: events_due holds the due rows in id order, so that a
-- claim of the oldest due event reads the first ones instead of sorting
-- every due row (the SQLite store's version 14 does the same).
DROP INDEX IF EXISTS events_due;
CREATE INDEX IF NOT EXISTS events_due ON events (id)
    WHERE status IN ('received', 'processing', 'failed');
