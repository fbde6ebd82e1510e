-- Version 9 to 10: the last health result per provider.

-- The last `idemhook health` result per provider (version 10): written
-- by the command and by idemhook work's checks, read by the console,
-- which holds no API key.  findings is the problem lines, one a line.
CREATE TABLE IF NOT EXISTS endpoint_health (
	provider	TEXT	PRIMARY KEY,
	checked_at	INTEGER	NOT NULL,
	outcome		TEXT	NOT NULL,
	problems	INTEGER	NOT NULL,
	findings	TEXT	NOT NULL DEFAULT ''
);
