-- Version 11 to 12: the state of each forwarding destination (issue 41,
-- www-config/README.md "When the application is down: the pause"),
-- shared by every process through the store: the limits the settings
-- give (written by the processes that claim), the pause, and the rate's
-- next free time.  No row: the provider and account are not forwarded.
CREATE TABLE IF NOT EXISTS destinations (
	provider	TEXT	NOT NULL,
	-- The destination's account: 'default' for the provider's own,
	-- which every account without a FORWARD_URL@account shares.
	account		TEXT	NOT NULL,
	-- Deliveries in flight at most (IDEMHOOK_<P>_FORWARD_CONCURRENCY).
	concurrency	BIGINT	NOT NULL DEFAULT 4,
	-- Milliseconds between two deliveries (_FORWARD_RATE), 0: no limit.
	rate_ms		BIGINT	NOT NULL DEFAULT 0,
	-- No delivery starts before this (the rate).
	next_at		BIGINT	NOT NULL DEFAULT 0,
	-- Deliveries failed in a row for a reason a retry may cure.
	failures	BIGINT	NOT NULL DEFAULT 0,
	-- Set while paused: only the probe (an event's id) is delivered.
	paused_at	BIGINT,
	probe		BIGINT,
	PRIMARY KEY (provider, account)
);
