-- Version 12 to 13: nothing changes here.  Version 13 rewrote SQLite's
-- CHECK on events.status without IN (...), which SQLite evaluates
-- through a temporary b-tree per written row; PostgreSQL evaluates its
-- IN (...) as = ANY of a constant array, with no such cost.
SELECT 1;
