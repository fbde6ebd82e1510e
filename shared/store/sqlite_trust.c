/* sqlite_trust.c -- the store's schema is data, not code (see the .h). */
#include <stdio.h>
#include <string.h>

#include <sqlite3.h>

#include "ih.h"
#include "sqlite_trust.h"

int
sqtrust_harden(sqlite3 *db, char *err, size_t errlen)
{
	int defensive = 0, trusted = 1;

	if (sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1,
	    &defensive) != SQLITE_OK ||
	    sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0,
	    &trusted) != SQLITE_OK || defensive != 1 || trusted != 0) {
		snprintf(err, errlen, "cannot distrust the store's schema "
		    "(SQLITE_DBCONFIG_DEFENSIVE, trusted_schema): SQLite "
		    "3.31 or later is needed, this is %s",
		    sqlite3_libversion());
		return IH_ESTORE;
	}
	return IH_OK;
}

int
sqtrust_refused(const char *msg)
{
	return strstr(msg, "unsafe use of") != NULL;
}

int
sqtrust_recheck(sqlite3 *db)
{
	return sqlite3_exec(db, "SELECT 1 FROM sqlite_master LIMIT 0", NULL,
	    NULL, NULL) == SQLITE_OK ? 0 : 1;
}
