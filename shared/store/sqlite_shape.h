/*
 * sqlite_shape.h -- whether a SQLite store's schema objects (tables,
 * indexes, views, triggers) are the ones this build creates.
 *
 * A trigger or view planted in a store runs inside every writer that
 * opens it (sqlite_trust.h limits what it may call, not its plain SQL):
 * one that marks each new event done, or deletes payloads, loses events
 * without a word.  restore refuses a copy whose schema differs, and
 * idemhook check reports it in the live store.
 *
 * Borrows db, which must be at this build's schema version (older copies
 * are migrated first).  No state is kept.
 */
#ifndef IH_SQLITE_SHAPE_H
#define IH_SQLITE_SHAPE_H

#include <stddef.h>

#include <sqlite3.h>

/*
 * Compares db's objects with those db/sqlite/schema.sql creates: each
 * difference ("unknown trigger NAME", "changed view NAME", "missing
 * index NAME") joined by "; " into out (cut short when out is full) and
 * their number in *differs, 0 when the schema is this build's.  Returns
 * IH_OK when it could compare, IH_ESTORE or IH_ENOMEM with err filled.
 */
int	sq_shape_check(sqlite3 *db, char *out, size_t outlen, int *differs,
	    char *err, size_t errlen);

#endif /* IH_SQLITE_SHAPE_H */
