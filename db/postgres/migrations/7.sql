-- Version 6 to 7: each event's API version (the provider's, from the
-- signed body or its header), and the status 'held' for an event whose
-- version is not one the settings expect (IDEMHOOK_<PROVIDER>_API_VERSIONS).
ALTER TABLE events ADD COLUMN IF NOT EXISTS api_version TEXT;
ALTER TABLE events DROP CONSTRAINT IF EXISTS events_status_check;
ALTER TABLE events ADD CONSTRAINT events_status_check
    CHECK (status IN ('received', 'processing', 'done', 'failed',
    'dead', 'quarantined', 'held'));
