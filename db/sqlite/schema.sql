-- idemhook store schema.  Applied on every open of a store whose
-- user_version is 0 (a new file); every statement is idempotent, so
-- applying it twice changes nothing.  It is always the whole current
-- schema.  A store written by an older version is brought up to date by
-- db/sqlite/migrations/<N>.sql instead, each taking version N-1 to N
-- (migrate() in shared/store/sqlite_conn.c applies them); a change here
-- needs its migration, the same change in db/postgres/, and a raised
-- STORE_SCHEMA_VERSION (shared/store/store.h).
--
-- Times are Unix milliseconds.  One row is one event, whatever the number
-- of deliveries: UNIQUE(provider, account, event_id) is what makes a
-- second delivery a duplicate rather than a second charge.

CREATE TABLE IF NOT EXISTS events (
	id		INTEGER PRIMARY KEY,
	provider	TEXT	NOT NULL,
	event_id	TEXT	NOT NULL,
	event_type	TEXT	NOT NULL,
	-- A finer type where the provider has one (GitHub's "action").
	subtype		TEXT,
	-- Events sharing an order key are processed in arrival order.
	order_key	TEXT,
	-- The body is in payloads (version 6), apart from the row that
	-- each status change rewrites.
	-- The headers needed to re-verify the signature, "name: value\n".
	headers		TEXT	NOT NULL DEFAULT '',
	received_at	INTEGER	NOT NULL,
	last_seen_at	INTEGER	NOT NULL,
	duplicates	INTEGER	NOT NULL DEFAULT 0,
	-- The CHECK joins = terms with OR, not IN (...) (version 13): SQLite
	-- checks an IN list of more than two constants through a temporary
	-- b-tree built for each statement that writes the row.
	status		TEXT	NOT NULL DEFAULT 'received'
	    CHECK (status = 'received' OR status = 'processing' OR
	    status = 'done' OR status = 'failed' OR status = 'dead' OR
	    status = 'quarantined' OR status = 'held'),
	attempts	INTEGER	NOT NULL DEFAULT 0,
	next_attempt_at	INTEGER	NOT NULL DEFAULT 0,
	lease_until	INTEGER,
	lease_owner	TEXT,
	last_error	TEXT,
	done_at		INTEGER,
	purged_at	INTEGER,
	-- The lowercase hex SHA-256 of the payload as received (version 2):
	-- the same signed bytes under another identity are a replay.
	fingerprint	TEXT,
	-- The provider's API version of the event (version 7), or NULL.
	api_version	TEXT,
	-- The account the event came to (version 8; handlers/README.md,
	-- Accounts): 'default' for the implicit one of an installation
	-- without accounts.
	account		TEXT	NOT NULL DEFAULT 'default',
	-- 1 for a Stripe thin event (version 9) that idemhook work has not
	-- fetched yet: the receivers never claim it.
	needs_fetch	INTEGER	NOT NULL DEFAULT 0,
	-- Stripe Connect's "account" of the signed body (version 11), or
	-- NULL: the provider's own sub-account the event is about.
	source_account	TEXT,
	UNIQUE (provider, account, event_id)
);

CREATE INDEX IF NOT EXISTS events_source_account
    ON events (source_account) WHERE source_account IS NOT NULL;
-- The work queue (version 14): the due rows in id order, so that a claim
-- of the oldest due event reads from the front instead of sorting every
-- due row.  Written with = and OR: an IN list of more than two values
-- makes SQLite build a temporary b-tree each time a row is written.
CREATE INDEX IF NOT EXISTS events_due ON events (id)
    WHERE status = 'received' OR status = 'processing' OR status = 'failed';
CREATE INDEX IF NOT EXISTS events_order ON events (provider, order_key)
    WHERE order_key IS NOT NULL;
CREATE INDEX IF NOT EXISTS events_fingerprint ON events (provider, fingerprint)
    WHERE fingerprint IS NOT NULL;
-- The console's counts and last deliveries (version 3), and its hourly
-- series, a search per (provider, status) pair for a window of
-- received_at: no index on received_at alone (version 16), which cost
-- every commit a page and served only that series.
CREATE INDEX IF NOT EXISTS events_provider_status
    ON events (provider, status, received_at);

-- Each event's body exactly as received (version 6), written once with
-- the event and never rewritten: a status change rewrites only the small
-- events row.  Purging a payload (setting purged_at) deletes its row.
CREATE TABLE IF NOT EXISTS payloads (
	event		INTEGER	PRIMARY KEY REFERENCES events (id)
	    ON DELETE CASCADE,
	payload		BLOB	NOT NULL
);
CREATE TRIGGER IF NOT EXISTS events_purge_payload
    AFTER UPDATE OF purged_at ON events WHEN new.purged_at IS NOT NULL
BEGIN
	DELETE FROM payloads WHERE event = new.id;
END;

-- effects, attempts and object_events are WITHOUT ROWID (version 6):
-- their rows are small and keyed by the primary key alone, so each is
-- written in one b-tree, not in the table and again in the index that
-- enforces the key (objects keeps its rowid: its rows hold JSON of up to
-- 1 MiB, which an index b-tree would push to overflow pages).
--
-- The local effects of an event's switch, written in the same
-- transaction that marks the event done: one row per event and kind,
-- whatever the number of attempts or crashes.
CREATE TABLE IF NOT EXISTS effects (
	event		INTEGER	NOT NULL REFERENCES events (id)
	    ON DELETE CASCADE,
	kind		TEXT	NOT NULL,
	created_at	INTEGER	NOT NULL,
	PRIMARY KEY (event, kind)
) WITHOUT ROWID;

-- One row per processing attempt, for the operator.
CREATE TABLE IF NOT EXISTS attempts (
	event		INTEGER	NOT NULL REFERENCES events (id)
	    ON DELETE CASCADE,
	attempt		INTEGER	NOT NULL,
	started_at	INTEGER	NOT NULL,
	finished_at	INTEGER,
	outcome		TEXT,
	error		TEXT,
	PRIMARY KEY (event, attempt)
) WITHOUT ROWID;

-- The current state of each object the switches map events to (version
-- 4): one row per (provider, kind, object_id), set by the event with the
-- greatest key (source_at, rank, event_id) under the ordering guard
-- (shared/object.h).  Not tied to events: purging events keeps it.
CREATE TABLE IF NOT EXISTS objects (
	provider	TEXT	NOT NULL,
	account		TEXT	NOT NULL DEFAULT 'default',
	kind		TEXT	NOT NULL,
	object_id	TEXT	NOT NULL,
	status		TEXT	NOT NULL DEFAULT '',
	-- The object's JSON as the event carried it, checked by the strict
	-- parser; NULL when the event carried none (a bare tombstone).
	object		TEXT,
	source_at	INTEGER	NOT NULL,
	rank		INTEGER	NOT NULL,
	event_id	TEXT	NOT NULL,
	deleted		INTEGER	NOT NULL DEFAULT 0,
	created_at	INTEGER	NOT NULL,
	changed_at	INTEGER	NOT NULL,
	PRIMARY KEY (provider, account, kind, object_id)
);
-- No index on changed_at (version 16): no read of the programs' used
-- one, and each event's switch wrote a page to it.

-- Every event that touched an object, with the guard's verdict.
CREATE TABLE IF NOT EXISTS object_events (
	provider	TEXT	NOT NULL,
	account		TEXT	NOT NULL DEFAULT 'default',
	kind		TEXT	NOT NULL,
	object_id	TEXT	NOT NULL,
	event_id	TEXT	NOT NULL,
	event_type	TEXT	NOT NULL,
	status		TEXT	NOT NULL DEFAULT '',
	source_at	INTEGER	NOT NULL,
	rank		INTEGER	NOT NULL,
	deleted		INTEGER	NOT NULL DEFAULT 0,
	verdict		TEXT	NOT NULL
	    CHECK (verdict = 'applied' OR verdict = 'stale' OR
	    verdict = 'tied'),
	recorded_at	INTEGER	NOT NULL,
	seq		INTEGER	NOT NULL,
	PRIMARY KEY (provider, account, kind, object_id, event_id)
) WITHOUT ROWID;

-- The applications' interface, version 1: read-only views whose
-- columns are promised across upgrades (the tables behind may change).
-- Times are Unix milliseconds; deleted is 0 or 1.
CREATE VIEW IF NOT EXISTS idemhook_objects AS
    SELECT provider, kind, object_id, status, object AS object_json,
	deleted, source_at, event_id, created_at, changed_at, account
    FROM objects;
CREATE VIEW IF NOT EXISTS idemhook_object_events AS
    SELECT provider, kind, object_id, event_id, event_type, status,
	source_at, deleted, verdict, recorded_at, account
    FROM object_events;
CREATE VIEW IF NOT EXISTS idemhook_views AS SELECT 1 AS version;

-- Failed console sign-ins per budget (version 5): one row per key, the
-- hex SHA-256 of a client address and user name, or of a user name
-- (shared/console_throttle.h).  Every console process, FastCGI or plain
-- CGI, on any host of the store, counts against the same rows.  A row
-- whose window has passed counts as empty and is pruned.
CREATE TABLE IF NOT EXISTS console_signin (
	key		TEXT	PRIMARY KEY,
	failures	INTEGER	NOT NULL,
	window_ms	INTEGER	NOT NULL
);
CREATE INDEX IF NOT EXISTS console_signin_window
    ON console_signin (window_ms);

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

-- The state of each forwarding destination (version 12; issue 41,
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
	concurrency	INTEGER	NOT NULL DEFAULT 4,
	-- Milliseconds between two deliveries (_FORWARD_RATE), 0: no limit.
	rate_ms		INTEGER	NOT NULL DEFAULT 0,
	-- Failures in a row that pause it (_FORWARD_PAUSE_AFTER), 0: never
	-- (version 15).
	pause_after	INTEGER	NOT NULL DEFAULT 3,
	-- No delivery starts before this (the rate).
	next_at		INTEGER	NOT NULL DEFAULT 0,
	-- Deliveries failed in a row for a reason a retry may cure.
	failures	INTEGER	NOT NULL DEFAULT 0,
	-- Set while paused: only the probe (an event's id) is delivered.
	paused_at	INTEGER,
	probe		INTEGER,
	PRIMARY KEY (provider, account)
);
