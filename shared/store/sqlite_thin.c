/* sqlite_thin.c -- SQLite: a thin event's fetched payload (version 9). */
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>

#include <sqlite3.h>

#include "ih.h"
#include "sqlite_int.h"

/*
 * Inside the open transaction: clears the job's mark and sets its
 * headers, only while owner holds its lease, then writes the fetched
 * payload in place of the notification's through the one payload writer
 * (large ones by blob I/O).  Prepared per call: it runs once per fetch.
 */
int
sq_fetched(struct store *base, const struct store_job *job,
    const char *owner, const unsigned char *payload, size_t len,
    const char *headers, char *err, size_t errlen)
{
	struct sq *st = sq_of(base);
	sqlite3_stmt *s = NULL;
	struct event ev;
	int rc;

	rc = sq_prepare(st, "UPDATE events SET needs_fetch = 0, headers = ?3"
	    " WHERE id = ?1 AND lease_owner = ?2 AND status = 'processing'"
	    " AND needs_fetch <> 0", &s, err, errlen);
	if (rc != IH_OK)
		return rc;
	sqlite3_bind_int64(s, 1, job->ev.rowid);
	sq_bind_text(s, 2, owner);
	sq_bind_text(s, 3, headers);
	rc = sq_step_done(st, s, "cannot store fetched event", err, errlen);
	sqlite3_finalize(s);
	s = NULL;
	if (rc != IH_OK)
		return rc;
	if (sqlite3_changes(st->db) != 1) {
		snprintf(err, errlen, "lease on event %lld was lost",
		    (long long)job->ev.rowid);
		return IH_ENOTFOUND;
	}
	rc = sq_prepare(st, "DELETE FROM payloads WHERE event = ?1", &s, err,
	    errlen);
	if (rc != IH_OK)
		return rc;
	sqlite3_bind_int64(s, 1, job->ev.rowid);
	rc = sq_step_done(st, s, "cannot store fetched event", err, errlen);
	sqlite3_finalize(s);
	if (rc != IH_OK)
		return rc;
	memset(&ev, 0, sizeof(ev));
	ev.payload = payload;
	ev.payload_len = len;
	return sq_payload_put(st, &ev, job->ev.rowid, err, errlen);
}
