-- Version 16 to 17: nothing in a SQLite store.  PostgreSQL's version 17
-- compresses payloads with lz4 where the server has it and numbers the
-- objects' history from a sequence (db/postgres/migrations/17.sql).
SELECT 1;
