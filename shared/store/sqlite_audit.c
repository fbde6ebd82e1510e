/*
 * sqlite_audit.c -- SQLite: what idemhook check reports about the store
 * (its pragmas, as findings).
 */
#include <stdio.h>
#include <string.h>

#include <sqlite3.h>

#include "ih.h"
#include "sqlite_int.h"
#include "sqlite_shape.h"

/* Starts the finding a: the pragma name and its one value's text. */
static int
pragma_text(struct sq *st, const char *name, struct store_audit *a,
    char *err, size_t errlen)
{
	sqlite3_stmt *s = NULL;
	char sql[64];
	const char *m;
	int rc, step;

	memset(a, 0, sizeof(*a));
	a->name = name;
	snprintf(sql, sizeof(sql), "PRAGMA %s", name);
	rc = sq_prepare(st, sql, &s, err, errlen);
	if (rc != IH_OK)
		goto out;
	step = sqlite3_step(s);
	if (step != SQLITE_ROW) {
		rc = sq_fail(st, step, "cannot read a pragma", err, errlen);
		goto out;
	}
	m = (const char *)sqlite3_column_text(s, 0);
	snprintf(a->value, sizeof(a->value), "%s", m != NULL ? m : "");
	rc = IH_OK;
out:
	sqlite3_finalize(s);
	return rc;
}

/*
 * The schema objects: those this build creates, no more (a planted
 * trigger runs inside every writer) and no fewer.
 */
static int
audit_shape(struct sq *st, int (*fn)(void *, const struct store_audit *),
    void *arg, char *err, size_t errlen)
{
	struct store_audit a;
	int rc, differs;

	memset(&a, 0, sizeof(a));
	a.name = "schema";
	rc = sq_shape_check(st->db, a.value, sizeof(a.value), &differs, err,
	    errlen);
	if (rc != IH_OK)
		return rc;
	a.ok = differs == 0;
	if (a.ok)
		snprintf(a.value, sizeof(a.value), "this build's, version %d",
		    STORE_SCHEMA_VERSION);
	else
		snprintf(a.advice, sizeof(a.advice), "a trigger or view "
		    "planted in the store runs inside every writer: read it "
		    "with sqlite3 and .schema, then drop it or restore a "
		    "sound backup");
	return fn(arg, &a);
}

/*
 * The journal mode must be WAL (a file system without shared memory
 * leaves rollback mode); synchronous is the connection's level now,
 * FULL (2) or NORMAL (1), for the operator and the tests.
 */
int
sq_audit(struct store *base, int (*fn)(void *, const struct store_audit *),
    void *arg, char *err, size_t errlen)
{
	struct sq *st = sq_of(base);
	struct store_audit a;
	int rc;

	/* Statements are prepared when first used: here, all of them. */
	rc = sq_prepare_all(st, err, errlen);
	if (rc != IH_OK)
		return rc;
	rc = pragma_text(st, "journal_mode", &a, err, errlen);
	if (rc != IH_OK)
		return rc;
	a.ok = strcmp(a.value, "wal") == 0;
	if (!a.ok)
		snprintf(a.advice, sizeof(a.advice), "the file system may not "
		    "support WAL (network file systems do not); keep the "
		    "store on a local disk");
	rc = fn(arg, &a);
	if (rc != IH_OK)
		return rc;
	rc = pragma_text(st, "synchronous", &a, err, errlen);
	if (rc != IH_OK)
		return rc;
	a.ok = 1;
	rc = fn(arg, &a);
	if (rc != IH_OK)
		return rc;
	return audit_shape(st, fn, arg, err, errlen);
}
