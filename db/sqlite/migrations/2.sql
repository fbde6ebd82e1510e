-- Version 1 to 2: each event keeps the SHA-256 of its payload, so that a
-- signed body replayed under another identity can be recognised.  Events
-- recorded before have none (NULL) and are never matched.
ALTER TABLE events ADD COLUMN fingerprint TEXT;
CREATE INDEX IF NOT EXISTS events_fingerprint ON events (provider, fingerprint)
    WHERE fingerprint IS NOT NULL;
