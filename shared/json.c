/* json.c -- field extraction with SQLite's JSON functions. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "ih.h"
#include "json.h"

struct json {
	sqlite3		*db;
	sqlite3_stmt	*type;	/* type of the whole document */
	sqlite3_stmt	*each;	/* every top-level member */
	sqlite3_stmt	*path;	/* one member anywhere, by JSON path */
	sqlite3_stmt	*raw;	/* one member's JSON text, escapes kept */
};

void
json_close(struct json *js)
{
	if (js == NULL)
		return;
	sqlite3_finalize(js->type);
	sqlite3_finalize(js->each);
	sqlite3_finalize(js->path);
	sqlite3_finalize(js->raw);
	sqlite3_close(js->db);
	free(js);
}

int
json_open(struct json **out)
{
	struct json *js;
	int rc = IH_ENOMEM;

	*out = NULL;
	js = calloc(1, sizeof(*js));
	if (js == NULL)
		goto out;
	if (sqlite3_open_v2(":memory:", &js->db, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_MEMORY, NULL) != SQLITE_OK)
		goto out;
	if (sqlite3_prepare_v2(js->db, "SELECT json_type(?1)", -1,
	    &js->type, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(js->db,
	    "SELECT key, type, atom FROM json_each(?1)", -1, &js->each,
	    NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(js->db,
	    "SELECT json_type(?1), json_type(?1, ?2), json_extract(?1, ?2)",
	    -1, &js->path, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(js->db, "SELECT ?1 -> ?2", -1, &js->raw,
	    NULL) != SQLITE_OK)
		goto out;
	*out = js;
	js = NULL;
	rc = IH_OK;
out:
	json_close(js);
	return rc;
}

int
json_utf8_ok(const void *p, size_t len)
{
	const unsigned char *s = p, *e = s + len;
	unsigned long cp;
	size_t n, i;

	while (s < e) {
		if (*s == 0)
			return 0;
		if (*s < 0x80) {
			s++;
			continue;
		}
		if (*s >= 0xc2 && *s <= 0xdf) {
			n = 1;
			cp = *s & 0x1f;
		} else if (*s >= 0xe0 && *s <= 0xef) {
			n = 2;
			cp = *s & 0x0f;
		} else if (*s >= 0xf0 && *s <= 0xf4) {
			n = 3;
			cp = *s & 0x07;
		} else
			return 0;
		if ((size_t)(e - s) <= n)
			return 0;
		for (i = 1; i <= n; i++) {
			if ((s[i] & 0xc0) != 0x80)
				return 0;
			cp = cp << 6 | (s[i] & 0x3f);
		}
		if ((n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) ||
		    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return 0;
		s += n + 1;
	}
	return 1;
}

/*
 * Finds a real \u0000 escape: one preceded by an even number of
 * backslashes.  SQLite's JSON functions cut strings at such a NUL, which
 * would make "a\u0000b" and "a\u0000c" the same event id.
 */
static int
has_nul_escape(const char *s, size_t len)
{
	size_t i, j, run;

	for (i = 0; i + 6 <= len; i++) {
		if (s[i] != '\\' || (s[i + 1] != 'u' && s[i + 1] != 'U'))
			continue;
		if (memcmp(s + i + 2, "0000", 4) != 0)
			continue;
		for (run = 0, j = i; j > 0 && s[j - 1] == '\\'; j--)
			run++;
		if (run % 2 == 0)
			return 1;
	}
	return 0;
}

/* Does the JSON text of the member at path hold a \u0000 escape? */
static int
member_has_nul(struct json *js, const void *doc, size_t len, const char *path)
{
	const char *raw;
	int found = 1;

	sqlite3_bind_text(js->raw, 1, doc, (int)len, SQLITE_STATIC);
	sqlite3_bind_text(js->raw, 2, path, -1, SQLITE_STATIC);
	if (sqlite3_step(js->raw) == SQLITE_ROW) {
		raw = (const char *)sqlite3_column_text(js->raw, 0);
		found = raw == NULL || has_nul_escape(raw, (size_t)
		    sqlite3_column_bytes(js->raw, 0));
	}
	sqlite3_reset(js->raw);
	sqlite3_clear_bindings(js->raw);
	return found;
}

int
json_fields(struct json *js, const void *doc, size_t len,
    const char *const *keys, size_t n, char **vals)
{
	const char *key, *type, *text;
	size_t i, tlen;
	int rc = IH_EBODY, step;
	char path[128];
	unsigned seen = 0;
	int nul, pn;

	for (i = 0; i < n && i < JSON_MAX_FIELDS; i++)
		vals[i] = NULL;
	if (n > JSON_MAX_FIELDS || len > 0x7fffffff) {
		rc = IH_EINVAL;
		goto out;
	}
	if (!json_utf8_ok(doc, len))
		goto out;
	nul = has_nul_escape(doc, len);

	/* Malformed JSON makes the statement fail rather than answer. */
	sqlite3_bind_text(js->type, 1, doc, (int)len, SQLITE_STATIC);
	if (sqlite3_step(js->type) != SQLITE_ROW)
		goto out;
	type = (const char *)sqlite3_column_text(js->type, 0);
	if (type == NULL || strcmp(type, "object") != 0)
		goto out;

	sqlite3_bind_text(js->each, 1, doc, (int)len, SQLITE_STATIC);
	while ((step = sqlite3_step(js->each)) == SQLITE_ROW) {
		key = (const char *)sqlite3_column_text(js->each, 0);
		if (key == NULL)
			continue;
		for (i = 0; i < n; i++)
			if (strcmp(key, keys[i]) == 0)
				break;
		if (i == n)
			continue;
		if (seen & (1u << i))
			goto out;
		seen |= 1u << i;
		type = (const char *)sqlite3_column_text(js->each, 1);
		if (type == NULL || (strcmp(type, "text") != 0 &&
		    strcmp(type, "integer") != 0))
			continue;
		text = (const char *)sqlite3_column_text(js->each, 2);
		tlen = (size_t)sqlite3_column_bytes(js->each, 2);
		/* An embedded NUL ("\u0000") would make two ids equal. */
		if (text == NULL || tlen > JSON_VALUE_MAX ||
		    strlen(text) != tlen)
			continue;
		if (nul) {
			pn = snprintf(path, sizeof(path), "$.\"%s\"",
			    keys[i]);
			if (pn < 0 || (size_t)pn >= sizeof(path) ||
			    member_has_nul(js, doc, len, path))
				continue;
		}
		vals[i] = strdup(text);
		if (vals[i] == NULL) {
			rc = IH_ENOMEM;
			goto out;
		}
	}
	if (step != SQLITE_DONE)
		goto out;
	rc = IH_OK;
out:
	sqlite3_reset(js->type);
	sqlite3_reset(js->each);
	sqlite3_clear_bindings(js->type);
	sqlite3_clear_bindings(js->each);
	if (rc != IH_OK)
		for (i = 0; i < n && i < JSON_MAX_FIELDS; i++) {
			free(vals[i]);
			vals[i] = NULL;
		}
	return rc;
}

int
json_path_text(struct json *js, const void *doc, size_t len,
    const char *path, char **val)
{
	const char *type, *text;
	size_t tlen;
	int rc = IH_EBODY;

	*val = NULL;
	if (len > 0x7fffffff || path == NULL || strncmp(path, "$.", 2) != 0) {
		rc = IH_EINVAL;
		goto out;
	}
	if (!json_utf8_ok(doc, len))
		goto out;

	/* Malformed JSON makes the statement fail rather than answer. */
	sqlite3_bind_text(js->path, 1, doc, (int)len, SQLITE_STATIC);
	sqlite3_bind_text(js->path, 2, path, -1, SQLITE_STATIC);
	if (sqlite3_step(js->path) != SQLITE_ROW)
		goto out;
	type = (const char *)sqlite3_column_text(js->path, 0);
	if (type == NULL || strcmp(type, "object") != 0)
		goto out;
	rc = IH_OK;
	type = (const char *)sqlite3_column_text(js->path, 1);
	if (type == NULL || (strcmp(type, "text") != 0 &&
	    strcmp(type, "integer") != 0))
		goto out;
	text = (const char *)sqlite3_column_text(js->path, 2);
	tlen = (size_t)sqlite3_column_bytes(js->path, 2);
	/* An embedded NUL ("\u0000") would make two values equal. */
	if (text == NULL || tlen > JSON_VALUE_MAX || strlen(text) != tlen)
		goto out;
	if (has_nul_escape(doc, len) && member_has_nul(js, doc, len, path))
		goto out;
	*val = strdup(text);
	if (*val == NULL)
		rc = IH_ENOMEM;
out:
	sqlite3_reset(js->path);
	sqlite3_clear_bindings(js->path);
	return rc;
}
