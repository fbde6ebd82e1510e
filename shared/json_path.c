/*
 * json_path.c -- extraction by path: the members a caller asks for,
 * named by a path ("$.data.object.id") or a top-level key, set up as
 * json_parse.c's targets, and the values handed back.  Only the path's
 * syntax is read here; the body is read by json_parse() alone.
 */
#include <stdlib.h>
#include <string.h>

#include "ih.h"
#include "json.h"
#include "json_int.h"

int
json_fields(struct json *js, const void *doc, size_t len,
    const char *const *keys, size_t n, char **vals)
{
	struct json_target *t;
	size_t i;
	int rc;

	for (i = 0; i < n && i < JSON_MAX_FIELDS; i++)
		vals[i] = NULL;
	js->ntargets = 0;
	if (n > JSON_MAX_FIELDS) {
		rc = IH_EINVAL;
		goto out;
	}
	for (i = 0; i < n; i++) {
		t = &js->target[i];
		t->steps[0].name = keys[i];
		t->steps[0].name_len = strlen(keys[i]);
		t->nsteps = 1;
		t->matched = 0;
		t->selected = 0;
		t->val = &vals[i];
		t->raw = 0;
	}
	js->ntargets = n;
	rc = json_parse(js, doc, len);
out:
	js->ntargets = 0;
	if (rc != IH_OK)
		for (i = 0; i < n && i < JSON_MAX_FIELDS; i++) {
			free(vals[i]);
			vals[i] = NULL;
		}
	return rc;
}

/*
 * Splits path (after its "$") into t's steps: ".name" for an object
 * member, "[N]" for an array element.  Returns IH_OK, or IH_EINVAL for
 * a path in another syntax (a quoted name, a name holding '"', an empty
 * name).
 */
static int
split(const char *path, struct json_target *t)
{
	const char *p = path;
	struct json_step *st;
	char *end;
	size_t n;

	t->nsteps = 0;
	while (*p != '\0') {
		if (t->nsteps == JSON_STEPS_MAX)
			return IH_EINVAL;
		st = &t->steps[t->nsteps++];
		if (*p == '.') {
			n = strcspn(p + 1, ".[\"");
			if (n == 0 || n >= JSON_PATH_MAX || p[1 + n] == '"')
				return IH_EINVAL;
			st->name = p + 1;
			st->name_len = n;
			p += 1 + n;
		} else if (*p == '[') {
			if (p[1] < '0' || p[1] > '9')
				return IH_EINVAL;
			st->name = NULL;
			st->index = strtoul(p + 1, &end, 10);
			if (*end != ']')
				return IH_EINVAL;
			p = end + 1;
		} else
			return IH_EINVAL;
	}
	return IH_OK;
}

int
json_path_text(struct json *js, const void *doc, size_t len,
    const char *path, char **val)
{
	struct json_target *t = &js->target[0];
	int rc = IH_EINVAL, syntax;

	*val = NULL;
	js->ntargets = 0;
	if (path == NULL || strncmp(path, "$.", 2) != 0 ||
	    strlen(path) >= JSON_PATH_MAX)
		goto out;
	/* A body is judged before the rest of the path's syntax. */
	syntax = split(path + 1, t);
	if (syntax == IH_OK) {
		t->matched = 0;
		t->selected = 0;
		t->val = val;
		t->raw = 0;
		js->ntargets = 1;
	}
	rc = json_parse(js, doc, len);
	if (rc == IH_OK)
		rc = syntax;
out:
	js->ntargets = 0;
	if (rc != IH_OK) {
		free(*val);
		*val = NULL;
	}
	return rc;
}

/*
 * Aims t at path ("$." and at most JSON_PATH_MAX bytes), its value to go
 * to *val.  Returns IH_OK, or IH_EINVAL for a path it cannot take.
 */
static int
target_set(struct json_target *t, const char *path, char **val, int raw,
    size_t raw_max)
{
	if (path == NULL || strncmp(path, "$.", 2) != 0 ||
	    strlen(path) >= JSON_PATH_MAX || split(path + 1, t) != IH_OK)
		return IH_EINVAL;
	t->val = val;
	t->raw = raw;
	t->matched = 0;
	t->selected = 0;
	t->raw_start = 0;
	t->raw_max = raw_max;
	return IH_OK;
}

/* Each want's length, after the values of a failed parse are freed. */
static void
wants_end(struct json_want *w, size_t n, int rc)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (rc != IH_OK) {
			free(w[i].val);
			w[i].val = NULL;
		}
		w[i].len = w[i].val != NULL ? strlen(w[i].val) : 0;
	}
}

int
json_extract(struct json *js, const void *doc, size_t len,
    struct json_want *w, size_t n, size_t raw_max)
{
	size_t i;
	int rc = IH_EINVAL;

	for (i = 0; i < n; i++) {
		w[i].val = NULL;
		w[i].len = 0;
	}
	js->ntargets = 0;
	if (n > JSON_MAX_FIELDS)
		goto out;
	for (i = 0; i < n; i++)
		if (target_set(&js->target[i], w[i].path, &w[i].val, w[i].raw,
		    raw_max) != IH_OK)
			goto out;
	js->ntargets = n;
	rc = json_parse(js, doc, len);
out:
	js->ntargets = 0;
	wants_end(w, n, rc);
	return rc;
}

int
json_items(struct json *js, const void *doc, size_t len,
    const char *items_path, struct json_span *spans, size_t max,
    size_t *nspans, struct json_want *w, size_t n, size_t raw_max)
{
	char *unused = NULL;
	size_t i;
	int rc = IH_EINVAL;

	*nspans = 0;
	for (i = 0; i < n; i++) {
		w[i].val = NULL;
		w[i].len = 0;
	}
	js->ntargets = 0;
	if (n + 1 > JSON_MAX_FIELDS || items_path == NULL ||
	    strncmp(items_path, "$.", 2) != 0 ||
	    strlen(items_path) >= JSON_PATH_MAX)
		goto out;
	for (i = 0; i < n; i++)
		if (target_set(&js->target[i], w[i].path, &w[i].val, w[i].raw,
		    raw_max) != IH_OK)
			goto out;
	if (target_set(&js->target[n], items_path, &unused, JSON_WANT_SPANS,
	    raw_max) != IH_OK)
		goto out;
	js->ntargets = n + 1;
	js->spans = spans;
	js->max_spans = max;
	rc = json_parse(js, doc, len);
	if (rc == IH_OK)
		*nspans = js->nspans;
out:
	js->ntargets = 0;
	js->spans = NULL;
	js->max_spans = 0;
	js->nspans = 0;
	wants_end(w, n, rc);
	return rc;
}
