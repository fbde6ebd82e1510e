-- Version 4 to 5: the console's sign-in budgets.
-- Failed console sign-ins per budget (version 5): one row per key, the
-- hex SHA-256 of a client address and user name, or of a user name
-- (shared/console_throttle.h).  Every console process, FastCGI or plain
-- CGI, on any host of the store, counts against the same rows.  A row
-- whose window has passed counts as empty and is pruned.
CREATE TABLE IF NOT EXISTS console_signin (
	key		TEXT	PRIMARY KEY,
	failures	BIGINT	NOT NULL,
	window_ms	BIGINT	NOT NULL
);
CREATE INDEX IF NOT EXISTS console_signin_window
    ON console_signin (window_ms);
