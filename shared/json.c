/*
 * json.c -- field extraction with yajl, a strict streaming JSON parser.
 *
 * yajl lexes and validates the body in one pass and calls back for each
 * token; nothing here lexes JSON (escapes_ok() only looks again at the
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
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_parse.h>

#include "ih.h"
#include "json.h"

#define JSON_PATH_MAX	128	/* longest path json_path_text() reads */
#define JSON_STEPS_MAX	64	/* steps in such a path: each takes 2 bytes */
#define JSON_BODY_MAX	0x7fffffffu	/* key offsets are 31 bits */
#define JSON_KEY_ARENA	0x80000000u	/* key offset is into the arena */
#define JSON_NUM_DIGITS	320	/* significant digits kept to test range */
#define JSON_KEEP_KEYS	1024	/* key slots kept between documents */
#define JSON_KEEP_ARENA	16384	/* arena bytes kept between documents */

/* One step of a path: an object member's name or an array index. */
struct json_step {
	const char	*name;		/* NULL for an index step */
	size_t		 name_len;
	unsigned long	 index;
};

/* A member asked for, and how much of its path the parser stands on. */
struct json_target {
	struct json_step steps[JSON_STEPS_MAX];
	size_t		 nsteps;
	size_t		 matched;	/* open containers on the path */
	int		 selected;	/* the current key is the next step */
	char		**val;		/* where the value goes */
	int		 raw;		/* wants a container's text */
	size_t		 raw_start;	/* where that container began */
	size_t		 raw_max;	/* its longest text returned */
};

/* An open array or object. */
struct json_level {
	size_t		 key_base;	/* its first key in keys[] */
	size_t		 arena_base;	/* its first byte in arena[] */
	unsigned long	 index;		/* next element's index (arrays) */
	int		 is_array;
};

struct json {
	yajl_handle	 h;		/* the parser of the current document */
	const unsigned char *doc;
	size_t		 len;
	size_t		 last_end;	/* end of the last token called back */
	size_t		 depth;		/* containers open */
	struct json_level level[JSON_MAX_DEPTH + 1];
	uint32_t	*keys;		/* keys of the open objects */
	size_t		 nkeys, keys_cap;
	char		*arena;		/* their escaped keys, decoded */
	size_t		 alen, acap;
	struct json_target target[JSON_MAX_FIELDS];
	size_t		 ntargets;
	int		 err;		/* why a callback stopped the parse */
	int		 done;		/* the top-level object closed */
	const char	*boolean;	/* "true"/"false" while one is read */
};

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
	js = calloc(1, sizeof(*js));
	if (js == NULL)
		return IH_ENOMEM;
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

static unsigned
hex4(const unsigned char *p)
{
	unsigned v = 0, i;

	for (i = 0; i < 4; i++)
		v = v << 4 | (unsigned)(p[i] <= '9' ? p[i] - '0' :
		    (p[i] | 0x20) - 'a' + 10);
	return v;
}

/*
 * Checks the escapes of the string whose decoded text s yajl just gave.
 * yajl decodes a lone UTF-16 surrogate into '?' or a wrong character,
 * so a decoded string is looked at as it stands in the body: between
 * the last token called back and this one there are only blanks,
 * commas and colons, so its opening quote is the first one there.  The
 * escapes themselves are already valid (yajl checked them).  Sets *nul
 * when the string holds \u0000.  Returns 1, or 0 for a lone surrogate.
 */
static int
escapes_ok(struct json *js, const unsigned char *s, int *nul)
{
	const unsigned char *p, *end;
	size_t stop_at = yajl_get_bytes_consumed(js->h);
	unsigned cp;

	*nul = 0;
	if ((uintptr_t)s >= (uintptr_t)js->doc &&
	    (uintptr_t)s <= (uintptr_t)(js->doc + js->len))
		return 1;	/* not decoded: no escape in it */
	if (stop_at > js->len || stop_at <= js->last_end)
		return 0;
	end = js->doc + stop_at - 1;
	p = memchr(js->doc + js->last_end, '"', stop_at - js->last_end);
	if (p == NULL || p >= end || *end != '"')
		return 0;
	for (p++; p < end; p++) {
		if (*p != '\\')
			continue;
		if (p[1] != 'u') {
			p++;
			continue;
		}
		cp = hex4(p + 2);
		p += 5;
		if (cp == 0)
			*nul = 1;
		if (cp >= 0xdc00 && cp <= 0xdfff)
			return 0;
		if (cp >= 0xd800 && cp <= 0xdbff) {
			if (end - p < 7 || p[1] != '\\' || p[2] != 'u')
				return 0;
			cp = hex4(p + 3);
			if (cp < 0xdc00 || cp > 0xdfff)
				return 0;
			p += 6;
		}
	}
	return 1;
}

/*
 * Is the number t (n bytes, valid JSON) finite as a double?  Jansson,
 * the parser before, refused one that is not, and so does this: up to
 * JSON_NUM_DIGITS significant digits (more than the 309 of the midpoint
 * between DBL_MAX and 2^1024, so rounding is decided alike) and the
 * exponent are handed to strtod().
 */
static int
number_finite(const char *t, size_t n)
{
	char buf[JSON_NUM_DIGITS + 32];
	size_t i = 0, nd = 0;
	long long e10 = 0, x = 0;
	int seen = 0, neg = 0;

	if (i < n && t[i] == '-')
		i++;
	for (; i < n && t[i] >= '0' && t[i] <= '9'; i++) {
		if (!seen && t[i] == '0')
			continue;
		seen = 1;
		if (nd < JSON_NUM_DIGITS)
			buf[nd++] = t[i];
		else
			e10++;
	}
	if (i < n && t[i] == '.')
		for (i++; i < n && t[i] >= '0' && t[i] <= '9'; i++) {
			if (!seen && t[i] == '0') {
				e10--;
				continue;
			}
			seen = 1;
			if (nd < JSON_NUM_DIGITS) {
				buf[nd++] = t[i];
				e10--;
			}
		}
	if (i < n && (t[i] == 'e' || t[i] == 'E')) {
		i++;
		if (i < n && (t[i] == '+' || t[i] == '-'))
			neg = t[i++] == '-';
		for (; i < n && t[i] >= '0' && t[i] <= '9'; i++)
			if (x < 1000000000000LL)	/* > any length */
				x = x * 10 + (t[i] - '0');
	}
	if (nd == 0)
		return 1;
	/* The value is buf's digits times 10^(e10 +- x). */
	e10 += neg ? -x : x;
	if (e10 > 1000)
		return 0;
	if (e10 < -1000)
		return 1;
	snprintf(buf + nd, sizeof(buf) - nd, "e%lld", e10);
	return isfinite(strtod(buf, NULL));
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
	int k;

	if (!number_finite(t, n))
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

	if (!escapes_ok(js, s, &nul))
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

/* The text of key k, and its length. */
static const char *
key_text(const struct json *js, uint32_t k, size_t *n)
{
	const char *s, *q;

	if (k & JSON_KEY_ARENA) {
		s = js->arena + (k & ~JSON_KEY_ARENA);
		*n = strlen(s);
	} else {
		s = (const char *)js->doc + k;
		q = memchr(s, '"', js->len - k);
		*n = (size_t)(q - s);
	}
	return s;
}

/* Orders keys by length, then bytes. */
static int
key_cmp(const struct json *js, uint32_t a, uint32_t b)
{
	const char *sa, *sb;
	size_t na, nb;

	sa = key_text(js, a, &na);
	sb = key_text(js, b, &nb);
	if (na != nb)
		return na < nb ? -1 : 1;
	return memcmp(sa, sb, na);
}

static void
sift(const struct json *js, uint32_t *k, size_t root, size_t n)
{
	size_t child;
	uint32_t tmp;

	for (child = 2 * root + 1; child < n; child = 2 * root + 1) {
		if (child + 1 < n && key_cmp(js, k[child], k[child + 1]) < 0)
			child++;
		if (key_cmp(js, k[root], k[child]) >= 0)
			return;
		tmp = k[root];
		k[root] = k[child];
		k[child] = tmp;
		root = child;
	}
}

/*
 * Does any key repeat among the n at k?  A heap sort in place: no
 * memory beyond the keys, and n log n comparisons whatever the keys
 * (no hash for a body to flood).
 */
static int
keys_repeat(const struct json *js, uint32_t *k, size_t n)
{
	size_t i;
	uint32_t tmp;

	if (n < 2)
		return 0;
	for (i = n / 2; i-- > 0;)
		sift(js, k, i, n);
	for (i = n - 1; i > 0; i--) {
		tmp = k[0];
		k[0] = k[i];
		k[i] = tmp;
		sift(js, k, 0, i);
	}
	for (i = 1; i < n; i++)
		if (key_cmp(js, k[i - 1], k[i]) == 0)
			return 1;
	return 0;
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

	if (!escapes_ok(js, s, &nul) || nul)
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
		if (js->nkeys - lv->key_base > 1 && keys_repeat(js,
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

/*
 * Parses doc, which must be an acceptable JSON object, filling the
 * targets' values.  Returns IH_OK, IH_EBODY or IH_ENOMEM; on failure
 * the values may hold something: the caller frees them.
 */
static int
parse(struct json *js, const void *doc, size_t len)
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
	rc = parse(js, doc, len);
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
	rc = parse(js, doc, len);
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

int
json_extract(struct json *js, const void *doc, size_t len,
    struct json_want *w, size_t n, size_t raw_max)
{
	struct json_target *t;
	size_t i;
	int rc = IH_EINVAL;

	for (i = 0; i < n; i++) {
		w[i].val = NULL;
		w[i].len = 0;
	}
	js->ntargets = 0;
	if (n > JSON_MAX_FIELDS)
		goto out;
	for (i = 0; i < n; i++) {
		t = &js->target[i];
		if (w[i].path == NULL || strncmp(w[i].path, "$.", 2) != 0 ||
		    strlen(w[i].path) >= JSON_PATH_MAX ||
		    split(w[i].path + 1, t) != IH_OK)
			goto out;
		t->matched = 0;
		t->selected = 0;
		t->val = &w[i].val;
		t->raw = w[i].raw;
		t->raw_start = 0;
		t->raw_max = raw_max;
	}
	js->ntargets = n;
	rc = parse(js, doc, len);
out:
	js->ntargets = 0;
	for (i = 0; i < n; i++) {
		if (rc != IH_OK) {
			free(w[i].val);
			w[i].val = NULL;
		}
		w[i].len = w[i].val != NULL ? strlen(w[i].val) : 0;
	}
	return rc;
}
