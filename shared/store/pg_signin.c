/*
 * pg_signin.c -- PostgreSQL: the console's sign-in budgets
 * (store_signin.h).  Each statement runs alone in autocommit; INSERT ...
 * ON CONFLICT takes the row's lock, so two hosts' charges of one key
 * are counted one after the other.
 */
#include <string.h>

#include <libpq-fe.h>

#include "ih.h"
#include "pg_int.h"

/* As sqlite_signin.c's: every SET sees the row as it was. */
static const char SQL_CHARGE[] =
    "INSERT INTO console_signin AS s (key, failures, window_ms) "
    "VALUES ($1, 1, $2) ON CONFLICT (key) DO UPDATE SET "
    "failures = CASE WHEN s.window_ms <= $2 - $3 THEN 1 "
    "ELSE s.failures + 1 END, "
    "window_ms = CASE WHEN s.window_ms <= $2 - $3 THEN $2 "
    "ELSE s.window_ms END "
    "WHERE s.window_ms <= $2 - $3 OR s.failures < $4 "
    "RETURNING failures, window_ms";

static const char SQL_READ[] =
    "SELECT failures, window_ms FROM console_signin WHERE key = $1";

static const char SQL_REFUND[] =
    "UPDATE console_signin SET failures = greatest(failures - 1, 0) "
    "WHERE key = $1";

static const char SQL_FORGET[] = "DELETE FROM console_signin WHERE key = $1";

static const char SQL_PRUNE[] =
    "DELETE FROM console_signin WHERE window_ms < $1";

/*
 * Runs sql, which answers key's budget (failures, window) in one row or
 * none, into *out; *got is 1 when there was the row.
 */
static int
budget_query(struct pgs *st, const char *sql, const char *types,
    const struct pg_params *p, struct store_signin *out, int *got,
    char *err, size_t errlen)
{
	PGresult *r;

	r = pg_exec_sql(st, sql, types, p, PGRES_TUPLES_OK, "sign-in budget",
	    err, errlen);
	if (r == NULL)
		return IH_ESTORE;
	if (PQntuples(r) == 1) {
		*got = 1;
		out->failures = pg_getint(r, 0, 0);
		out->window_ms = pg_getint(r, 0, 1);
	}
	PQclear(r);
	return IH_OK;
}

/* Reads key's budget into *out (nothing when it has none). */
static int
read_budget(struct pgs *st, const char *key, struct store_signin *out,
    char *err, size_t errlen)
{
	struct pg_params p;
	int got = 0;

	memset(&p, 0, sizeof(p));
	pg_text(&p, key);
	return budget_query(st, SQL_READ, "t", &p, out, &got, err, errlen);
}

int
pg_signin_charge(struct store *base, const char *key, int64_t now_ms,
    int64_t window_ms, long max, struct store_signin *out, char *err,
    size_t errlen)
{
	struct pgs *st = pg_of(base);
	struct pg_params p;
	int rc;

	/* A spent budget is answered from a read, as on SQLite. */
	rc = read_budget(st, key, out, err, errlen);
	if (rc != IH_OK || (out->failures >= max &&
	    out->window_ms > now_ms - window_ms))
		return rc;
	memset(&p, 0, sizeof(p));
	pg_text(&p, key);
	pg_int(&p, now_ms);
	pg_int(&p, window_ms);
	pg_int(&p, max);
	rc = budget_query(st, SQL_CHARGE, "tiii", &p, out, &out->charged, err,
	    errlen);
	/* Another process took the last attempt since the read. */
	if (rc == IH_OK && !out->charged)
		return read_budget(st, key, out, err, errlen);
	return rc;
}

int
pg_signin_refund(struct store *base, const char *key, int forget, char *err,
    size_t errlen)
{
	struct pg_params p;
	long n;

	memset(&p, 0, sizeof(p));
	pg_text(&p, key);
	return pg_exec_change(pg_of(base), forget ? SQL_FORGET : SQL_REFUND,
	    "t", &p, "sign-in budget", &n, err, errlen);
}

int
pg_signin_prune(struct store *base, int64_t before_ms, char *err,
    size_t errlen)
{
	struct pg_params p;
	long n;

	memset(&p, 0, sizeof(p));
	pg_int(&p, before_ms);
	return pg_exec_change(pg_of(base), SQL_PRUNE, "i", &p,
	    "sign-in budget", &n, err, errlen);
}
