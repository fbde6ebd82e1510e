/* pg_version.c -- PostgreSQL: a held event replaced by its expected version. */
#include <stdio.h>
#include <string.h>

#include <libpq-fe.h>

#include "ih.h"
#include "pg_int.h"

/*
 * Deletes the held event (provider, event_id) of ev whose version is not
 * ev's, with its payload (ON DELETE CASCADE), inside the transaction that
 * records ev next.  The row lock it takes orders it against a concurrent
 * replay: whichever commits first wins, and the other finds the row no
 * longer held (this one then records a duplicate).
 */
int
pg_release_held(struct store *base, const struct store_event *ev,
    char *err, size_t errlen)
{
	struct pgs *st = pg_of(base);
	struct pg_params p;
	long n;

	memset(&p, 0, sizeof(p));
	pg_text(&p, ev->provider);
	pg_text(&p, ev->event_id);
	pg_text(&p, ev->api_version);
	return pg_exec_change(st, "DELETE FROM events WHERE provider = $1"
	    " AND event_id = $2 AND status = 'held'"
	    " AND api_version IS DISTINCT FROM $3", "ttt", &p,
	    "cannot replace held event", &n, err, errlen);
}
