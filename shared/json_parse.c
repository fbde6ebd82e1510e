/*
 * json_parse.c -- the strict parser: yajl, a strict streaming JSON
 * parser, called back token by token, with json_check.c's checks on
 * each token and the members asked for matched as they stream by.
 *
 * yajl lexes and validates the body in one pass and calls back for each
 * token; nothing here lexes JSON (json_check.c only looks again at the
 * escapes of a string yajl has validated).  The callbacks keep only the
 * state the contract needs: the nesting depth, where each requested
 * path stands, and the keys of the objects still open, so that a
 * repeated key is found.  yajl builds no tree and hands strings without
 * escapes as pointers into the body; only escaped strings are decoded,
 * into one buffer of its own that each such string reuses.
 *
 * Memory, beyond the body: 4 bytes per key of the objects open at once
 * (in an array that doubles as it grows; every key takes at least 4
 * bytes of body: two quotes, a colon and a value), each escaped one of
 * those keys decoded (shorter than its escaped text), and yajl's buffer
 * for the longest escaped string, decoded.  Objects closed give their
 * keys back, so a million small objects cost no more than one.
 *
 * The members asked for (json_int.h's targets, set up by json_path.c)
 * are matched here as the tokens stream by, since no tree is kept to
 * look them up in afterwards.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_parse.h>

#include "ih.h"
#include "json.h"
#include "json_int.h"

#define JSON_BODY_MAX	0x7fffffffu	/* key offsets are 31 bits */
#define JSON_KEEP_KEYS	1024	/* key slots kept between documents */
#define JSON_KEEP_ARENA	16384	/* arena bytes kept between documents */

void
json_close(struct json *js)
{
	if (js == NULL)
		return;
	free(js->keys);
	free(js->arena);
	free(js);
}

int
json_open(struct json **out)
{
	struct json *js;

	*out = NULL;
	/*
	 * Not calloc: zeroing the levels and targets cost as much as a
	 * small body's parse (make bench-pages).  Level 0 is the top's.
	 */
	js = malloc(sizeof(*js));
	if (js == NULL)
		return IH_ENOMEM;
	memset(js, 0, offsetof(struct json, level));
	memset(&js->level[0], 0, sizeof(js->level[0]));
	*out = js;
	return IH_OK;
}

/* Stops the parse from a callback: yajl then returns client_canceled. */
static int
stop(struct json *js, int err)
{
	js->err = err;
	return 0;
}

/* Records that the callback's token ends where yajl now stands. */
static int
next(struct json *js)
{
	js->last_end = yajl_get_bytes_consumed(js->h);
	return 1;
}

/* Copies the n bytes at s into *val, unless too long.  IH_OK/ENOMEM. */
static int
capture(char **val, const void *s, size_t n)
{
	if (*val != NULL || n > JSON_VALUE_MAX)
		return IH_OK;
	*val = malloc(n + 1);
	if (*val == NULL)
		return IH_ENOMEM;
	memcpy(*val, s, n);
	(*val)[n] = '\0';
	return IH_OK;
}

/*
 * A value starts in the current container: the top-level object when
 * nothing is open.  s/n is its text when it may be returned (a string
 * without NUL, or an integer in 64 bits), else s is NULL.  Advances
 * each target standing on the container whose next step is this value:
 * a container becomes open on its path, a scalar at its last step is
 * its value.  Returns 1, or 0 to stop the parse.
 */
static int
value(struct json *js, int container, const void *s, size_t n)
{
	struct json_level *lv = &js->level[js->depth];
	struct json_target *t;
	size_t d = js->depth, i;
	int hit;

	if (d == 0) {
		if (!container || js->done)
			return stop(js, IH_EBODY);
		for (i = 0; i < js->ntargets; i++)
			js->target[i].matched = 1;
		return 1;
	}
	for (i = 0; i < js->ntargets; i++) {
		t = &js->target[i];
		/* An element of json_items()'s array: its place is kept. */
		if (t->raw == JSON_WANT_SPANS && t->matched == d &&
		    d == t->nsteps + 1 && lv->is_array) {
			if (container) {
				t->matched = d + 1;
				t->raw_start = yajl_get_bytes_consumed(js->h) -
				    1;
			}
			continue;
		}
		if (t->matched != d || d > t->nsteps)
			continue;
		if (lv->is_array)
			hit = t->steps[d - 1].name == NULL &&
			    t->steps[d - 1].index == lv->index;
		else
			hit = t->selected;
		if (!hit)
			continue;
		if (container) {
			if (d < t->nsteps)
				t->matched = d + 1;
			else if (t->raw && d == t->nsteps) {
				/* JSON_WANT_SPANS: its elements are next. */
				/* yajl stands just past the '{' or '['. */
				t->matched = d + 1;
				t->raw_start = yajl_get_bytes_consumed(js->h) -
				    1;
			}
		} else if (d == t->nsteps && s != NULL && !t->raw &&
		    capture(t->val, s, n) != IH_OK)
			return stop(js, IH_ENOMEM);
		else if (d == t->nsteps && t->raw == JSON_WANT_BOOL &&
		    js->boolean != NULL && capture(t->val, js->boolean,
		    strlen(js->boolean)) != IH_OK)
			return stop(js, IH_ENOMEM);
	}
	if (lv->is_array)
		lv->index++;
	return 1;
}

static int
on_null(void *ctx)
{
	struct json *js = ctx;

	return value(js, 0, NULL, 0) && next(js);
}

static int
on_boolean(void *ctx, int b)
{
	struct json *js = ctx;
	int ok;

	js->boolean = b ? "true" : "false";
	ok = value(js, 0, NULL, 0);
	js->boolean = NULL;
	return ok && next(js);
}

/* A number: an integer that fits in 64 bits is returned as %lld would
 * print it, anything else is of another type. */
static int
on_number(void *ctx, const char *t, size_t n)
{
	struct json *js = ctx;
	char buf[32], out[32];
	long long v;
	size_t i;
	int k;

	/*
	 * The common case, a plain integer of at most 18 digits: finite,
	 * in 64 bits and already as %lld prints it (JSON has no leading
	 * zeros; "-0" is left to the general way, which prints "0").
	 */
	i = n > 0 && t[0] == '-';
	if (n > i && n - i <= 18 && !(n == 2 && i == 1 && t[1] == '0')) {
		while (i < n && t[i] >= '0' && t[i] <= '9')
			i++;
		if (i == n)
			return value(js, 0, t, n) && next(js);
	}
	if (!json_number_finite(t, n))
		return stop(js, IH_EBODY);
	if (n >= sizeof(buf))
		return value(js, 0, NULL, 0) && next(js);
	memcpy(buf, t, n);
	buf[n] = '\0';
	if (strpbrk(buf, ".eE") != NULL)
		return value(js, 0, NULL, 0) && next(js);
	errno = 0;
	v = strtoll(buf, NULL, 10);
	if (errno == ERANGE)
		return value(js, 0, NULL, 0) && next(js);
	k = snprintf(out, sizeof(out), "%lld", v);
	return value(js, 0, out, (size_t)k) && next(js);
}

static int
on_string(void *ctx, const unsigned char *s, size_t n)
{
	struct json *js = ctx;
	int nul;

	if (!json_escapes_ok(js, s, &nul))
		return stop(js, IH_EBODY);
	return value(js, 0, nul ? NULL : s, n) && next(js);
}

static int
open_container(struct json *js, int is_array)
{
	struct json_level *lv;

	if (js->depth == 0 && is_array)
		return stop(js, IH_EBODY);	/* the top must be an object */
	if (!value(js, 1, NULL, 0))
		return 0;
	if (js->depth >= JSON_MAX_DEPTH)
		return stop(js, IH_EBODY);
	lv = &js->level[++js->depth];
	lv->key_base = js->nkeys;
	lv->arena_base = js->alen;
	lv->index = 0;
	lv->is_array = is_array;
	return next(js);
}

static int
on_start_map(void *ctx)
{
	return open_container(ctx, 0);
}

static int
on_start_array(void *ctx)
{
	return open_container(ctx, 1);
}

static int
grow(void **p, size_t *cap, size_t need, size_t size)
{
	size_t c = *cap > 0 ? *cap : 64;
	void *np;

	while (c < need)
		c *= 2;
	if (c == *cap)
		return IH_OK;
	np = realloc(*p, c * size);
	if (np == NULL)
		return IH_ENOMEM;
	*p = np;
	*cap = c;
	return IH_OK;
}

/*
 * A key: kept for the duplicate check (its place in the body, or a
 * decoded copy when it had escapes), and matched against each target's
 * next step.  A key holding \u0000 is refused.
 */
static int
on_map_key(void *ctx, const unsigned char *s, size_t n)
{
	struct json *js = ctx;
	struct json_target *t;
	size_t d = js->depth, i;
	uint32_t k;
	int nul;

	if (!json_escapes_ok(js, s, &nul) || nul)
		return stop(js, IH_EBODY);
	if (grow((void **)&js->keys, &js->keys_cap, js->nkeys + 1,
	    sizeof(*js->keys)) != IH_OK)
		return stop(js, IH_ENOMEM);
	if ((uintptr_t)s >= (uintptr_t)js->doc &&
	    (uintptr_t)s <= (uintptr_t)(js->doc + js->len))
		k = (uint32_t)(s - js->doc);
	else {
		if (grow((void **)&js->arena, &js->acap, js->alen + n + 1,
		    1) != IH_OK)
			return stop(js, IH_ENOMEM);
		k = (uint32_t)js->alen | JSON_KEY_ARENA;
		memcpy(js->arena + js->alen, s, n);
		js->arena[js->alen + n] = '\0';
		js->alen += n + 1;
	}
	js->keys[js->nkeys++] = k;
	for (i = 0; i < js->ntargets; i++) {
		t = &js->target[i];
		t->selected = t->matched == d && d <= t->nsteps &&
		    t->steps[d - 1].name != NULL &&
		    t->steps[d - 1].name_len == n &&
		    memcmp(t->steps[d - 1].name, s, n) == 0;
	}
	return next(js);
}

/*
 * Captures the text of the container now closing for each raw target
 * that stands on it: from its opening bracket to the closing one yajl
 * has just read.  Returns 1, or 0 to stop the parse.
 */
static int
raw_close(struct json *js)
{
	struct json_target *t;
	size_t i, end = yajl_get_bytes_consumed(js->h);

	for (i = 0; i < js->ntargets; i++) {
		t = &js->target[i];
		if (t->raw == JSON_WANT_SPANS && t->matched == js->depth &&
		    js->depth == t->nsteps + 2) {
			if (js->nspans >= js->max_spans)
				return stop(js, IH_ETOOBIG);
			js->spans[js->nspans].off = t->raw_start;
			js->spans[js->nspans++].len = end - t->raw_start;
			continue;
		}
		if (t->raw != JSON_WANT_RAW || t->matched != js->depth ||
		    js->depth != t->nsteps + 1 || *t->val != NULL)
			continue;
		if (end > js->len || t->raw_start >= end ||
		    end - t->raw_start > t->raw_max)
			continue;
		*t->val = malloc(end - t->raw_start + 1);
		if (*t->val == NULL)
			return stop(js, IH_ENOMEM);
		memcpy(*t->val, js->doc + t->raw_start, end - t->raw_start);
		(*t->val)[end - t->raw_start] = '\0';
	}
	return 1;
}

static int
close_container(struct json *js)
{
	struct json_level *lv = &js->level[js->depth];
	size_t i;

	if (!raw_close(js))
		return 0;

	/* With fewer than 2 keys, keys[] may not even exist (NULL). */
	if (!lv->is_array) {
		if (js->nkeys - lv->key_base > 1 && json_keys_repeat(js,
		    js->keys + lv->key_base, js->nkeys - lv->key_base))
			return stop(js, IH_EBODY);
		js->nkeys = lv->key_base;
		js->alen = lv->arena_base;
	}
	js->depth--;
	for (i = 0; i < js->ntargets; i++)
		if (js->target[i].matched > js->depth)
			js->target[i].matched = js->depth;
	if (js->depth == 0)
		js->done = 1;
	return next(js);
}

static int
on_end(void *ctx)
{
	return close_container(ctx);
}

static const yajl_callbacks json_callbacks = {
	on_null,
	on_boolean,
	NULL,		/* integers and reals come as text, to on_number */
	NULL,
	on_number,
	on_string,
	on_start_map,
	on_map_key,
	on_end,
	on_start_array,
	on_end,
};

/* The contract is json_int.h's. */
int
json_parse(struct json *js, const void *doc, size_t len)
{
	yajl_status st;
	int rc = IH_EBODY;

	js->doc = doc;
	js->len = len;
	js->last_end = 0;
	js->depth = 0;
	js->nkeys = 0;
	js->alen = 0;
	js->err = IH_EBODY;
	js->done = 0;
	js->h = NULL;
	js->nspans = 0;
	js->parses++;
	if (len > JSON_BODY_MAX || !json_utf8_ok(doc, len))
		goto out;
	js->h = yajl_alloc(&json_callbacks, NULL, js);
	if (js->h == NULL) {
		rc = IH_ENOMEM;
		goto out;
	}
	/* yajl's defaults, stated: strict JSON, one value, nothing after. */
	yajl_config(js->h, yajl_allow_comments, 0);
	yajl_config(js->h, yajl_dont_validate_strings, 0);
	yajl_config(js->h, yajl_allow_trailing_garbage, 0);
	yajl_config(js->h, yajl_allow_multiple_values, 0);
	yajl_config(js->h, yajl_allow_partial_values, 0);
	st = yajl_parse(js->h, doc, len);
	if (st == yajl_status_ok)
		st = yajl_complete_parse(js->h);
	if (st == yajl_status_ok && js->done)
		rc = IH_OK;
	else if (st == yajl_status_client_canceled)
		rc = js->err;
out:
	if (js->h != NULL)
		yajl_free(js->h);
	js->h = NULL;
	js->doc = NULL;
	if (js->keys_cap > JSON_KEEP_KEYS) {
		free(js->keys);
		js->keys = NULL;
		js->keys_cap = 0;
	}
	if (js->acap > JSON_KEEP_ARENA) {
		free(js->arena);
		js->arena = NULL;
		js->acap = 0;
	}
	return rc;
}
