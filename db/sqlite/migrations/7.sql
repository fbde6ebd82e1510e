-- Version 6 to 7: a placeholder on branch h9-perf, so that migration 8
-- applies here; the real migration 7 of another branch replaces it.
SELECT 1;
