-- Version 10 to 11: the provider's own sub-account an event is about,
-- from the signed body (Stripe Connect's "account"), searchable with
-- idemhook list --source-account.  Only such events add an index entry.
ALTER TABLE events ADD COLUMN IF NOT EXISTS source_account TEXT;
CREATE INDEX IF NOT EXISTS events_source_account
    ON events (source_account) WHERE source_account IS NOT NULL;
