/*
 * sqlite_shape.c -- SQLite: whether a store's schema objects are the
 * ones this build creates (sqlite_shape.h).
 *
 * The reference is db/sqlite/schema.sql applied to an empty database in
 * memory.  A store migrated from an older version holds the same objects,
 * but its tables' text differs (the comments of schema.sql are gone and
 * a remade table's name is quoted, a column added by a migration comes
 * last), so each object's text is compared without comments, double
 * quotes or runs of blanks, a table's definitions in sorted order.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "ih.h"
#include "sqlite_shape.h"
#include "sqlite_trust.h"

/* db/sqlite/schema.sql, turned into a C string at build time. */
extern const char store_sqlite_schema_sql[];

/* The objects SQLite makes for itself (autoindexes, sqlite_sequence). */
#define SHAPE_OBJECTS	"SELECT type, name, tbl_name, sql FROM " \
	"sqlite_master WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\' " \
	"ORDER BY type, name"
#define SHAPE_ONE	"SELECT tbl_name, sql FROM sqlite_master WHERE " \
	"type = ?1 AND name = ?2"

struct shape {
	char	*out;
	size_t	 outlen;
	size_t	 used;
	int	 n;
};

/* Appends one finding, "; "-separated; past the room, only counts it. */
static void
shape_note(struct shape *sh, const char *fmt, const char *a, const char *b,
    const char *c)
{
	int n;

	sh->n++;
	if (sh->used + 1 >= sh->outlen)
		return;
	if (sh->used > 0) {
		n = snprintf(sh->out + sh->used, sh->outlen - sh->used, "; ");
		if (n < 0 || (size_t)n >= sh->outlen - sh->used)
			return;
		sh->used += (size_t)n;
	}
	n = snprintf(sh->out + sh->used, sh->outlen - sh->used, fmt, a, b, c);
	if (n < 0)
		return;
	sh->used += (size_t)n < sh->outlen - sh->used ? (size_t)n :
	    sh->outlen - sh->used - 1;
}

/*
 * The text of a CREATE statement without comments, double quotes and
 * runs of blanks; strings in single quotes are kept as written.  The
 * caller frees it; NULL when out of memory.
 */
static char *
shape_norm(const char *sql)
{
	size_t len = sql != NULL ? strlen(sql) : 0, o = 0, i;
	char *out;
	int blank = 0;

	out = malloc(len + 1);
	if (out == NULL)
		return NULL;
	for (i = 0; i < len; i++) {
		if (sql[i] == '\'') {
			if (blank && o > 0)
				out[o++] = ' ';
			blank = 0;
			do {
				out[o++] = sql[i++];
			} while (i < len && sql[i] != '\'');
			if (i < len)
				out[o++] = sql[i];
			continue;
		}
		if (sql[i] == '-' && sql[i + 1] == '-') {
			while (i < len && sql[i] != '\n')
				i++;
			blank = 1;
			continue;
		}
		if (sql[i] == '/' && sql[i + 1] == '*') {
			for (i += 2; i < len && !(sql[i] == '*' &&
			    sql[i + 1] == '/'); i++)
				;
			i++;
			blank = 1;
			continue;
		}
		if (sql[i] == '"')
			continue;
		if (sql[i] == ' ' || sql[i] == '\t' || sql[i] == '\n' ||
		    sql[i] == '\r') {
			blank = 1;
			continue;
		}
		/* A blank is kept only between two words. */
		if (blank && o > 0 && out[o - 1] != '(' && out[o - 1] != ',' &&
		    sql[i] != ')' && sql[i] != ',')
			out[o++] = ' ';
		blank = 0;
		out[o++] = sql[i];
	}
	out[o] = '\0';
	return out;
}

static int
item_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * A normalized CREATE TABLE with its definitions (columns, constraints)
 * in sorted order: a migration adds a column last, where a new store has
 * it in its place.  The caller frees it; NULL when out of memory.
 */
static char *
shape_sorted(const char *n)
{
	const char *open = strchr(n, '('), *close = strrchr(n, ')');
	char *body = NULL, **items = NULL, *out = NULL;
	size_t len = strlen(n), blen, count = 0, o, i;
	int depth = 0, quoted = 0;

	if (open == NULL || close == NULL || close < open) {
		out = malloc(len + 1);
		if (out != NULL)
			memcpy(out, n, len + 1);
		return out;
	}
	blen = (size_t)(close - open - 1);
	body = malloc(blen + 1);
	items = calloc(blen + 1, sizeof(*items));
	out = malloc(len + 1);
	if (body == NULL || items == NULL || out == NULL) {
		free(out);
		out = NULL;
		goto done;
	}
	memcpy(body, open + 1, blen);
	body[blen] = '\0';
	items[count++] = body;
	for (i = 0; i < blen; i++) {
		if (body[i] == '\'')
			quoted = !quoted;
		else if (!quoted && body[i] == '(')
			depth++;
		else if (!quoted && body[i] == ')')
			depth--;
		else if (!quoted && depth == 0 && body[i] == ',') {
			body[i] = '\0';
			items[count++] = body + i + 1;
		}
	}
	qsort(items, count, sizeof(*items), item_cmp);
	o = (size_t)(open - n) + 1;
	memcpy(out, n, o);
	for (i = 0; i < count; i++) {
		if (i > 0)
			out[o++] = ',';
		memcpy(out + o, items[i], strlen(items[i]));
		o += strlen(items[i]);
	}
	memcpy(out + o, close, strlen(close) + 1);
done:
	free(body);
	free(items);
	return out;
}

/*
 * Whether two CREATE statements say the same once normalized (a table's
 * definitions in any order).
 */
static int
shape_same(const char *type, const char *a, const char *b, int *same)
{
	char *na, *nb, *sa = NULL, *sb = NULL;
	int rc = IH_ENOMEM;

	na = shape_norm(a);
	nb = shape_norm(b);
	if (na == NULL || nb == NULL)
		goto out;
	if (strcmp(type, "table") == 0) {
		sa = shape_sorted(na);
		sb = shape_sorted(nb);
		if (sa == NULL || sb == NULL)
			goto out;
	}
	*same = strcmp(sa != NULL ? sa : na, sb != NULL ? sb : nb) == 0;
	rc = IH_OK;
out:
	free(na);
	free(nb);
	free(sa);
	free(sb);
	return rc;
}

static int
shape_fail(sqlite3 *db, int rc, const char *what, char *err, size_t errlen)
{
	snprintf(err, errlen, "%s: %s (sqlite %d)", what,
	    db != NULL ? sqlite3_errmsg(db) : sqlite3_errstr(rc), rc);
	return IH_ESTORE;
}

/*
 * Each object of a looked up in b: missing (said with what_missing), or
 * with another table or text (when compare is set).
 */
static int
shape_walk(sqlite3 *a, sqlite3 *b, int compare, const char *what_missing,
    struct shape *sh, char *err, size_t errlen)
{
	sqlite3_stmt *all = NULL, *one = NULL;
	const char *type, *name, *tbl, *sql;
	int rc, step, same;

	rc = sqlite3_prepare_v2(a, SHAPE_OBJECTS, -1, &all, NULL);
	if (rc != SQLITE_OK) {
		rc = shape_fail(a, rc, "cannot read the schema", err, errlen);
		goto out;
	}
	rc = sqlite3_prepare_v2(b, SHAPE_ONE, -1, &one, NULL);
	if (rc != SQLITE_OK) {
		rc = shape_fail(b, rc, "cannot read the schema", err, errlen);
		goto out;
	}
	for (;;) {
		step = sqlite3_step(all);
		if (step != SQLITE_ROW)
			break;
		type = (const char *)sqlite3_column_text(all, 0);
		name = (const char *)sqlite3_column_text(all, 1);
		tbl = (const char *)sqlite3_column_text(all, 2);
		sql = (const char *)sqlite3_column_text(all, 3);
		if (type == NULL || name == NULL || tbl == NULL)
			continue;
		sqlite3_reset(one);
		sqlite3_bind_text(one, 1, type, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(one, 2, name, -1, SQLITE_TRANSIENT);
		step = sqlite3_step(one);
		if (step == SQLITE_DONE) {
			shape_note(sh, "%s %s %s", what_missing, type, name);
			continue;
		}
		if (step != SQLITE_ROW)
			break;
		if (!compare)
			continue;
		rc = shape_same(type, sql, (const char *)
		    sqlite3_column_text(one, 1), &same);
		if (rc != IH_OK) {
			snprintf(err, errlen, "out of memory");
			goto out;
		}
		if (!same || strcmp(tbl, (const char *)
		    sqlite3_column_text(one, 0)) != 0)
			shape_note(sh, "%s %s %s", "changed", type, name);
	}
	if (step != SQLITE_DONE) {
		rc = shape_fail(a, step, "cannot read the schema", err, errlen);
		goto out;
	}
	rc = IH_OK;
out:
	sqlite3_finalize(all);
	sqlite3_finalize(one);
	return rc;
}

int
sq_shape_check(sqlite3 *db, char *out, size_t outlen, int *differs,
    char *err, size_t errlen)
{
	struct shape sh = { out, outlen, 0, 0 };
	sqlite3 *ref = NULL;
	int rc;

	out[0] = '\0';
	*differs = 0;
	rc = sqlite3_open_v2(":memory:", &ref, SQLITE_OPEN_READWRITE, NULL);
	if (rc != SQLITE_OK) {
		rc = shape_fail(ref, rc, "cannot open a reference schema", err,
		    errlen);
		goto out;
	}
	rc = sqtrust_harden(ref, err, errlen);
	if (rc != IH_OK)
		goto out;
	rc = sqlite3_exec(ref, store_sqlite_schema_sql, NULL, NULL, NULL);
	if (rc != SQLITE_OK) {
		rc = shape_fail(ref, rc, "cannot build the reference schema",
		    err, errlen);
		goto out;
	}
	rc = shape_walk(db, ref, 1, "unknown", &sh, err, errlen);
	if (rc == IH_OK)
		rc = shape_walk(ref, db, 0, "missing", &sh, err, errlen);
	if (rc != IH_OK)
		goto out;
	*differs = sh.n;
	rc = IH_OK;
out:
	sqlite3_close(ref);
	return rc;
}
