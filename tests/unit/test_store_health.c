/*
 * test_store_health.c -- store_health.h on each backend: the last health
 * result per provider replaces the one before, is listed by provider and
 * keeps its text; refused signatures are counted per minute on
 * PostgreSQL (every host's count adding up in one row), summed over a
 * window, pruned past a day, and left to the file beside a SQLite store
 * (IH_ENOTFOUND, nothing counted).  PostgreSQL when IH_PG_URI is set, as
 * test_store_contract.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "ih.h"
#include "store.h"
#define UNIT_STORE_NAME	"health"
#include "store_fixture.h"
#include "store_health.h"

static int
list_row(void *arg, const struct store_health *h)
{
	char *out = arg;
	size_t n = strlen(out);

	snprintf(out + n, 512 - n, "%s/%s/%ld@%lld:%s|", h->provider,
	    h->outcome, h->problems, (long long)h->checked_at, h->findings);
	return IH_OK;
}

static void
health_kept(void **state)
{
	struct unit_store *f = *state;
	struct store_health h;
	char err[STORE_ERR_MAX], out[512] = "";

	memset(&h, 0, sizeof(h));
	h.provider = "stripe";
	h.checked_at = 1000;
	h.outcome = "ok";
	h.findings = "";
	assert_int_equal(store_health_put(f->st, &h, err, sizeof(err)), IH_OK);
	h.checked_at = 2000;
	h.outcome = "problem";
	h.problems = 1;
	h.findings = "stripe: endpoint we_1 <b>: disabled\n";
	assert_int_equal(store_health_put(f->st, &h, err, sizeof(err)), IH_OK);
	h.provider = "github";
	h.outcome = "failed";
	h.problems = 0;
	h.findings = "no answer within 2 s";
	assert_int_equal(store_health_put(f->st, &h, err, sizeof(err)), IH_OK);
	assert_int_equal(store_health_list(f->st, list_row, out, err,
	    sizeof(err)), IH_OK);
	assert_string_equal(out, "github/failed/0@2000:no answer within 2 s|"
	    "stripe/problem/1@2000:stripe: endpoint we_1 <b>: disabled\n|");
}

static int
sums_row(void *arg, const char *provider, long hour, long day)
{
	char *out = arg;
	size_t n = strlen(out);

	snprintf(out + n, 256 - n, "%s=%ld/%ld ", provider, hour, day);
	return IH_OK;
}

static void
sigfails(void **state)
{
	struct unit_store *f = *state;
	char err[STORE_ERR_MAX], out[256] = "";
	int64_t m = 29000000, first;	/* a Unix minute */
	long n;
	int i, rc;

	/* Three now, one an hour and a half ago, one two days ago. */
	for (i = 0; i < 3; i++)
		assert_int_equal(store_sigfail_note(f->st, "stripe", m * 60000,
		    err, sizeof(err)), IH_OK);
	assert_int_equal(store_sigfail_note(f->st, "stripe", (m - 90) *
	    60000, err, sizeof(err)), IH_OK);
	assert_int_equal(store_sigfail_note(f->st, "github", (m - 2880) *
	    60000, err, sizeof(err)), IH_OK);
	rc = store_sigfail_count(f->st, "stripe", m - 60, m, &n, &first, err,
	    sizeof(err));
	if (!f->pg) {
		/* SQLite's are in the file beside it (sigfail.h). */
		assert_int_equal(rc, IH_ENOTFOUND);
		assert_int_equal(n, 0);
		assert_int_equal(store_sigfail_sums(f->st, m - 60, m - 1440, m,
		    sums_row, out, err, sizeof(err)), IH_ENOTFOUND);
		return;
	}
	assert_int_equal(rc, IH_OK);
	assert_int_equal(n, 3);
	assert_int_equal(first, m);
	assert_int_equal(store_sigfail_count(f->st, "stripe", m - 120, m, &n,
	    &first, err, sizeof(err)), IH_OK);
	assert_int_equal(n, 4);
	assert_int_equal(first, m - 90);
	assert_int_equal(store_sigfail_sums(f->st, m - 60, m - 1440, m,
	    sums_row, out, err, sizeof(err)), IH_OK);
	assert_string_equal(out, "stripe=3/4 ");
	/* A note from another day prunes that provider's old minutes. */
	assert_int_equal(store_sigfail_note(f->st, "github", m * 60000, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(store_sigfail_count(f->st, "github", 0, m, &n,
	    &first, err, sizeof(err)), IH_OK);
	assert_int_equal(n, 1);
}

#define CASES(setup) \
	UNIT_STORE_CASE(health_kept, setup), \
	UNIT_STORE_CASE(sigfails, setup)

UNIT_STORE_MAIN("store health")
