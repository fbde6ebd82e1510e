/* sqlite_version.c -- SQLite: a held event replaced by its expected version. */
#include <stddef.h>

#include <sqlite3.h>

#include "ih.h"
#include "sqlite_int.h"

/*
 * Deletes the held event (provider, event_id) of ev whose version is not
 * ev's, with its payload (ON DELETE CASCADE), inside the transaction that
 * records ev next: the expected version then takes the id as a new event.
 * A held event is never claimed, so nothing of it has run.  Prepared per
 * call: it runs only for providers with expected versions.
 */
int
sq_release_held(struct store *base, const struct store_event *ev,
    char *err, size_t errlen)
{
	struct sq *st = sq_of(base);
	sqlite3_stmt *s = NULL;
	int rc;

	rc = sq_prepare(st, "DELETE FROM events WHERE provider = ?1"
	    " AND event_id = ?2 AND status = 'held'"
	    " AND api_version IS NOT ?3", &s, err, errlen);
	if (rc != IH_OK)
		return rc;
	sq_bind_text(s, 1, ev->provider);
	sq_bind_text(s, 2, ev->event_id);
	sq_bind_text(s, 3, ev->api_version);
	rc = sq_step_done(st, s, "cannot replace held event", err, errlen);
	sqlite3_finalize(s);
	return rc;
}
