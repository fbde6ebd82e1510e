/*
 * pg_health.c -- PostgreSQL: the last health result per provider, and
 * the refused signatures of every host per minute (store_health.h).
 * Each statement runs alone in autocommit; a count is one upsert that
 * takes its row's lock, so hosts counting the same minute add up.
 */
#include <string.h>

#include <libpq-fe.h>

#include "ih.h"
#include "pg_int.h"

static const char SQL_PUT[] =
    "INSERT INTO endpoint_health (provider, checked_at, outcome, problems,"
    " findings) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (provider) DO"
    " UPDATE SET checked_at = excluded.checked_at, outcome ="
    " excluded.outcome, problems = excluded.problems, findings ="
    " excluded.findings";

static const char SQL_LIST[] =
    "SELECT provider, checked_at, outcome, problems, findings"
    " FROM endpoint_health ORDER BY provider COLLATE \"C\"";

/* The day-old minutes of the provider go as its new ones come. */
static const char SQL_NOTE[] =
    "WITH old AS (DELETE FROM sigfails WHERE provider = $1"
    " AND minute < $3)"
    " INSERT INTO sigfails AS s (provider, minute, count)"
    " VALUES ($1, $2, $4) ON CONFLICT (provider, minute)"
    " DO UPDATE SET count = s.count + excluded.count";

static const char SQL_COUNT[] =
    "SELECT coalesce(sum(count), 0)::bigint, coalesce(min(minute), 0)"
    " FROM sigfails WHERE provider = $1 AND minute > $2 AND minute <= $3";

static const char SQL_SUMS[] =
    "SELECT provider, coalesce(sum(count) FILTER (WHERE minute > $1), 0)"
    "::bigint, sum(count)::bigint FROM sigfails"
    " WHERE minute > $2 AND minute <= $3"
    " GROUP BY provider ORDER BY provider COLLATE \"C\"";

int
pg_health_put(struct store *base, const struct store_health *h, char *err,
    size_t errlen)
{
	char text[STORE_HEALTH_TEXT_MAX + 1];
	struct pg_params p;
	long n;

	size_t len = strlen(h->findings);

	/* Cut as SQLite's is, but never inside a UTF-8 character. */
	if (len > STORE_HEALTH_TEXT_MAX) {
		len = STORE_HEALTH_TEXT_MAX;
		while (len > 0 && ((unsigned char)h->findings[len] & 0xc0) ==
		    0x80)
			len--;
	}
	memcpy(text, h->findings, len);
	text[len] = '\0';
	memset(&p, 0, sizeof(p));
	pg_text(&p, h->provider);
	pg_int(&p, h->checked_at);
	pg_text(&p, h->outcome);
	pg_int(&p, h->problems);
	pg_text(&p, text);
	return pg_exec_change(pg_of(base), SQL_PUT, "titit", &p,
	    "endpoint health", &n, err, errlen);
}

int
pg_health_list(struct store *base,
    int (*fn)(void *, const struct store_health *), void *arg, char *err,
    size_t errlen)
{
	struct store_health h;
	struct pg_params p;
	PGresult *r;
	int i, rc = IH_OK;

	memset(&p, 0, sizeof(p));
	r = pg_exec_sql(pg_of(base), SQL_LIST, "", &p, PGRES_TUPLES_OK,
	    "endpoint health", err, errlen);
	if (r == NULL)
		return IH_ESTORE;
	for (i = 0; rc == IH_OK && i < PQntuples(r); i++) {
		h.provider = pg_gettext(r, i, 0);
		h.checked_at = pg_getint(r, i, 1);
		h.outcome = pg_gettext(r, i, 2);
		h.problems = (long)pg_getint(r, i, 3);
		h.findings = pg_gettext(r, i, 4);
		rc = fn(arg, &h);
	}
	PQclear(r);
	return rc;
}

int
pg_sigfail_note(struct store *base, const char *provider, int64_t minute,
    long count, int64_t prune_before, char *err, size_t errlen)
{
	struct pg_params p;
	long n;

	memset(&p, 0, sizeof(p));
	pg_text(&p, provider);
	pg_int(&p, minute);
	pg_int(&p, prune_before);
	pg_int(&p, count);
	return pg_exec_change(pg_of(base), SQL_NOTE, "tiii", &p,
	    "refused signatures", &n, err, errlen);
}

int
pg_sigfail_count(struct store *base, const char *provider, int64_t from_min,
    int64_t to_min, long *count, int64_t *first_min, char *err,
    size_t errlen)
{
	struct pg_params p;
	PGresult *r;

	memset(&p, 0, sizeof(p));
	pg_text(&p, provider);
	pg_int(&p, from_min);
	pg_int(&p, to_min);
	r = pg_exec_sql(pg_of(base), SQL_COUNT, "tii", &p, PGRES_TUPLES_OK,
	    "refused signatures", err, errlen);
	if (r == NULL)
		return IH_ESTORE;
	if (PQntuples(r) == 1) {
		*count = (long)pg_getint(r, 0, 0);
		*first_min = pg_getint(r, 0, 1);
	}
	PQclear(r);
	return IH_OK;
}

int
pg_sigfail_sums(struct store *base, int64_t hour_min, int64_t day_min,
    int64_t to_min, store_sigfail_fn fn, void *arg, char *err,
    size_t errlen)
{
	struct pg_params p;
	PGresult *r;
	int i, rc = IH_OK;

	memset(&p, 0, sizeof(p));
	pg_int(&p, hour_min);
	pg_int(&p, day_min);
	pg_int(&p, to_min);
	r = pg_exec_sql(pg_of(base), SQL_SUMS, "iii", &p, PGRES_TUPLES_OK,
	    "refused signatures", err, errlen);
	if (r == NULL)
		return IH_ESTORE;
	for (i = 0; rc == IH_OK && i < PQntuples(r); i++)
		rc = fn(arg, pg_gettext(r, i, 0), (long)pg_getint(r, i, 1),
		    (long)pg_getint(r, i, 2));
	PQclear(r);
	return rc;
}
