/* sqlite_version.c -- SQLite: a held event replaced by its expected version. */
#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#include "account.h"
#include "ih.h"
#include "sqlite_int.h"

/*
 * Deletes the held event (provider, event_id) of ev whose version is not
 * ev's, with its payload (ON DELETE CASCADE), inside the transaction that
 * records ev next: the expected version then takes the id as a new event.
 * A held event is never claimed, so nothing of it has run.  Prepared per
 * call: it runs only when an expected version finds its id held.
 */
int
sq_release_held(struct store *base, const struct event *ev,
    char *err, size_t errlen)
{
	struct sq *st = sq_of(base);
	sqlite3_stmt *s = NULL;
	int rc;

	rc = sq_prepare(st, "DELETE FROM events WHERE provider = ?1"
	    " AND event_id = ?2 AND status = 'held'"
	    " AND api_version IS NOT ?3 AND account = ?4", &s, err, errlen);
	if (rc != IH_OK)
		return rc;
	sq_bind_text(s, 1, ev->provider);
	sq_bind_text(s, 2, ev->event_id);
	sq_bind_text(s, 3, ev->api_version);
	sq_bind_text(s, 4, account_or_default(ev->account));
	rc = sq_step_done(st, s, "cannot replace held event", err, errlen);
	sqlite3_finalize(s);
	return rc;
}

int
sq_versions(struct store *base, const char *provider, int64_t since_ms,
    int64_t until_ms, int (*fn)(void *, const struct store_version_count *),
    void *arg, char *err, size_t errlen)
{
	struct sq *st = sq_of(base);
	struct store_version_count c;
	sqlite3_stmt *s = NULL;
	int rc;

	/* A search of events_provider_status per pair (SQ_PAIRS). */
	rc = sq_prepare(st, SQ_PAIRS "SELECT provider, api_version, count(*),"
	    " sum(e.status = 'held') FROM ps CROSS JOIN events e"
	    " ON e.provider = ps.p AND e.status = ps.s"
	    " WHERE (?1 IS NULL OR ps.p = ?1)"
	    " AND e.received_at >= ?2 AND e.received_at < ?3"
	    " GROUP BY provider, api_version ORDER BY provider, api_version",
	    &s, err, errlen);
	if (rc != IH_OK)
		return rc;
	sq_bind_text(s, 1, provider);
	sqlite3_bind_int64(s, 2, since_ms);
	sqlite3_bind_int64(s, 3, until_ms);
	while (rc == IH_OK &&
	    sq_row(st, s, "cannot count versions", &rc, err, errlen)) {
		c.provider = (const char *)sqlite3_column_text(s, 0);
		c.api_version = (const char *)sqlite3_column_text(s, 1);
		c.events = sqlite3_column_int64(s, 2);
		c.held = sqlite3_column_int64(s, 3);
		if (c.provider == NULL)
			c.provider = "";
		rc = fn(arg, &c);
	}
	sqlite3_finalize(s);
	return rc;
}
