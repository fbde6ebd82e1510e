-- Version 16 to 17 (issue 40): less of the server's work per event.
-- A payload of over about 2 KB is compressed with lz4 instead of pglz,
-- where the server has lz4 (PostgreSQL 14 or later built with it):
-- pglz cost more than the rest of the payload's insert, lz4 about an
-- eighth of it, for about the same size.  Payloads stored before stay as
-- they are; a server without lz4 keeps pglz.
DO $$
BEGIN
	IF current_setting('server_version_num')::int >= 140000 THEN
		EXECUTE 'ALTER TABLE payloads ALTER COLUMN payload'
		    || ' SET COMPRESSION lz4';
	END IF;
EXCEPTION WHEN OTHERS THEN
	-- A server built without lz4: pglz, as before.
	NULL;
END
$$;
-- An object's history is numbered from one sequence for all objects,
-- not by reading the object's greatest number (a read that grew with
-- its history).  Taken under the object row's lock, each object's
-- numbers still rise in the order its events were recorded; the
-- sequence starts past every number already given.
CREATE SEQUENCE IF NOT EXISTS object_events_seq;
SELECT setval('object_events_seq',
    (SELECT coalesce(max(seq), 0) + 1 FROM object_events), false);
ALTER SEQUENCE object_events_seq OWNED BY object_events.seq;
ALTER TABLE object_events ALTER COLUMN seq
    SET DEFAULT nextval('object_events_seq');
