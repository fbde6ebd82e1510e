-- Version 8 to 9: a placeholder on the health branch only, so that
-- this branch's migration 10 has a chain to follow.  Migration 9 belongs
-- to another change (8: accounts, issue 29; 9: Stripe thin events): at
-- merge, that change's file replaces this one.
SELECT 1;
