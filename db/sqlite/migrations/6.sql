-- Version 5 to 6: a placeholder on branch h9-perf, so that migration 8
-- applies here; the real migration 6 of another branch replaces it.
SELECT 1;
