-- Version 15 to 16: reserved for another branch's migration (schema
-- numbers are handed out per branch); a merge replaces this file.
SELECT 1;
