-- Version 7 to 8: a placeholder on the health branch only, so that
-- this branch's migration 10 has a chain to follow.  Migration 8 belongs
-- to another change (8: accounts, issue 29; 9: Stripe thin events): at
-- merge, that change's file replaces this one.
SELECT 1;
