/*
 * sqlite_objects.c -- SQLite: the objects table under the ordering
 * guard, its history, and their reads.  The guard's order is decided
 * in C (object_guard()), inside the write transaction the caller holds
 * (BEGIN IMMEDIATE), so no other writer runs between the read of the
 * row and its update.  Statements are prepared per call.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "account.h"
#include "ih.h"
#include "object.h"
#include "sqlite_int.h"

/*
 * Reads the row's key into *key, its event id malloc'd into *id, and
 * sets *found.  Returns IH_OK, IH_ENOMEM or IH_ESTORE.
 */
static int
row_key(struct sq *st, const struct store_object *o, struct object_key *key,
    char **id, int *found, char *err, size_t errlen)
{
	sqlite3_stmt *s = NULL;
	int rc, step;

	*found = 0;
	s = sq_stmt(st, &st->obj_key, err, errlen);
	if (s == NULL)
		return IH_ESTORE;
	rc = IH_OK;
	sqlite3_bind_text(s, 1, o->provider, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, o->kind, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 3, o->object_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 4, account_or_default(o->account), -1,
	    SQLITE_STATIC);
	step = sqlite3_step(s);
	if (step == SQLITE_ROW) {
		key->source_ms = sqlite3_column_int64(s, 0);
		key->rank = sqlite3_column_int(s, 1);
		*id = strdup((const char *)sqlite3_column_text(s, 2));
		if (*id == NULL) {
			snprintf(err, errlen, "out of memory");
			rc = IH_ENOMEM;
			goto out;
		}
		key->event_id = *id;
		*found = 1;
	} else if (step != SQLITE_DONE)
		rc = sq_fail(st, step, "cannot read object", err, errlen);
out:
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	return rc;
}

/* Inserts or replaces the row with o's state. */
static int
row_put(struct sq *st, const struct store_object *o, int64_t now_ms,
    char *err, size_t errlen)
{
	sqlite3_stmt *s = NULL;
	int rc;

	s = sq_stmt(st, &st->obj_put, err, errlen);
	if (s == NULL)
		return IH_ESTORE;
	sqlite3_bind_text(s, 1, o->provider, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, o->kind, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 3, o->object_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 4, o->status, -1, SQLITE_STATIC);
	if (o->json != NULL)
		sqlite3_bind_text(s, 5, o->json, (int)o->json_len,
		    SQLITE_STATIC);
	else
		sqlite3_bind_null(s, 5);
	sqlite3_bind_int64(s, 6, o->source_ms);
	sqlite3_bind_int(s, 7, o->rank);
	sqlite3_bind_text(s, 8, o->event_id, -1, SQLITE_STATIC);
	sqlite3_bind_int(s, 9, o->deleted != 0);
	sqlite3_bind_int64(s, 10, now_ms);
	sqlite3_bind_text(s, 11, account_or_default(o->account), -1,
	    SQLITE_STATIC);
	rc = sq_step_done(st, s, "cannot write object", err, errlen);
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	return rc;
}

/* Adds the event to the object's history, unless it is there. */
static int
history_add(struct sq *st, const struct store_object *o, int verdict,
    int64_t now_ms, char *err, size_t errlen)
{
	sqlite3_stmt *s = NULL;
	int rc;

	s = sq_stmt(st, &st->obj_hist, err, errlen);
	if (s == NULL)
		return IH_ESTORE;
	sqlite3_bind_text(s, 1, o->provider, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, o->kind, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 3, o->object_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 4, o->event_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 5, o->event_type != NULL ? o->event_type : "",
	    -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 6, o->status, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 7, o->source_ms);
	sqlite3_bind_int(s, 8, o->rank);
	sqlite3_bind_int(s, 9, o->deleted != 0);
	sqlite3_bind_text(s, 10, object_verdict_name(verdict), -1,
	    SQLITE_STATIC);
	sqlite3_bind_int64(s, 11, now_ms);
	sqlite3_bind_text(s, 12, account_or_default(o->account), -1,
	    SQLITE_STATIC);
	rc = sq_step_done(st, s, "cannot write object history", err, errlen);
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);
	return rc;
}

int
sq_object_apply(struct store *base, const struct store_object *o,
    int64_t now_ms, int *verdict, char *err, size_t errlen)
{
	struct sq *st = sq_of(base);
	struct object_key row;
	char *id = NULL;
	int found, rc;

	rc = row_key(st, o, &row, &id, &found, err, errlen);
	if (rc != IH_OK)
		goto out;
	*verdict = store_object_verdict(found ? &row : NULL, o);
	if (*verdict == OBJECT_APPLIED) {
		rc = row_put(st, o, now_ms, err, errlen);
		if (rc != IH_OK)
			goto out;
	}
	rc = history_add(st, o, *verdict, now_ms, err, errlen);
out:
	free(id);
	return rc;
}

int
sq_objects(struct store *base, const struct store_object_filter *f,
    store_object_fn fn, void *arg, char *err, size_t errlen)
{
	struct sq *st = sq_of(base);
	struct store_object o;
	sqlite3_stmt *s = NULL;
	int rc;

	rc = sq_prepare(st, "SELECT provider, kind, object_id, status, object,"
	    " source_at, rank, event_id, deleted, created_at, changed_at,"
	    " account FROM objects WHERE (?1 IS NULL OR provider = ?1)"
	    " AND (?7 IS NULL OR account = ?7)"
	    " AND (?2 IS NULL OR kind = ?2) AND (?3 IS NULL OR object_id = ?3)"
	    " AND (?4 IS NULL OR status = ?4) AND (?5 = 0 OR changed_at >= ?5)"
	    " ORDER BY provider, kind, object_id LIMIT ?6", &s, err, errlen);
	if (rc != IH_OK)
		goto out;
	sq_bind_text(s, 1, f->provider);
	sq_bind_text(s, 2, f->kind);
	sq_bind_text(s, 3, f->object_id);
	sq_bind_text(s, 4, f->status);
	sqlite3_bind_int64(s, 5, f->since_ms);
	sqlite3_bind_int64(s, 6, f->limit > 0 ? f->limit : -1);
	sq_bind_text(s, 7, f->account);
	while (rc == IH_OK &&
	    sq_row(st, s, "cannot read objects", &rc, err, errlen)) {
		memset(&o, 0, sizeof(o));
		o.provider = (const char *)sqlite3_column_text(s, 0);
		o.kind = (const char *)sqlite3_column_text(s, 1);
		o.object_id = (const char *)sqlite3_column_text(s, 2);
		o.status = (const char *)sqlite3_column_text(s, 3);
		o.json = (const char *)sqlite3_column_text(s, 4);
		o.json_len = (size_t)sqlite3_column_bytes(s, 4);
		o.source_ms = sqlite3_column_int64(s, 5);
		o.rank = sqlite3_column_int(s, 6);
		o.event_id = (const char *)sqlite3_column_text(s, 7);
		o.deleted = sqlite3_column_int(s, 8);
		o.created_ms = sqlite3_column_int64(s, 9);
		o.changed_ms = sqlite3_column_int64(s, 10);
		o.account = (const char *)sqlite3_column_text(s, 11);
		rc = fn(arg, &o);
	}
out:
	sqlite3_finalize(s);
	return rc;
}

int
sq_object_history(struct store *base, const char *provider,
    const char *account, const char *kind, const char *object_id,
    int (*fn)(void *, const struct store_object_event *), void *arg,
    char *err, size_t errlen)
{
	struct sq *st = sq_of(base);
	struct store_object_event e;
	sqlite3_stmt *s = NULL;
	int rc;

	rc = sq_prepare(st, "SELECT event_id, event_type, status, source_at,"
	    " rank, deleted, verdict, recorded_at FROM object_events"
	    " WHERE provider = ?1 AND kind = ?2 AND object_id = ?3"
	    " AND account = ?4 ORDER BY seq", &s, err, errlen);
	if (rc != IH_OK)
		goto out;
	sqlite3_bind_text(s, 1, provider, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, kind, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 3, object_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 4, account_or_default(account), -1,
	    SQLITE_STATIC);
	while (rc == IH_OK &&
	    sq_row(st, s, "cannot read object history", &rc, err, errlen)) {
		e.event_id = (const char *)sqlite3_column_text(s, 0);
		e.event_type = (const char *)sqlite3_column_text(s, 1);
		e.status = (const char *)sqlite3_column_text(s, 2);
		e.source_ms = sqlite3_column_int64(s, 3);
		e.rank = sqlite3_column_int(s, 4);
		e.deleted = sqlite3_column_int(s, 5);
		e.verdict = (const char *)sqlite3_column_text(s, 6);
		e.recorded_ms = sqlite3_column_int64(s, 7);
		rc = fn(arg, &e);
	}
out:
	sqlite3_finalize(s);
	return rc;
}
