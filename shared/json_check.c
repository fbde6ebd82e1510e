/*
 * json_check.c -- the checks a body passes beyond yajl's own, as json.h
 * promises them: UTF-8 without a NUL byte, no lone UTF-16 surrogate in an
 * escape (and where \u0000 stands), numbers finite as a double, and no
 * key repeated in one object.  Each is called by json_parse.c as the
 * tokens stream by; none allocates.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_parse.h>

#include "ih.h"
#include "json.h"
#include "json_int.h"
#include "utf8.h"

#define JSON_NUM_DIGITS	320	/* significant digits kept to test range */
#define JSON_FEW_KEYS	16	/* keys compared pair by pair, at most */

/*
 * Eight bytes at a time: are all of them ASCII, none NUL?  (A byte is
 * NUL when subtracting 1 borrows into its high bit; the high bits of
 * the word are clear, so no borrow crosses a byte.)
 */
static int
ascii8(const unsigned char *s)
{
	const uint64_t lo = 0x0101010101010101ULL;
	const uint64_t hi = 0x8080808080808080ULL;
	uint64_t v;

	memcpy(&v, s, sizeof(v));
	return (v & hi) == 0 && ((v - lo) & hi) == 0;
}

int
json_utf8_ok(const void *p, size_t len)
{
	const unsigned char *s = p, *e = s + len;
	uint32_t cp;
	size_t n;

	while (s < e) {
		/* Bodies are mostly ASCII: whole words of it pass at once. */
		if ((size_t)(e - s) >= 8 && ascii8(s)) {
			s += 8;
			continue;
		}
		n = utf8_decode(s, (size_t)(e - s), &cp);
		if (n == 0 || cp == 0)
			return 0;
		s += n;
	}
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
int
json_escapes_ok(const struct json *js, const unsigned char *s, int *nul)
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
int
json_number_finite(const char *t, size_t n)
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
 * A small object's keys compared pair by pair, each key's text found
 * once: the heap sort below looks each key up again at every
 * comparison, which cost more than the whole test for the few keys of
 * a typical object (make bench-pages).
 */
static int
few_keys_repeat(const struct json *js, const uint32_t *k, size_t n)
{
	const char *s[JSON_FEW_KEYS];
	size_t len[JSON_FEW_KEYS], i, j;

	for (i = 0; i < n; i++)
		s[i] = key_text(js, k[i], &len[i]);
	for (i = 1; i < n; i++)
		for (j = 0; j < i; j++)
			if (len[i] == len[j] && memcmp(s[i], s[j], len[i]) == 0)
				return 1;
	return 0;
}

/*
 * Does any key repeat among the n at k?  Up to JSON_FEW_KEYS, pair by
 * pair; beyond, a heap sort in place: no memory beyond the keys, and n
 * log n comparisons whatever the keys (no hash for a body to flood).
 */
int
json_keys_repeat(const struct json *js, uint32_t *k, size_t n)
{
	size_t i;
	uint32_t tmp;

	if (n < 2)
		return 0;
	if (n <= JSON_FEW_KEYS)
		return few_keys_repeat(js, k, n);
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
