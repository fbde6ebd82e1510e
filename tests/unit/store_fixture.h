/*
 * store_fixture.h -- a fresh store for the unit tests that run against
 * each backend (test_store_contract.c, test_console.c, test_store_health.c,
 * test_console_throttle.c): an SQLite file in a temporary folder, or a
 * database of its own on the PostgreSQL server that IH_PG_URI names,
 * dropped afterwards.
 */
#ifndef IH_STORE_FIXTURE_H
#define IH_STORE_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libpq-fe.h>

#include "ih.h"
#include "store.h"

struct unit_store {
	int		 pg;
	char		 dir[64];
	char		 db[64];
	char		 loc[1024];
	struct store	*st;
};

/* Runs one statement on the server's admin database; 0 or -1. */
static inline int
unit_pg_admin(const char *sql)
{
	PGconn *c = PQconnectdb(getenv("IH_PG_URI"));
	PGresult *r;
	int ok;

	if (PQstatus(c) != CONNECTION_OK) {
		fprintf(stderr, "admin: %s", PQerrorMessage(c));
		PQfinish(c);
		return -1;
	}
	r = PQexec(c, sql);
	ok = PQresultStatus(r) == PGRES_COMMAND_OK;
	if (!ok)
		fprintf(stderr, "admin: %s", PQresultErrorMessage(r));
	PQclear(r);
	PQfinish(c);
	return ok ? 0 : -1;
}

static inline int
unit_store_open(struct unit_store *f, enum store_durability durable_as)
{
	struct store_opts o = { NULL, STORE_RELAXED, 2000 };
	char err[STORE_ERR_MAX];

	o.path = f->loc;
	o.durable_as = durable_as;
	if (store_open(&o, &f->st, err, sizeof(err)) != IH_OK) {
		fprintf(stderr, "open %s: %s\n", f->loc, err);
		return -1;
	}
	return 0;
}

/* An SQLite store in /tmp/ih-NAME-XXXXXX; 0 or -1. */
static inline int
unit_store_sqlite(struct unit_store *f, const char *name,
    enum store_durability durable_as)
{
	snprintf(f->dir, sizeof(f->dir), "/tmp/ih-%s-XXXXXX", name);
	if (mkdtemp(f->dir) == NULL)
		return -1;
	snprintf(f->loc, sizeof(f->loc), "%s/events.db", f->dir);
	return unit_store_open(f, durable_as);
}

/* A store in a new database ih_NAME_PID_N on IH_PG_URI's server. */
static inline int
unit_store_pg(struct unit_store *f, const char *name,
    enum store_durability durable_as)
{
	static int seq;
	const char *q = strchr(getenv("IH_PG_URI"), '?');
	char sql[128];

	f->pg = 1;
	snprintf(f->db, sizeof(f->db), "ih_%s_%ld_%d", name, (long)getpid(),
	    ++seq);
	snprintf(sql, sizeof(sql), "CREATE DATABASE %s", f->db);
	if (unit_pg_admin(sql) != 0)
		return -1;
	snprintf(f->loc, sizeof(f->loc), "postgresql:///%s%s", f->db,
	    q != NULL ? q : "");
	return unit_store_open(f, durable_as);
}

/* Closes the store and removes it; -1 when its folder stays. */
static inline int
unit_store_drop(struct unit_store *f)
{
	char cmd[160];

	store_close(f->st);
	f->st = NULL;
	if (f->pg) {
		snprintf(cmd, sizeof(cmd), "DROP DATABASE IF EXISTS %s",
		    f->db);
		unit_pg_admin(cmd);
	} else if (f->dir[0] != '\0') {
		snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
		if (system(cmd) != 0) {
			fprintf(stderr, "cannot remove %s\n", f->dir);
			return -1;
		}
	}
	return 0;
}

/* A cmocka setup: *state a fresh store on SQLite, or PostgreSQL if pg. */
static inline int
unit_store_setup(void **state, int pg, const char *name,
    enum store_durability durable_as)
{
	struct unit_store *f = calloc(1, sizeof(*f));

	*state = f;
	if (f == NULL)
		return -1;
	return pg ? unit_store_pg(f, name, durable_as) :
	    unit_store_sqlite(f, name, durable_as);
}

/* The cmocka teardown of unit_store_setup(). */
static inline int
unit_store_teardown(void **state)
{
	struct unit_store *f = *state;
	int rc;

	rc = unit_store_drop(f);
	free(f);
	return rc;
}

/*
 * The cmocka setups of a test file that runs on each backend: one that
 * defines UNIT_STORE_NAME (and UNIT_STORE_DURABLE, else STORE_DURABLE)
 * before it includes this header gets setup_sqlite() and setup_pg().
 */
#ifdef UNIT_STORE_NAME
#ifndef UNIT_STORE_DURABLE
#define UNIT_STORE_DURABLE	STORE_DURABLE
#endif
static int
setup_sqlite(void **state)
{
	return unit_store_setup(state, 0, UNIT_STORE_NAME, UNIT_STORE_DURABLE);
}

static int
setup_pg(void **state)
{
	return unit_store_setup(state, 1, UNIT_STORE_NAME, UNIT_STORE_DURABLE);
}
#endif

/*
 * Runs the group of tests on PostgreSQL when IH_PG_URI names a server
 * (name ends in ": postgresql"); as root, which make check runs as, a
 * missing server is a failure, said in one TAP line.  The failures.
 */
#define UNIT_RUN_PG(name, tests) \
	unit_run_pg(name, tests, sizeof(tests) / sizeof((tests)[0]))

static inline int
unit_run_pg(const char *name, const struct CMUnitTest *tests, size_t n)
{
	const char *uri = getenv("IH_PG_URI");

	if (uri != NULL && *uri != '\0')
		return _cmocka_run_group_tests(name, tests, n, NULL, NULL);
	if (geteuid() != 0)
		return 0;
	/* make check starts a server: without one, say so. */
	printf("not ok - %s: IH_PG_URI is unset (tests/run.sh starts a "
	    "server)\n", name);
	return 1;
}

/*
 * The main() of a test file that runs just CASES(setup), its list of
 * UNIT_STORE_CASEs, on each backend: as "NAME: sqlite", then as
 * "NAME: postgresql" (UNIT_RUN_PG).  Exits 1 when a test failed.
 */
#define UNIT_STORE_MAIN(name) \
int \
main(void) \
{ \
	const struct CMUnitTest sqlite[] = { CASES(setup_sqlite) }; \
	const struct CMUnitTest pg[] = { CASES(setup_pg) }; \
	int failed; \
 \
	failed = cmocka_run_group_tests_name(name ": sqlite", sqlite, NULL, \
	    NULL); \
	failed += UNIT_RUN_PG(name ": postgresql", pg); \
	return failed != 0; \
}

/* One test on a fresh store made by setup. */
#define UNIT_STORE_CASE(test, setup) \
	cmocka_unit_test_setup_teardown(test, setup, unit_store_teardown)

#endif
