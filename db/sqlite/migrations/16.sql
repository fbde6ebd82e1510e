-- Version 15 to 16: two indexes fewer to write at every commit (issue
-- 40).  events_received served only the console's hourly series, which
-- now searches events_provider_status a (provider, status) pair at a
-- time; objects_changed served no read (idemhook objects --since reads
-- every object either way).  Each cost a page of the log per commit.
DROP INDEX IF EXISTS events_received;
DROP INDEX IF EXISTS objects_changed;
