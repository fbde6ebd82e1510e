-- Version 2 to 3: the index behind counts per provider and status and
-- each provider's last delivery (the console reads SQLite stores only
-- today; the index keeps the two schemas alike).
CREATE INDEX IF NOT EXISTS events_provider_status
    ON events (provider, status, received_at);
