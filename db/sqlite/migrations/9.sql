-- Version 8 to 9: Stripe thin events.  A thin notification is recorded
-- with needs_fetch 1: no receiver claims it (they hold no API key); only
-- idemhook work, which fetches the full event from Stripe's API, does,
-- and clears it when the fetched event is stored.
ALTER TABLE events ADD COLUMN needs_fetch INTEGER NOT NULL DEFAULT 0;
