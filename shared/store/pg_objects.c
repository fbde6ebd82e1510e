/*
 * pg_objects.c -- PostgreSQL: the objects table under the ordering
 * guard, its history, and their reads.  The row is locked (FOR UPDATE)
 * before the guard's order is decided in C (object_guard()), so that two
 * transactions applying events to one object take turns; a first event
 * inserts the row with ON CONFLICT DO NOTHING, and when another
 * transaction inserted it meanwhile, the row is locked and compared.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "account.h"
#include "ih.h"
#include "object.h"
#include "pg_int.h"

/*
 * PG_OBJECT_TAKE's parameters: the row's columns, then the event's type
 * and hist_ms, when the switch records the history row (0: not here).
 */
static void
object_params(struct pg_params *p, const struct store_object *o,
    int64_t created_ms, int64_t changed_ms, int64_t hist_ms)
{
	memset(p, 0, sizeof(*p));
	pg_text(p, o->provider);
	pg_text(p, o->kind);
	pg_text(p, o->object_id);
	pg_text(p, o->status);
	pg_text(p, o->json);	/* NULL: SQL NULL */
	pg_int(p, o->source_ms);
	pg_int(p, o->rank);
	pg_text(p, o->event_id);
	pg_int(p, o->deleted != 0);
	pg_int(p, created_ms);
	pg_int(p, changed_ms);
	pg_text(p, account_or_default(o->account));
	pg_text(p, o->event_type != NULL ? o->event_type : "");
	if (hist_ms != 0)
		pg_int(p, hist_ms);
	else
		pg_text(p, NULL);
}

/*
 * Reads an object's key (source_at, rank, event_id) from columns col to
 * col + 2 of r's first row; the event id is malloc'd into *id.
 */
static int
key_read(const PGresult *r, int col, struct object_key *key, char **id,
    int *found, char *err, size_t errlen)
{
	*id = strdup(PQgetvalue(r, 0, col + 2));
	if (*id == NULL) {
		snprintf(err, errlen, "out of memory");
		return IH_ENOMEM;
	}
	key->source_ms = pg_getint(r, 0, col);
	key->rank = (int)pg_getint(r, 0, col + 1);
	key->event_id = *id;
	*found = 1;
	return IH_OK;
}

/*
 * Locks and reads the row's key; *found 0 when there is none.  The
 * event id is malloc'd into *id.
 */
static int
row_key(struct pgs *st, const struct store_object *o, struct object_key *key,
    char **id, int *found, char *err, size_t errlen)
{
	struct pg_params p;
	PGresult *r;
	int rc;

	*found = 0;
	memset(&p, 0, sizeof(p));
	pg_text(&p, o->provider);
	pg_text(&p, o->kind);
	pg_text(&p, o->object_id);
	pg_text(&p, account_or_default(o->account));
	r = pg_exec_stmt(st, PG_OBJECT_KEY, &p, PGRES_TUPLES_OK,
	    "cannot read object", err, errlen);
	if (r == NULL)
		return IH_ESTORE;
	rc = PQntuples(r) == 1 ? key_read(r, 0, key, id, found, err, errlen) :
	    IH_OK;
	PQclear(r);
	return rc;
}

/*
 * Brings the existing row to o's state; with hist_ms set, its history
 * row goes in the same statement, deferred (PG_OBJECT_SET_HIST).
 */
static int
row_update(struct pgs *st, const struct store_object *o, int64_t changed_ms,
    int64_t hist_ms, char *err, size_t errlen)
{
	struct pg_params p;
	PGresult *r;

	object_params(&p, o, 0, changed_ms, hist_ms);
	if (hist_ms != 0)
		return pg_defer_stmt(st, PG_OBJECT_SET_HIST, &p,
		    "cannot write object", err, errlen);
	p.n = 12;	/* PG_OBJECT_SET: the columns alone */
	r = pg_exec_stmt(st, PG_OBJECT_SET, &p, PGRES_COMMAND_OK,
	    "cannot write object", err, errlen);
	PQclear(r);
	return r != NULL ? IH_OK : IH_ESTORE;
}

/*
 * Adds e to the object's history unless it is there; *added says, or
 * with added NULL the insert is deferred (pg_wait.c): only an error of
 * it matters, read with the next statement's answer.
 */
static int
history_put(struct pgs *st, const struct store_object *o,
    const struct store_object_event *e, int *added, char *err,
    size_t errlen)
{
	struct pg_params p;
	PGresult *r;

	memset(&p, 0, sizeof(p));
	pg_text(&p, o->provider);
	pg_text(&p, o->kind);
	pg_text(&p, o->object_id);
	pg_text(&p, e->event_id);
	pg_text(&p, e->event_type != NULL ? e->event_type : "");
	pg_text(&p, e->status);
	pg_int(&p, e->source_ms);
	pg_int(&p, e->rank);
	pg_int(&p, e->deleted != 0);
	pg_text(&p, e->verdict);
	pg_int(&p, e->recorded_ms);
	pg_text(&p, account_or_default(o->account));
	if (added == NULL)
		return pg_defer_stmt(st, PG_HISTORY, &p,
		    "cannot write object history", err, errlen);
	r = pg_exec_stmt(st, PG_HISTORY, &p, PGRES_COMMAND_OK,
	    "cannot write object history", err, errlen);
	*added = r != NULL && pg_changes(r) > 0;
	PQclear(r);
	return r != NULL ? IH_OK : IH_ESTORE;
}

/*
 * In one round trip: inserts the row unless it exists (*added, and with
 * hist_ms set its history row too), and locks and reads an existing
 * row's key (*found, the event id malloc'd into *id).  The read sees the
 * statement's snapshot: a row another transaction inserted meanwhile is
 * neither added nor found, and row_apply() reads it again.
 */
static int
row_take(struct pgs *st, const struct store_object *o, int64_t created_ms,
    int64_t changed_ms, int64_t hist_ms, struct object_key *key, char **id,
    int *found, int *added, char *err, size_t errlen)
{
	struct pg_params p;
	PGresult *r;
	int rc;

	*found = 0;
	*added = 0;
	object_params(&p, o, created_ms, changed_ms, hist_ms);
	r = pg_exec_stmt(st, PG_OBJECT_TAKE, &p, PGRES_TUPLES_OK,
	    "cannot write object", err, errlen);
	if (r == NULL)
		return IH_ESTORE;
	if (PQntuples(r) != 1) {
		PQclear(r);
		snprintf(err, errlen, "cannot write object: no row returned");
		return IH_ESTORE;
	}
	*added = pg_getint(r, 0, 0) > 0;
	rc = IH_OK;
	if (!*added && !PQgetisnull(r, 0, 3))
		rc = key_read(r, 1, key, id, found, err, errlen);
	PQclear(r);
	return rc;
}

/*
 * Brings the row to o's state when o is newer (or the row is new),
 * under the row's lock; *verdict says what the guard found.  With
 * hist_ms set, an applied event's history row is written with the row
 * (*hist 1); the caller writes any other.
 */
static int
row_apply(struct pgs *st, const struct store_object *o, int64_t created_ms,
    int64_t changed_ms, int64_t hist_ms, int *verdict, int *hist, char *err,
    size_t errlen)
{
	struct object_key row;
	char *id = NULL;
	int found = 0, added = 0, rc;

	*hist = 0;
	rc = row_take(st, o, created_ms, changed_ms, hist_ms, &row, &id,
	    &found, &added, err, errlen);
	/* Inserted meanwhile by another transaction: compare. */
	if (rc == IH_OK && !found && !added)
		rc = row_key(st, o, &row, &id, &found, err, errlen);
	if (rc != IH_OK)
		goto out;
	*verdict = store_object_verdict(found ? &row : NULL, o);
	if (*verdict == OBJECT_APPLIED && found)
		rc = row_update(st, o, changed_ms, hist_ms, err, errlen);
	/*
	 * A row inserted here, or one inserted meanwhile by another
	 * transaction (then added is 0): the first has its history.
	 */
	*hist = hist_ms != 0 && rc == IH_OK &&
	    (added || (*verdict == OBJECT_APPLIED && found));
out:
	free(id);
	return rc;
}

int
pg_object_apply(struct store *base, const struct store_object *o,
    int64_t now_ms, int *verdict, char *err, size_t errlen)
{
	struct pgs *st = pg_of(base);
	struct store_object_event e;
	int hist, rc;

	rc = row_apply(st, o, now_ms, now_ms, now_ms, verdict, &hist, err,
	    errlen);
	if (rc != IH_OK || hist)
		return rc;
	memset(&e, 0, sizeof(e));
	e.event_id = o->event_id;
	e.event_type = o->event_type;
	e.status = o->status;
	e.source_ms = o->source_ms;
	e.rank = o->rank;
	e.deleted = o->deleted;
	e.verdict = object_verdict_name(*verdict);
	e.recorded_ms = now_ms;
	return history_put(st, o, &e, NULL, err, errlen);
}

int
pg_copy_object(struct store *base, const struct store_object *o,
    int *added, char *err, size_t errlen)
{
	int verdict = 0, hist, rc;

	/* The copy's history rows come on their own (copy_object_event). */
	rc = row_apply(pg_of(base), o, o->created_ms, o->changed_ms, 0,
	    &verdict, &hist, err, errlen);
	*added = rc == IH_OK && verdict == OBJECT_APPLIED;
	return rc;
}

int
pg_copy_object_event(struct store *base, const struct store_object *o,
    const struct store_object_event *e, int *added, char *err,
    size_t errlen)
{
	return history_put(pg_of(base), o, e, added, err, errlen);
}

/* What pg_objects() and pg_object_history() hand each row to. */
struct objects_walk {
	store_object_fn	 fn;
	int		(*history)(void *, const struct store_object_event *);
	void		*arg;
};

static int
object_row(void *arg, const PGresult *r, int i)
{
	const struct objects_walk *w = arg;
	struct store_object o;

	memset(&o, 0, sizeof(o));
	o.provider = PQgetvalue(r, i, 0);
	o.kind = PQgetvalue(r, i, 1);
	o.object_id = PQgetvalue(r, i, 2);
	o.status = PQgetvalue(r, i, 3);
	o.json = pg_gettext(r, i, 4);
	o.json_len = o.json != NULL ? strlen(o.json) : 0;
	o.source_ms = pg_getint(r, i, 5);
	o.rank = (int)pg_getint(r, i, 6);
	o.event_id = PQgetvalue(r, i, 7);
	o.deleted = (int)pg_getint(r, i, 8);
	o.created_ms = pg_getint(r, i, 9);
	o.changed_ms = pg_getint(r, i, 10);
	o.account = PQgetvalue(r, i, 11);
	return w->fn(w->arg, &o);
}

int
pg_objects(struct store *base, const struct store_object_filter *f,
    store_object_fn fn, void *arg, char *err, size_t errlen)
{
	struct objects_walk w = { fn, NULL, arg };
	struct pg_params p;

	memset(&p, 0, sizeof(p));
	pg_text(&p, f->provider);
	pg_text(&p, f->kind);
	pg_text(&p, f->object_id);
	pg_text(&p, f->status);
	pg_int(&p, f->since_ms);
	pg_int(&p, f->limit > 0 ? f->limit : 0);
	pg_text(&p, f->account);
	return pg_each(pg_of(base), "SELECT provider, kind, object_id,"
	    " status, object, source_at, rank, event_id, deleted, created_at,"
	    " changed_at, account FROM objects"
	    " WHERE ($1::text IS NULL OR provider = $1)"
	    " AND ($7::text IS NULL OR account = $7)"
	    " AND ($2::text IS NULL OR kind = $2)"
	    " AND ($3::text IS NULL OR object_id = $3)"
	    " AND ($4::text IS NULL OR status = $4)"
	    " AND ($5::bigint = 0 OR changed_at >= $5)"
	    " ORDER BY provider COLLATE \"C\", kind COLLATE \"C\","
	    " object_id COLLATE \"C\""
	    " LIMIT CASE WHEN $6::bigint > 0 THEN $6 END", "ttttiit", &p,
	    "cannot read objects", object_row, &w, err, errlen);
}

static int
history_row(void *arg, const PGresult *r, int i)
{
	const struct objects_walk *w = arg;
	struct store_object_event e;

	e.event_id = PQgetvalue(r, i, 0);
	e.event_type = PQgetvalue(r, i, 1);
	e.status = PQgetvalue(r, i, 2);
	e.source_ms = pg_getint(r, i, 3);
	e.rank = (int)pg_getint(r, i, 4);
	e.deleted = (int)pg_getint(r, i, 5);
	e.verdict = PQgetvalue(r, i, 6);
	e.recorded_ms = pg_getint(r, i, 7);
	return w->history(w->arg, &e);
}

int
pg_object_history(struct store *base, const char *provider,
    const char *account, const char *kind, const char *object_id,
    int (*fn)(void *, const struct store_object_event *), void *arg,
    char *err, size_t errlen)
{
	struct objects_walk w = { NULL, fn, arg };
	struct pg_params p;

	memset(&p, 0, sizeof(p));
	pg_text(&p, provider);
	pg_text(&p, kind);
	pg_text(&p, object_id);
	pg_text(&p, account_or_default(account));
	return pg_each(pg_of(base), "SELECT event_id, event_type, status,"
	    " source_at, rank, deleted, verdict, recorded_at"
	    " FROM object_events WHERE provider = $1 AND kind = $2"
	    " AND object_id = $3 AND account = $4 ORDER BY seq", "tttt", &p,
	    "cannot read object history", history_row, &w, err, errlen);
}
