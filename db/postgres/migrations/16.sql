-- Version 15 to 16: nothing to change here.  The SQLite store's version
-- 16 drops its index on received_at and the one on objects' changed_at,
-- pages of its log at every commit; PostgreSQL's console and
-- idemhook objects --since still search them by their values.
SELECT 1;
