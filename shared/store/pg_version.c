/* pg_version.c -- PostgreSQL: a held event replaced by its expected version. */
#include <stdio.h>
#include <string.h>

#include <libpq-fe.h>

#include "account.h"
#include "ih.h"
#include "pg_int.h"

/*
 * Deletes the held event (provider, event_id) of ev whose version is not
 * ev's, with its payload (ON DELETE CASCADE), inside the transaction that
 * records ev next.  The row lock it takes orders it against a concurrent
 * replay: whichever commits first wins, and the other finds the row no
 * longer held (this one then records a duplicate of the replayed one).
 */
int
pg_release_held(struct store *base, const struct event *ev,
    char *err, size_t errlen)
{
	struct pgs *st = pg_of(base);
	struct pg_params p;
	long n;

	memset(&p, 0, sizeof(p));
	pg_text(&p, ev->provider);
	pg_text(&p, ev->event_id);
	pg_text(&p, ev->api_version);
	pg_text(&p, account_or_default(ev->account));
	return pg_exec_change(st, "DELETE FROM events WHERE provider = $1"
	    " AND event_id = $2 AND status = 'held' AND account = $4"
	    " AND api_version IS DISTINCT FROM $3", "tttt", &p,
	    "cannot replace held event", &n, err, errlen);
}

/* What pg_versions() hands each row to. */
struct versions_walk {
	int	(*fn)(void *, const struct store_version_count *);
	void	*arg;
};

static int
version_row(void *arg, const PGresult *r, int i)
{
	const struct versions_walk *w = arg;
	struct store_version_count c;

	c.provider = PQgetvalue(r, i, 0);
	c.api_version = pg_gettext(r, i, 1);
	c.events = pg_getint(r, i, 2);
	c.held = pg_getint(r, i, 3);
	return w->fn(w->arg, &c);
}

int
pg_versions(struct store *base, const char *provider, int64_t since_ms,
    int64_t until_ms, int (*fn)(void *, const struct store_version_count *),
    void *arg, char *err, size_t errlen)
{
	struct versions_walk w = { fn, arg };
	struct pg_params p;

	memset(&p, 0, sizeof(p));
	pg_text(&p, provider);
	pg_int(&p, since_ms);
	pg_int(&p, until_ms);
	return pg_each(pg_of(base), "SELECT provider, api_version, count(*),"
	    " count(*) FILTER (WHERE status = 'held') FROM events"
	    " WHERE ($1::text IS NULL OR provider = $1)"
	    " AND received_at >= $2 AND received_at < $3"
	    " GROUP BY provider, api_version ORDER BY provider, api_version",
	    "tii", &p, "cannot count versions", version_row, &w, err, errlen);
}
