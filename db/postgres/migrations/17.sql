-- Version 16 to 17 (issue 40): less of the server's work per event.
-- A payload is stored uncompressed up to about 8 KB (a row is
-- compressed only past toast_tuple_target, not past 2 KB): pglz cost
-- more than the rest of the payload's insert, and a SQLite store keeps
-- payloads uncompressed too.  Rows written before stay as they are.
ALTER TABLE payloads SET (toast_tuple_target = 8160);
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
