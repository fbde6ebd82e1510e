-- Version 9 to 10: the last health result per provider, and the
-- refused signatures of every host.

-- The last `idemhook health` result per provider (version 10): written
-- by the command and by idemhook work's checks, read by the console,
-- which holds no API key.  findings is the problem lines, one a line.
CREATE TABLE IF NOT EXISTS endpoint_health (
	provider	TEXT	PRIMARY KEY,
	checked_at	BIGINT	NOT NULL,
	outcome		TEXT	NOT NULL,
	problems	BIGINT	NOT NULL,
	findings	TEXT	NOT NULL DEFAULT ''
);

-- Refused signatures per provider and minute (version 10; PostgreSQL
-- only): every host's receivers count here, for idemhook work's alarm
-- and the console.  A SQLite store counts in the file beside it instead
-- (shared/sigfail.h), so that a forged request never takes the store's
-- one write lock.  Rows older than a day are pruned as new ones come.
CREATE TABLE IF NOT EXISTS sigfails (
	provider	TEXT	NOT NULL,
	minute		BIGINT	NOT NULL,
	count		BIGINT	NOT NULL,
	PRIMARY KEY (provider, minute)
);
