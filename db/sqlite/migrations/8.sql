-- Version 7 to 8: issue 29 (accounts) owns this number; on the thin
-- branch it is a placeholder that changes nothing, so that 9 follows.
CREATE INDEX IF NOT EXISTS events_received ON events (received_at);
