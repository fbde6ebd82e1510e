-- Version 4 to 5: a placeholder on branch h9-perf, so that migration 8
-- applies here; the real migration 5 of another branch replaces it.
SELECT 1;
