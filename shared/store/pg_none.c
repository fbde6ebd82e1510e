/*
 * pg_none.c -- the PostgreSQL backend of a build without libpq (make
 * static, NO_PG=1): libpq cannot be linked statically on Debian (its
 * static archive needs Kerberos and LDAP archives that are not packaged),
 * so a static program keeps SQLite only and says so.  No PostgreSQL
 * store ever opens here, so none of its operations (the console's
 * included: pg_console.c is left out too) needs a stub of its own.
 */
#include <stdio.h>

#include "ih.h"
#include "store_backend.h"

int
store_pg_open(const struct store_opts *opts, struct store **out, char *err,
    size_t errlen)
{
	(void)opts;
	*out = NULL;
	snprintf(err, errlen, "this build has no PostgreSQL support (a static "
	    "build is SQLite-only): use the packaged programs");
	return IH_ECONFIG;
}
