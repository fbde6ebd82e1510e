-- Version 7 to 8: accounts (handlers/README.md, Accounts).  Each event,
-- object and object history row belongs to an account, 'default' for
-- every row written before; the keys become (provider, account, event_id) and
-- (provider, account, kind, object_id).  A column with a constant
-- default rewrites no row (PostgreSQL 11 and later); the new keys build
-- their indexes from the rows as they are.
ALTER TABLE events ADD COLUMN IF NOT EXISTS account TEXT NOT NULL
    DEFAULT 'default';
ALTER TABLE events DROP CONSTRAINT IF EXISTS events_provider_event_id_key;
ALTER TABLE events DROP CONSTRAINT IF EXISTS
    events_provider_account_event_id_key;
ALTER TABLE events ADD CONSTRAINT events_provider_account_event_id_key
    UNIQUE (provider, account, event_id);
ALTER TABLE objects ADD COLUMN IF NOT EXISTS account TEXT NOT NULL
    DEFAULT 'default';
ALTER TABLE objects DROP CONSTRAINT IF EXISTS objects_pkey;
ALTER TABLE objects ADD PRIMARY KEY (provider, account, kind, object_id);
ALTER TABLE object_events ADD COLUMN IF NOT EXISTS account TEXT NOT NULL
    DEFAULT 'default';
ALTER TABLE object_events DROP CONSTRAINT IF EXISTS object_events_pkey;
ALTER TABLE object_events ADD PRIMARY KEY (provider, account, kind,
    object_id, event_id);
CREATE OR REPLACE VIEW idemhook_objects AS
    SELECT provider, kind, object_id, status, object AS object_json,
	deleted, source_at, event_id, created_at, changed_at, account
    FROM objects;
CREATE OR REPLACE VIEW idemhook_object_events AS
    SELECT provider, kind, object_id, event_id, event_type, status,
	source_at, deleted, verdict, recorded_at, account
    FROM object_events;
