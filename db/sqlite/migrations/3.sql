-- Version 2 to 3: the console's counts per provider and status, and each
-- provider's last delivery, read from this index alone (a covering index
-- scan), never from the rows and their payloads.
CREATE INDEX IF NOT EXISTS events_provider_status
    ON events (provider, status, received_at);
