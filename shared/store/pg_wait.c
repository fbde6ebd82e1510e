/*
 * pg_wait.c -- PostgreSQL: every wait on the server is bounded.
 *
 * A server that accepts TCP and then says nothing (a frozen host, a
 * pooler at its limit, a firewall that drops) must not hold a delivery
 * past the provider's own timeout.  So the connection is opened with
 * connect_timeout and TCP keepalives unless the URI sets its own, the
 * session gets a statement_timeout unless the URI, role or database set
 * one, and every round trip runs on libpq's asynchronous calls with a
 * deadline of that statement_timeout plus a little: a server that has
 * not answered by then is silent, not slow.  Its connection is dropped
 * (the answer is IH_ESTORE, 503 for a delivery) and, after a short pause
 * in which calls fail at once, opened anew, so a writer recovers by
 * itself when the server comes back.  Every failure is said here too
 * (pg_fail()), and a connection found broken is marked to be reopened.
 *
 * Statements whose answer only matters if it is an error (SAVEPOINT,
 * RELEASE, an effect's or a history row's insert) are deferred: sent
 * in libpq's pipeline mode without waiting, and read with the next
 * statement that needs its answer, in one round trip ending in a Sync.
 * A Sync inside BEGIN .. COMMIT commits nothing.  A deferred statement
 * that failed is the answer of that round trip, so its error is never
 * lost; the wait for each answer keeps the same deadline.  A batch's
 * inserts (and its BEGIN) are sent the same way, their answers kept
 * (pg_wait_kept()).
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "clock.h"
#include "ih.h"
#include "pg_int.h"

/* Copies libpq's message into err on one line. */
static void
pg_message(const char *msg, const char *what, char *err, size_t errlen)
{
	size_t i;

	snprintf(err, errlen, "%s: %s", what, msg != NULL && *msg != '\0' ?
	    msg : "unknown error");
	for (i = 0; err[i] != '\0'; i++)
		if (err[i] == '\n' || err[i] == '\r')
			err[i] = ' ';
	while (i > 0 && err[i - 1] == ' ')
		err[--i] = '\0';
}

int
pg_fail(struct pgs *st, PGresult *res, const char *what, char *err,
    size_t errlen)
{
	const char *msg = res != NULL ? PQresultErrorMessage(res) : NULL;
	const char *state = res != NULL ?
	    PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;

	if (msg == NULL || *msg == '\0')
		msg = st->conn != NULL ? PQerrorMessage(st->conn) : st->why;
	if (state != NULL && strcmp(state, "55P03") == 0)
		/* lock_timeout: say it as SQLite's busy timeout says it. */
		snprintf(err, errlen, "%s: the store is locked: other "
		    "transactions held it past the busy timeout (%ld ms)",
		    what, st->busy_timeout_ms);
	else
		pg_message(msg, what, err, errlen);
	PQclear(res);
	/* A broken connection is reopened by the next call. */
	if (st->conn != NULL && PQstatus(st->conn) != CONNECTION_OK)
		st->ready = 0;
	return IH_ESTORE;
}

/*
 * The defaults, each used only when the URI (or PGCONNECT_TIMEOUT and
 * friends) does not set it: a connection is refused after 3 s, an idle
 * one whose peer died is dropped after 10 + 3 * 5 s, and data unacknowledged
 * for 10 s breaks the connection.
 */
static const char *const pg_defaults[][2] = {
	{ "connect_timeout", "3" },
	{ "keepalives", "1" },
	{ "keepalives_idle", "10" },
	{ "keepalives_interval", "5" },
	{ "keepalives_count", "3" },
	{ "tcp_user_timeout", "10000" },
};
#define PG_NDEFAULTS	(sizeof(pg_defaults) / sizeof(pg_defaults[0]))

/*
 * After a failed or silent connection, opening one fails at once this
 * long, in the whole process: every thread and every store opened anew
 * (a receiver opens its store again for the next request), so deliveries
 * queued behind a silent server do not each wait its connect_timeout.
 */
#define PG_PAUSE_MS	1000

static pthread_mutex_t	pause_lock = PTHREAD_MUTEX_INITIALIZER;
static int64_t		pause_until;	/* monotonic ms */
static char		pause_why[160];

static void
pause_set(const char *why)
{
	pthread_mutex_lock(&pause_lock);
	pause_until = clock_mono_ms() + PG_PAUSE_MS;
	snprintf(pause_why, sizeof(pause_why), "%s", why);
	pthread_mutex_unlock(&pause_lock);
}

/* 1 while paused, with the cause of the pause in why. */
static int
paused(char *why, size_t len)
{
	int on;

	pthread_mutex_lock(&pause_lock);
	on = pause_until > clock_mono_ms();
	if (on)
		snprintf(why, len, "%s", pause_why);
	pthread_mutex_unlock(&pause_lock);
	return on;
}
/* How much longer a statement may run than a wait for a lock. */
#define PG_STMT_SLACK_MS	500
/* How long past statement_timeout the client still waits. */
#define PG_GRACE_MS	250

/* 1 when this libpq knows the keyword (tcp_user_timeout needs 12). */
static int
known(const PQconninfoOption *all, const char *kw)
{
	const PQconninfoOption *o;

	for (o = all; o != NULL && o->keyword != NULL; o++)
		if (strcmp(o->keyword, kw) == 0)
			return 1;
	return 0;
}

/* Drops the connection of a silent server; the next call reopens it. */
static void
drop_silent(struct pgs *st, const char *what)
{
	snprintf(st->why, sizeof(st->why), "the store did not answer %s "
	    "within %ld ms (connection dropped)", what, st->wait_ms);
	PQfinish(st->conn);
	st->conn = NULL;
	st->ready = 0;
	st->silent = 1;
	st->npend = 0;
	pause_set(st->why);
}

/*
 * Waits until the socket is ready for events or the deadline (0: none)
 * passes.  Returns 1 ready, 0 deadline passed, -1 error.
 */
static int
wait_sock(PGconn *conn, short events, int64_t deadline)
{
	struct pollfd pfd;
	int64_t left;
	int n;

	pfd.fd = PQsocket(conn);
	pfd.events = events;
	if (pfd.fd < 0)
		return -1;
	for (;;) {
		left = deadline > 0 ? deadline - clock_mono_ms() : -1;
		if (deadline > 0 && left <= 0)
			return 0;
		n = poll(&pfd, 1, left > 1000000 ? 1000000 : (int)left);
		if (n >= 0 || errno != EINTR)
			return n > 0 ? 1 : n;
	}
}

/*
 * Collects the results of the query just sent: the last one, as PQexec
 * gives it.  NULL when the server was silent past the deadline (st->why
 * says so) or the connection is gone.
 */
static PGresult *
collect(struct pgs *st, const char *what)
{
	PGconn *conn = st->conn;
	PGresult *last = NULL, *r;
	int64_t deadline;
	int f, w;

	deadline = st->wait_ms > 0 ? clock_mono_ms() + st->wait_ms : 0;
	/* Nonblocking: a big payload is sent as the socket takes it. */
	for (f = PQflush(conn); f == 1; f = PQflush(conn)) {
		w = wait_sock(conn, POLLOUT | POLLIN, deadline);
		if (w == 0)
			goto silent;
		if (w < 0 || !PQconsumeInput(conn))
			break;
	}
	for (;;) {
		while (f >= 0 && PQisBusy(conn)) {
			w = wait_sock(conn, POLLIN, deadline);
			if (w == 0)
				goto silent;
			if (w < 0 || !PQconsumeInput(conn))
				break;
		}
		r = PQgetResult(conn);
		if (r == NULL)
			break;
		PQclear(last);
		last = r;
		if (PQresultStatus(r) == PGRES_COPY_IN ||
		    PQresultStatus(r) == PGRES_COPY_OUT ||
		    PQstatus(conn) == CONNECTION_BAD)
			break;
	}
	return last;
silent:
	PQclear(last);
	drop_silent(st, what);
	return NULL;
}

/* 1 when there is a connection to send on; else st->why says why. */
static int
usable(struct pgs *st)
{
	st->silent = 0;
	if (st->conn != NULL)
		return 1;
	snprintf(st->why, sizeof(st->why), "the connection to the store "
	    "was lost");
	return 0;
}

/*
 * The next result of a pipeline, waiting up to wait_ms for it (each
 * answer gets the whole deadline: several statements are several
 * waits).  *r NULL marks the end of one statement's results.  Returns
 * 1, or 0 when the server was silent (connection dropped) or broken.
 */
static int
pipe_next(struct pgs *st, PGresult **r)
{
	PGconn *conn = st->conn;
	int64_t deadline;
	int w;

	*r = NULL;
	deadline = st->wait_ms > 0 ? clock_mono_ms() + st->wait_ms : 0;
	while (PQisBusy(conn)) {
		w = wait_sock(conn, POLLIN, deadline);
		if (w == 0) {
			drop_silent(st, "a statement");
			return 0;
		}
		if (w < 0 || !PQconsumeInput(conn))
			return 0;
	}
	*r = PQgetResult(conn);
	return 1;
}

static int
failed(const PGresult *r)
{
	ExecStatusType s = PQresultStatus(r);

	return s != PGRES_COMMAND_OK && s != PGRES_TUPLES_OK &&
	    s != PGRES_PIPELINE_SYNC;
}

/*
 * Sends a Sync after the deferred statements (and the one just sent
 * when real is 1) and reads every answer up to it.  Returns the first
 * deferred statement's failure, else the last statement's result when
 * real (else an empty PGRES_COMMAND_OK result); NULL when the server was
 * silent or the connection broke.  With keep, the results of the
 * deferred statements from the keep-th on go to keep[] instead (the
 * caller frees them; one a pipeline skipped after a failure is
 * PGRES_PIPELINE_ABORTED).  Leaves pipeline mode.
 */
static PGresult *
pipe_sync(struct pgs *st, int real, int from, PGresult **keep)
{
	PGconn *conn = st->conn;
	PGresult *fail = NULL, *last = NULL, *r;
	int64_t deadline;
	int i = 0, nulls = 0, want = st->npend + real, w, f;

	if (keep == NULL)
		from = want;

	if (!PQpipelineSync(conn))
		goto broken;
	deadline = st->wait_ms > 0 ? clock_mono_ms() + st->wait_ms : 0;
	for (f = PQflush(conn); f == 1; f = PQflush(conn)) {
		w = wait_sock(conn, POLLOUT | POLLIN, deadline);
		if (w == 0) {
			drop_silent(st, "a statement");
			goto silent;
		}
		if (w < 0 || !PQconsumeInput(conn))
			goto broken;
	}
	if (f < 0)
		goto broken;
	for (;;) {
		if (!pipe_next(st, &r))
			goto silent;
		if (r == NULL) {
			/* One statement's results end; two NULLs: no more. */
			if (++nulls > 1)
				goto broken;
			i++;
			continue;
		}
		nulls = 0;
		if (PQresultStatus(r) == PGRES_PIPELINE_SYNC) {
			PQclear(r);
			break;
		}
		if (i >= from && i < st->npend) {
			PQclear(keep[i - from]);
			keep[i - from] = r;
			continue;
		}
		if (i < st->npend && fail == NULL && failed(r)) {
			fail = r;
			continue;
		}
		if (real && i == want - 1) {
			PQclear(last);
			last = r;
			continue;
		}
		PQclear(r);
	}
	st->npend = 0;
	if (!PQexitPipelineMode(conn))
		goto broken;
	if (fail != NULL) {
		PQclear(last);
		return fail;
	}
	return last != NULL ? last : real ? NULL :
	    PQmakeEmptyPGresult(conn, PGRES_COMMAND_OK);
broken:
	if (st->conn != NULL && PQstatus(st->conn) == CONNECTION_OK) {
		/* A pipeline out of step is not used again. */
		PQfinish(st->conn);
		st->conn = NULL;
		st->ready = 0;
		snprintf(st->why, sizeof(st->why), "the connection to the "
		    "store broke in a pipeline");
	}
silent:
	st->npend = 0;
	PQclear(fail);
	PQclear(last);
	return NULL;
}

/* Enters pipeline mode for a deferred statement; 0 when it cannot. */
static int
pipe_enter(struct pgs *st)
{
	if (!usable(st))
		return 0;
	return PQpipelineStatus(st->conn) == PQ_PIPELINE_ON ||
	    PQenterPipelineMode(st->conn);
}

int
pg_defer_prepared(struct pgs *st, const char *name, int n,
    const char *const *v, const int *len, const int *fmt)
{
	if (!pipe_enter(st) ||
	    !PQsendQueryPrepared(st->conn, name, n, v, len, fmt, 0))
		return 0;
	st->npend++;
	return 1;
}

int
pg_defer_params(struct pgs *st, const char *sql, int n,
    const unsigned int *oids, const char *const *v, const int *len,
    const int *fmt)
{
	if (!pipe_enter(st) ||
	    !PQsendQueryParams(st->conn, sql, n, oids, v, len, fmt, 0))
		return 0;
	st->npend++;
	return 1;
}

PGresult *
pg_wait_pending(struct pgs *st)
{
	if (st->conn == NULL || PQpipelineStatus(st->conn) == PQ_PIPELINE_OFF)
		return PQmakeEmptyPGresult(st->conn, PGRES_COMMAND_OK);
	return pipe_sync(st, 0, 0, NULL);
}

PGresult *
pg_wait_kept(struct pgs *st, int n, PGresult **keep)
{
	int i;

	for (i = 0; i < n; i++)
		keep[i] = NULL;
	if (!usable(st) || n > st->npend ||
	    PQpipelineStatus(st->conn) == PQ_PIPELINE_OFF)
		return NULL;
	return pipe_sync(st, 0, st->npend - n, keep);
}

/* A multi-statement string needs the simple protocol: no pipeline. */
PGresult *
pg_wait_exec(struct pgs *st, const char *sql)
{
	PGresult *r;

	if (!usable(st))
		return NULL;
	if (PQpipelineStatus(st->conn) != PQ_PIPELINE_OFF) {
		r = pg_wait_pending(st);
		if (r == NULL || failed(r) || !usable(st))
			return r;
		PQclear(r);
	}
	if (!PQsendQuery(st->conn, sql))
		return NULL;
	return collect(st, "a statement");
}

PGresult *
pg_wait_prepared(struct pgs *st, const char *name, int n,
    const char *const *v, const int *len, const int *fmt)
{
	if (!usable(st))
		return NULL;
	if (!PQsendQueryPrepared(st->conn, name, n, v, len, fmt, 0))
		return NULL;
	if (PQpipelineStatus(st->conn) != PQ_PIPELINE_OFF)
		return pipe_sync(st, 1, 0, NULL);
	return collect(st, "a statement");
}

PGresult *
pg_wait_params(struct pgs *st, const char *sql, int n,
    const unsigned int *oids, const char *const *v, const int *len,
    const int *fmt)
{
	if (!usable(st))
		return NULL;
	if (!PQsendQueryParams(st->conn, sql, n, oids, v, len, fmt,
	    st->binary))
		return NULL;
	if (PQpipelineStatus(st->conn) != PQ_PIPELINE_OFF)
		return pipe_sync(st, 1, 0, NULL);
	return collect(st, "a statement");
}

PGresult *
pg_wait_prepare(struct pgs *st, const char *name, const char *sql, int n,
    const unsigned int *oids)
{
	if (!usable(st))
		return NULL;
	if (!PQsendPrepare(st->conn, name, sql, n, oids))
		return NULL;
	return collect(st, "a prepare");
}

/*
 * The session's settings: notices off the log; synchronous_commit what
 * the store's transactions want unless they say otherwise (pg_begin sets
 * it per transaction only then: a statement fewer per commit); the
 * server's own default is still what idemhook check shows (pg_audit.c);
 * lock_timeout the busy
 * timeout, as SQLite waits for its lock; statement_timeout half a second
 * longer, so that a wait for a lock ends as a lock timeout (the store is
 * busy) and only a statement that stalls otherwise ends as a statement
 * timeout, unless the URI (options=-c statement_timeout=...), the role
 * or the database set one; and the client's deadline that
 * statement_timeout plus a grace, so that the server's own timeout
 * speaks first.
 */
static int
session(struct pgs *st, char *err, size_t errlen)
{
	char sql[448];
	PGresult *r;
	long busy = st->busy_timeout_ms > 0 ? st->busy_timeout_ms : 5000;
	long stmt;

	st->wait_ms = busy + PG_GRACE_MS;
	snprintf(sql, sizeof(sql), "SET client_min_messages = warning;"
	    " SET synchronous_commit = %s;"
	    " SET lock_timeout = %ld; SELECT CASE WHEN source IN ('client',"
	    " 'user', 'database', 'database user') THEN setting::bigint"
	    " ELSE extract(epoch FROM set_config('statement_timeout', '%ld',"
	    " false)::interval) * 1000 END::bigint FROM pg_settings"
	    " WHERE name = 'statement_timeout'",
	    st->durable_as == STORE_DURABLE ? "on" : "off", busy,
	    busy + PG_STMT_SLACK_MS);
	r = pg_wait_exec(st, sql);
	if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1)
		return pg_fail(st, r, "cannot set the session up", err,
		    errlen);
	stmt = strtol(PQgetvalue(r, 0, 0), NULL, 10);
	PQclear(r);
	/* statement_timeout = 0 set on purpose: no deadline but TCP's. */
	st->wait_ms = stmt > 0 ? stmt + PG_GRACE_MS : 0;
	return IH_OK;
}

int
pg_connect(struct pgs *st, char *err, size_t errlen)
{
	const char *kw[PG_NDEFAULTS + 2], *val[PG_NDEFAULTS + 2];
	PQconninfoOption *all;
	size_t i, n = 0;

	st->ready = 0;
	st->silent = 0;
	st->npend = 0;
	if (st->conn != NULL)
		PQfinish(st->conn);
	st->conn = NULL;
	if (paused(st->why, sizeof(st->why))) {
		snprintf(err, errlen, "cannot connect to the store: it failed "
		    "less than %d ms ago: %s", PG_PAUSE_MS, st->why);
		return IH_ESTORE;
	}
	/* Entries before dbname are overridden by the URI's own. */
	all = PQconndefaults();
	for (i = 0; i < PG_NDEFAULTS; i++)
		if (known(all, pg_defaults[i][0])) {
			kw[n] = pg_defaults[i][0];
			val[n++] = pg_defaults[i][1];
		}
	PQconninfoFree(all);
	kw[n] = "dbname";
	val[n++] = st->uri;
	kw[n] = NULL;
	val[n] = NULL;
	st->conn = PQconnectdbParams(kw, val, 1);
	if (st->conn == NULL) {
		snprintf(err, errlen, "cannot connect to the store: out of "
		    "memory");
		return IH_ESTORE;
	}
	if (PQstatus(st->conn) != CONNECTION_OK) {
		pg_fail(st, NULL, "cannot connect to the store", err, errlen);
		snprintf(st->why, sizeof(st->why), "%s", err);
		PQfinish(st->conn);
		st->conn = NULL;
		pause_set(st->why);
		return IH_ESTORE;
	}
	if (PQsetnonblocking(st->conn, 1) != 0)
		return pg_fail(st, NULL, "cannot connect to the store", err,
		    errlen);
	return session(st, err, errlen);
}
