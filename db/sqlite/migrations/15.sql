-- Version 14 to 15: a destination's pause threshold
-- (IDEMHOOK_<P>_FORWARD_PAUSE_AFTER) is stored with its other limits,
-- so that every process pauses it after the same number of failures and
-- idemhook check can say when a process's setting differs.  3 is the
-- setting's default; the next claim writes the process's own.  The table
-- is made again (SQLite has no ADD COLUMN IF NOT EXISTS), so that a
-- store whose table already has the column migrates too.
CREATE TABLE destinations_15 (
	provider	TEXT	NOT NULL,
	account		TEXT	NOT NULL,
	concurrency	INTEGER	NOT NULL DEFAULT 4,
	rate_ms		INTEGER	NOT NULL DEFAULT 0,
	pause_after	INTEGER	NOT NULL DEFAULT 3,
	next_at		INTEGER	NOT NULL DEFAULT 0,
	failures	INTEGER	NOT NULL DEFAULT 0,
	paused_at	INTEGER,
	probe		INTEGER,
	PRIMARY KEY (provider, account)
);
INSERT INTO destinations_15 (provider, account, concurrency, rate_ms,
    next_at, failures, paused_at, probe)
    SELECT provider, account, concurrency, rate_ms, next_at, failures,
	paused_at, probe
    FROM destinations;
DROP TABLE destinations;
ALTER TABLE destinations_15 RENAME TO destinations;
