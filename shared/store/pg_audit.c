/*
 * pg_audit.c -- PostgreSQL: what store_audit() reports for idemhook
 * check.  The server version; synchronous_commit (what a durable commit
 * relies on); the timeouts that bound a silent server (pg_wait.c); and
 * TLS, which a connection to another host needs with the server's
 * certificate and name verified (sslmode=verify-full): below that,
 * whoever is on the path can read or pose as the store; and any trigger
 * or rule on idemhook's tables, which this build never creates.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "ih.h"
#include "pg_int.h"

/* Reads one setting with SHOW. */
static int
show(struct pgs *st, const char *sql, char *out, size_t len, char *err,
    size_t errlen)
{
	PGresult *res;

	if (pg_ensure(st, err, errlen) != IH_OK)
		return IH_ESTORE;
	res = pg_wait_exec(st, sql);
	if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1)
		return pg_fail(st, res, "cannot read a setting", err, errlen);
	snprintf(out, len, "%s", PQgetvalue(res, 0, 0));
	PQclear(res);
	return IH_OK;
}

/* The connection's value of a libpq option ("" when unset). */
static void
conn_option(PGconn *conn, const char *kw, char *out, size_t len)
{
	PQconninfoOption *all, *o;

	*out = '\0';
	all = PQconninfo(conn);
	for (o = all; o != NULL && o->keyword != NULL; o++)
		if (strcmp(o->keyword, kw) == 0 && o->val != NULL)
			snprintf(out, len, "%s", o->val);
	PQconninfoFree(all);
}

/*
 * 1 for a connection that stays on this machine: a Unix socket, or the
 * loopback names.  Judged by the name asked for, which is also what
 * verify-full checks the certificate against.
 */
static int
local_host(const char *host)
{
	return host == NULL || *host == '\0' || *host == '/' ||
	    *host == '@' || strcmp(host, "localhost") == 0 ||
	    strcmp(host, "127.0.0.1") == 0 || strcmp(host, "::1") == 0;
}

static void
audit_tls(struct pgs *st, struct store_audit *a)
{
	const char *host = PQhost(st->conn);
	const char *proto = PQsslAttribute(st->conn, "protocol");
	char mode[32];

	a->name = "TLS";
	conn_option(st->conn, "sslmode", mode, sizeof(mode));
	if (PQsslInUse(st->conn))
		snprintf(a->value, sizeof(a->value), "in use (%s, sslmode=%s)",
		    proto != NULL ? proto : "?", mode);
	else
		snprintf(a->value, sizeof(a->value), "not in use");
	if (local_host(host)) {
		a->ok = 1;
		if (!PQsslInUse(st->conn))
			snprintf(a->value, sizeof(a->value), "not needed (%s)",
			    host == NULL || *host == '\0' || *host == '/' ?
			    "Unix socket" : "this machine");
		return;
	}
	if (PQsslInUse(st->conn) && strcmp(mode, "verify-full") == 0) {
		a->ok = 1;
		return;
	}
	if (PQsslInUse(st->conn))
		snprintf(a->advice, sizeof(a->advice), "the server's "
		    "certificate is not verified for the name %s, so whoever "
		    "is on the path can pose as the store: use "
		    "sslmode=verify-full and sslrootcert=<the CA's file> in "
		    "IDEMHOOK_DB", host);
	else
		snprintf(a->advice, sizeof(a->advice), "the connection to %s "
		    "is not encrypted: add sslmode=verify-full and "
		    "sslrootcert=<the CA's file> to IDEMHOOK_DB", host);
}

/* What bounds a silent server (pg_wait.c): 0 means nothing does. */
static void
audit_timeouts(struct pgs *st, struct store_audit *a)
{
	char ct[16];

	a->name = "timeouts";
	conn_option(st->conn, "connect_timeout", ct, sizeof(ct));
	snprintf(a->value, sizeof(a->value), "connect_timeout %s s, "
	    "statement wait %ld ms", *ct != '\0' ? ct : "0", st->wait_ms);
	a->ok = st->wait_ms > 0 && strtol(ct, NULL, 10) > 0;
	if (!a->ok)
		snprintf(a->advice, sizeof(a->advice), "a server that stops "
		    "answering holds every delivery: remove connect_timeout=0 "
		    "or statement_timeout=0 from IDEMHOOK_DB (or the role's "
		    "or database's settings)");
}

/*
 * Triggers and rules on idemhook's own tables, in the store's schema:
 * this build creates none, and one planted there runs inside every
 * writer (a trigger that marks each new event done, a rule that turns an
 * insert into nothing).  Other tables of a shared database are not ours.
 */
#define PG_PLANTED_TABLES "('events', 'payloads', 'effects', 'attempts', " \
	"'objects', 'object_events', 'console_signin', 'endpoint_health', " \
	"'sigfails', 'destinations')"
#define PG_PLANTED "SELECT count(*), coalesce(string_agg(what, '; ' " \
	"ORDER BY what), '') FROM (SELECT 'unknown trigger ' || t.tgname " \
	"|| ' on ' || c.relname AS what FROM pg_trigger t JOIN pg_class c " \
	"ON c.oid = t.tgrelid WHERE NOT t.tgisinternal AND " \
	"c.relnamespace = current_schema()::regnamespace AND c.relname IN " \
	PG_PLANTED_TABLES " UNION ALL SELECT 'unknown rule ' || r.rulename " \
	"|| ' on ' || c.relname FROM pg_rewrite r JOIN pg_class c ON " \
	"c.oid = r.ev_class WHERE r.rulename <> '_RETURN' AND " \
	"c.relnamespace = current_schema()::regnamespace AND c.relname IN " \
	PG_PLANTED_TABLES ") AS planted"

static int
audit_planted(struct pgs *st, struct store_audit *a, char *err,
    size_t errlen)
{
	PGresult *res;

	a->name = "schema";
	if (pg_ensure(st, err, errlen) != IH_OK)
		return IH_ESTORE;
	res = pg_wait_exec(st, PG_PLANTED);
	if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1)
		return pg_fail(st, res, "cannot read the store's triggers", err,
		    errlen);
	a->ok = strcmp(PQgetvalue(res, 0, 0), "0") == 0;
	if (a->ok)
		snprintf(a->value, sizeof(a->value), "no trigger or rule on "
		    "idemhook's tables");
	else {
		snprintf(a->value, sizeof(a->value), "%s",
		    PQgetvalue(res, 0, 1));
		snprintf(a->advice, sizeof(a->advice), "a trigger or rule "
		    "planted on the store's tables runs inside every writer: "
		    "look at it with psql, then drop it or restore a sound "
		    "dump");
	}
	PQclear(res);
	return IH_OK;
}

int
pg_audit(struct store *base, int (*fn)(void *, const struct store_audit *),
    void *arg, char *err, size_t errlen)
{
	struct pgs *st = pg_of(base);
	struct store_audit a;
	int rc;

	memset(&a, 0, sizeof(a));
	a.name = "server_version";
	rc = show(st, "SHOW server_version", a.value, sizeof(a.value), err,
	    errlen);
	if (rc != IH_OK)
		return rc;
	a.ok = PQserverVersion(st->conn) >= 110000;
	if (!a.ok)
		snprintf(a.advice, sizeof(a.advice), "PostgreSQL 11 or later "
		    "is needed");
	rc = fn(arg, &a);
	if (rc != IH_OK)
		return rc;
	memset(&a, 0, sizeof(a));
	a.name = "synchronous_commit";
	/*
	 * The store sets it for its session (pg_wait.c) and per relaxed
	 * transaction; reset_val is the server's, role's or URI's default.
	 */
	rc = show(st, "SELECT reset_val FROM pg_settings"
	    " WHERE name = 'synchronous_commit'", a.value, sizeof(a.value),
	    err, errlen);
	if (rc != IH_OK)
		return rc;
	a.ok = 1;
	rc = fn(arg, &a);
	if (rc != IH_OK)
		return rc;
	memset(&a, 0, sizeof(a));
	audit_timeouts(st, &a);
	rc = fn(arg, &a);
	if (rc != IH_OK)
		return rc;
	memset(&a, 0, sizeof(a));
	audit_tls(st, &a);
	rc = fn(arg, &a);
	if (rc != IH_OK)
		return rc;
	memset(&a, 0, sizeof(a));
	rc = audit_planted(st, &a, err, errlen);
	if (rc != IH_OK)
		return rc;
	return fn(arg, &a);
}
