/* pg_thin.c -- PostgreSQL: a thin event's fetched payload (version 9). */
#include <stdio.h>
#include <string.h>

#include <libpq-fe.h>

#include "ih.h"
#include "pg_int.h"

/*
 * Inside the open transaction: clears the job's mark and sets its
 * headers, only while owner holds its lease, and puts the fetched
 * payload in place of the notification's, in one statement.
 */
int
pg_fetched(struct store *base, const struct store_job *job,
    const char *owner, const unsigned char *payload, size_t len,
    const char *headers, char *err, size_t errlen)
{
	struct pgs *st = pg_of(base);
	struct pg_params p;
	long n = 0;
	int rc;

	memset(&p, 0, sizeof(p));
	pg_int(&p, job->ev.rowid);
	pg_text(&p, owner);
	pg_text(&p, headers);
	pg_bytes(&p, payload, len);
	/* An upsert: a dead letter's payload may have been purged. */
	rc = pg_exec_change(st, "WITH ev AS (UPDATE events SET needs_fetch = 0,"
	    " headers = $3 WHERE id = $1 AND lease_owner = $2"
	    " AND status = 'processing' AND needs_fetch <> 0 RETURNING id)"
	    " INSERT INTO payloads (event, payload) SELECT id, $4 FROM ev"
	    " ON CONFLICT (event) DO UPDATE SET payload = excluded.payload",
	    "ittb", &p, "cannot store fetched event", &n, err, errlen);
	if (rc == IH_OK && n != 1) {
		snprintf(err, errlen, "lease on event %lld was lost",
		    (long long)job->ev.rowid);
		return IH_ENOTFOUND;
	}
	return rc;
}
