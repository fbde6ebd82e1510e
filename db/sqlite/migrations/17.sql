-- Version 16 to 17: nothing in a SQLite store.  PostgreSQL's version 17
-- stores payloads of up to about 8 KB uncompressed and numbers the
-- objects' history from a sequence (db/postgres/migrations/17.sql).
SELECT 1;
