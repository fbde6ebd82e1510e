/*
 * store_schema.c -- what both backends' set-up shares about the schema:
 * a store written by a newer build is refused before any migration, so
 * that an older program never writes rows it does not understand.
 */
#include <stdio.h>

#include "ih.h"
#include "store_backend.h"

int
store_schema_newer(int version, char *err, size_t errlen)
{
	if (version <= STORE_SCHEMA_VERSION)
		return IH_OK;
	snprintf(err, errlen, "store schema version %d is newer than this "
	    "build's %d: upgrade idemhook", version, STORE_SCHEMA_VERSION);
	return IH_ECONFIG;
}
