/* json.c -- field extraction with jansson, a strict RFC 8259 parser. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "ih.h"
#include "json.h"

/*
 * Duplicate keys anywhere are refused, so that no reader of the stored
 * body can see another value than the one recorded.  NUL escapes are
 * decoded with their length kept, so a value holding one is seen whole
 * and dropped, never cut short.
 */
#define JSON_FLAGS	(JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL)
#define JSON_PATH_MAX	128	/* longest path json_path_text() reads */

struct json {
	size_t	max_depth;	/* deepest nesting a document may have */
};

void
json_close(struct json *js)
{
	free(js);
}

int
json_open(struct json **out)
{
	struct json *js;

	*out = NULL;
	js = calloc(1, sizeof(*js));
	if (js == NULL)
		return IH_ENOMEM;
	js->max_depth = JSON_MAX_DEPTH;
	*out = js;
	return IH_OK;
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
 * Is v nested no deeper than left levels of arrays and objects, counting
 * v itself?  Jansson stops at 2,048 levels on its own; this is tighter.
 */
static int
depth_ok(const json_t *v, size_t left)
{
	const char *key;
	json_t *m;
	size_t i;

	if (!json_is_object(v) && !json_is_array(v))
		return 1;
	if (left == 0)
		return 0;
	if (json_is_array(v)) {
		for (i = 0; i < json_array_size(v); i++)
			if (!depth_ok(json_array_get(v, i), left - 1))
				return 0;
		return 1;
	}
	json_object_foreach((json_t *)v, key, m)
		if (!depth_ok(m, left - 1))
			return 0;
	return 1;
}

/*
 * Parses doc into *root, which must be a JSON object.  A number past 64
 * bits is valid JSON: such a document is read again with every number
 * as a real, rather than refused, so only integer members are lost.
 * Returns IH_OK, IH_EBODY or IH_ENOMEM.
 */
static int
parse(struct json *js, const void *doc, size_t len, json_t **root)
{
	json_error_t err;
	json_t *v;
	int rc = IH_EBODY;

	*root = NULL;
	if (!json_utf8_ok(doc, len))
		goto out;
	v = json_loadb(doc, len, JSON_FLAGS, &err);
	if (v == NULL &&
	    json_error_code(&err) == json_error_numeric_overflow)
		v = json_loadb(doc, len, JSON_FLAGS | JSON_DECODE_INT_AS_REAL,
		    &err);
	if (v == NULL) {
		if (json_error_code(&err) == json_error_out_of_memory)
			rc = IH_ENOMEM;
		goto out;
	}
	if (!json_is_object(v) || !depth_ok(v, js->max_depth)) {
		json_decref(v);
		goto out;
	}
	*root = v;
	rc = IH_OK;
out:
	return rc;
}

/*
 * Copies a string or integer member into *val, or leaves *val NULL when
 * v is absent, of another type, too long, or holds a NUL (which would
 * make "a\u0000b" and "a\u0000c" the same id).  Returns IH_OK or
 * IH_ENOMEM.
 */
static int
scalar_text(const json_t *v, char **val)
{
	char num[32];
	const char *s;
	size_t len;
	int n;

	*val = NULL;
	if (json_is_integer(v)) {
		n = snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT,
		    json_integer_value(v));
		if (n < 0 || (size_t)n >= sizeof(num))
			return IH_OK;
		s = num;
		len = (size_t)n;
	} else if (json_is_string(v)) {
		s = json_string_value(v);
		len = json_string_length(v);
	} else
		return IH_OK;
	if (len > JSON_VALUE_MAX || memchr(s, '\0', len) != NULL)
		return IH_OK;
	*val = strdup(s);
	return *val == NULL ? IH_ENOMEM : IH_OK;
}

int
json_fields(struct json *js, const void *doc, size_t len,
    const char *const *keys, size_t n, char **vals)
{
	json_t *root = NULL;
	size_t i;
	int rc;

	for (i = 0; i < n && i < JSON_MAX_FIELDS; i++)
		vals[i] = NULL;
	if (n > JSON_MAX_FIELDS) {
		rc = IH_EINVAL;
		goto out;
	}
	rc = parse(js, doc, len, &root);
	if (rc != IH_OK)
		goto out;
	for (i = 0; i < n; i++) {
		rc = scalar_text(json_object_get(root, keys[i]), &vals[i]);
		if (rc != IH_OK)
			goto out;
	}
out:
	json_decref(root);
	if (rc != IH_OK)
		for (i = 0; i < n && i < JSON_MAX_FIELDS; i++) {
			free(vals[i]);
			vals[i] = NULL;
		}
	return rc;
}

/*
 * Follows path (after its "$") from root: ".name" steps into an object
 * member, "[N]" into an array element.  *at becomes the value, or NULL
 * when a step finds nothing.  Returns IH_OK, or IH_EINVAL for a path in
 * another syntax (a quoted name, a name holding '"', an empty name).
 */
static int
walk(const json_t *root, const char *path, const json_t **at)
{
	char name[JSON_PATH_MAX];
	const json_t *v = root;
	const char *p = path;
	unsigned long idx;
	/* A missing member makes v NULL; the rest of the path is still
	 * checked, and jansson's getters answer NULL for a NULL parent. */
	size_t n;
	char *end;

	*at = NULL;
	while (*p != '\0') {
		if (*p == '.') {
			n = strcspn(p + 1, ".[\"");
			if (n == 0 || n >= sizeof(name) || p[1 + n] == '"')
				return IH_EINVAL;
			memcpy(name, p + 1, n);
			name[n] = '\0';
			v = json_object_get(v, name);
			p += 1 + n;
		} else if (*p == '[') {
			if (p[1] < '0' || p[1] > '9')
				return IH_EINVAL;
			idx = strtoul(p + 1, &end, 10);
			if (*end != ']')
				return IH_EINVAL;
			v = json_array_get(v, idx);
			p = end + 1;
		} else
			return IH_EINVAL;
	}
	*at = v;
	return IH_OK;
}

int
json_path_text(struct json *js, const void *doc, size_t len,
    const char *path, char **val)
{
	const json_t *at;
	json_t *root = NULL;
	int rc = IH_EINVAL;

	*val = NULL;
	if (path == NULL || strncmp(path, "$.", 2) != 0 ||
	    strlen(path) >= JSON_PATH_MAX)
		goto out;
	rc = parse(js, doc, len, &root);
	if (rc != IH_OK)
		goto out;
	rc = walk(root, path + 1, &at);
	if (rc != IH_OK)
		goto out;
	rc = scalar_text(at, val);
out:
	json_decref(root);
	return rc;
}
