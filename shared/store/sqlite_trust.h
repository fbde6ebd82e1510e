/*
 * sqlite_trust.h -- the store's schema is data, not code.
 *
 * Whoever can write the store file can plant a trigger, view, CHECK or
 * index expression in it, which SQLite would then run inside every
 * writer: the receivers, the console, and root's idemhook.  So every
 * connection the store opens turns on SQLITE_DBCONFIG_DEFENSIVE (no
 * writable_schema, no direct writes to shadow tables or the page map)
 * and turns off trusted schema: code found in the schema may no longer
 * call SQL functions not marked innocuous (json_*, fts and rtree
 * helpers, any application function) nor use virtual tables.  A write
 * that fires such planted code then fails (503 for a delivery), rather
 * than run it.  Plain SQL in a planted trigger still runs: whoever can
 * write the file can change its rows anyway.
 *
 * Borrows db; failure (an SQLite too old to know the options, 3.31 or
 * later is needed) is IH_ESTORE with the cause in err.
 */
#ifndef IH_SQLITE_TRUST_H
#define IH_SQLITE_TRUST_H

#include <stddef.h>

#include <sqlite3.h>

int	sqtrust_harden(sqlite3 *db, char *err, size_t errlen);

/* 1 when msg, an error's text, says planted code was refused. */
int	sqtrust_refused(const char *msg);

/*
 * Once planted code was refused, the connection keeps the schema it
 * read, and every later statement is compiled against it and refused
 * again, even once the planted code is gone: nothing it runs checks the
 * schema's version any more.  Called before the next transaction, this
 * reads sqlite_master, which checks the version and reloads a changed
 * schema, so the store works again as soon as it is cleaned.  Returns
 * 0 (checked) or 1 (could not check: call again next time).
 */
int	sqtrust_recheck(sqlite3 *db);

#endif
