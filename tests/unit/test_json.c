/* test_json.c -- field extraction from hostile bodies. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ih.h"
#include "json.h"
#include "json_int.h"

static const char *const keys[] = { "id", "type" };

static int
fields(const char *doc, size_t len, char **vals)
{
	struct json *js;
	int rc;

	assert_int_equal(json_open(&js), IH_OK);
	rc = json_fields(js, doc, len, keys, 2, vals);
	json_close(js);
	return rc;
}

static void
table(void **state)
{
	static const struct {
		const char	*doc;
		int		 rc;
		const char	*id, *type;
	} t[] = {
		{ "{\"id\":\"evt_1\",\"type\":\"a.b\"}", IH_OK, "evt_1", "a.b" },
		{ "{\"type\":\"a\",\"id\":42}", IH_OK, "42", "a" },
		{ "{\"id\":\"x&y\"}", IH_OK, "x&y", NULL },
		{ "{\"id\":{\"a\":1},\"type\":[1]}", IH_OK, NULL, NULL },
		{ "{\"id\":null,\"type\":true}", IH_OK, NULL, NULL },
		{ "{\"id\":\"a\\u0000b\"}", IH_OK, NULL, NULL },
		{ "{\"d\":\"\\u0000\",\"id\":\"x\"}", IH_OK, "x", NULL },
		{ "{\"id\":\"a\\\\u0000b\"}", IH_OK, "a\\u0000b", NULL },
		{ "{\"data\":{\"id\":\"inner\"}}", IH_OK, NULL, NULL },
		{ "{\"id\":\"a\",\"id\":\"b\"}", IH_EBODY, NULL, NULL },
		{ "[1,2]", IH_EBODY, NULL, NULL },
		{ "\"id\"", IH_EBODY, NULL, NULL },
		{ "", IH_EBODY, NULL, NULL },
		{ "{\"id\":", IH_EBODY, NULL, NULL },
		{ "not json", IH_EBODY, NULL, NULL },
		{ "{\"id\":\"\xff\"}", IH_EBODY, NULL, NULL },
		{ "{\"id\":\"\xc0\xaf\"}", IH_EBODY, NULL, NULL },
		{ "{\"id\":\"\xed\xa0\x80\"}", IH_EBODY, NULL, NULL },
		{ "{\"id\":\"caf\xc3\xa9\"}", IH_OK, "caf\xc3\xa9", NULL },
		/* An object used as a key: SQLite 3.40 took it, then crashed. */
		{ "{\"a\":1,{\"\":\"x\",\"payment\":{\"id\":\"72\"}}:\"b\"}",
		    IH_EBODY, NULL, NULL },
		{ "{\"id\":\"x\",{}:1}", IH_EBODY, NULL, NULL },
		/* A repeated key anywhere, not only among those asked for. */
		{ "{\"id\":\"x\",\"d\":{\"a\":1,\"a\":2}}", IH_EBODY, NULL,
		    NULL },
		{ "{\"id\":\"x\",\"a\":[{\"b\":1,\"b\":1}]}", IH_EBODY, NULL,
		    NULL },
		{ "{\"a\\u0000\":1,\"id\":\"x\"}", IH_EBODY, NULL, NULL },
		{ "{\"id\":\"\\ud800\"}", IH_EBODY, NULL, NULL },
		{ "{\"id\":\"\\ud83d\\ude00\"}", IH_OK, "\xf0\x9f\x98\x80", NULL },
		{ "{\"id\":-7,\"type\":1.5}", IH_OK, "-7", NULL },
		{ "{\"id\":\"x\",\"n\":123456789012345678901234}", IH_OK, "x",
		    NULL },
		{ "{\"id\":123456789012345678901234,\"type\":\"t\"}", IH_OK,
		    NULL, "t" },
		{ "{\"id\":1e999}", IH_EBODY, NULL, NULL },
		{ " \r\n\t{\"id\":\"x\"} \n", IH_OK, "x", NULL },
		{ "{\"id\":\"x\"} {}", IH_EBODY, NULL, NULL },
		{ "{\"id\":\"x\",}", IH_EBODY, NULL, NULL },
		{ "{'id':'x'}", IH_EBODY, NULL, NULL },
		{ "{\"id\":01}", IH_EBODY, NULL, NULL },
		{ "{\"id\":NaN}", IH_EBODY, NULL, NULL },
		{ "{\"id\":\"a\tb\"}", IH_EBODY, NULL, NULL },
		/* Rows since the parser became yajl's: escapes are checked
		 * where they stand in the body, wherever the string is. */
		{ "{\"id\":\"\\udc00\"}", IH_EBODY, NULL, NULL },
		{ "{\"id\":\"\\ud800\\u0041\"}", IH_EBODY, NULL, NULL },
		{ "{\"id\":\"x\\ud800\"}", IH_EBODY, NULL, NULL },
		{ "{\"id\":\"x\",\"a\":[1, \"\\ud800\"]}", IH_EBODY, NULL, NULL },
		{ "{\"\\udc00\":1,\"id\":\"x\"}", IH_EBODY, NULL, NULL },
		{ "{ \"id\" : \"\\ud83d\\ude00\" , \"type\" : \"\\u0000\" }",
		    IH_OK, "\xf0\x9f\x98\x80", NULL },
		{ "{\"id\":\"\\u0041\\\\u0000\"}", IH_OK, "A\\u0000", NULL },
		{ "{\"id\":\"\\\\\\ud800\"}", IH_EBODY, NULL, NULL },
		{ "{\"id\":\"\\\\\\\\ud800\"}", IH_OK, "\\\\ud800", NULL },
		/* Escaped keys: matched and checked for repeats decoded. */
		{ "{\"\\u0069d\":\"x\",\"t\\u0079pe\":\"t\"}", IH_OK, "x", "t" },
		{ "{\"a\":1,\"\\u0061\":2,\"id\":\"x\"}", IH_EBODY, NULL, NULL },
		{ "{\"\\u0061\":1,\"\\u0061\":2}", IH_EBODY, NULL, NULL },
		{ "{\"a\":{\"b\":1},\"a\":2}", IH_EBODY, NULL, NULL },
		{ "{\"a\":{\"k\":1},\"b\":{\"k\":1},\"k\":2,\"id\":\"x\"}", IH_OK,
		    "x", NULL },
		{ "{\"ab\":1,\"a\":1,\"b\":1,\"\":1,\"id\":\"x\"}", IH_OK, "x",
		    NULL },
		/* Numbers: integers in 64 bits as %lld prints them, whatever
		 * else the body holds; a number past a double is refused. */
		{ "{\"id\":42,\"n\":123456789012345678901234}", IH_OK, "42",
		    NULL },
		{ "{\"id\":-0,\"type\":1E2}", IH_OK, "0", NULL },
		{ "{\"id\":9223372036854775807}", IH_OK, "9223372036854775807",
		    NULL },
		{ "{\"id\":-9223372036854775808}", IH_OK,
		    "-9223372036854775808", NULL },
		{ "{\"id\":9223372036854775808}", IH_OK, NULL, NULL },
		/* 18 digits and 19, either side of the plain integer's way. */
		{ "{\"id\":-123456789012345678}", IH_OK, "-123456789012345678",
		    NULL },
		{ "{\"id\":1234567890123456789}", IH_OK, "1234567890123456789",
		    NULL },
		{ "{\"id\":-0,\"type\":-1}", IH_OK, "0", "-1" },
		{ "{\"id\":\"x\",\"n\":1.7976931348623157e308}", IH_OK, "x",
		    NULL },
		{ "{\"id\":\"x\",\"n\":1.8e308}", IH_EBODY, NULL, NULL },
		{ "{\"id\":\"x\",\"n\":-1e999}", IH_EBODY, NULL, NULL },
		{ "{\"id\":\"x\",\"n\":0.0001e-99999999999}", IH_OK, "x", NULL },
		{ "{\"id\":\"x\",\"n\":0e99999}", IH_OK, "x", NULL },
		{ "{\"id\":\"x\",\"n\":0.00017976931348623157e312}", IH_OK, "x",
		    NULL },
		{ "{\"id\":1.0}", IH_OK, NULL, NULL },
		{ "{\"id\":-}", IH_EBODY, NULL, NULL },
		{ "{\"id\":1.}", IH_EBODY, NULL, NULL },
		{ "{\"id\":+1}", IH_EBODY, NULL, NULL },
		/* yajl's options, each off. */
		{ "{\"id\":\"x\"/*c*/}", IH_EBODY, NULL, NULL },
		{ "{\"id\":\"x\"} // c", IH_EBODY, NULL, NULL },
		{ "{\"id\":\"x\"}{\"id\":\"y\"}", IH_EBODY, NULL, NULL },
		{ "{\"id\":\"x\"", IH_EBODY, NULL, NULL },
		{ "{\"id\":\"x", IH_EBODY, NULL, NULL },
		{ "{\"id\":12", IH_EBODY, NULL, NULL },
		{ "{\"id\":\"x\"}]", IH_EBODY, NULL, NULL },
		{ "{\"id\":[\"x\"]]}", IH_EBODY, NULL, NULL },
		{ "{\"id\":\"\\x41\"}", IH_EBODY, NULL, NULL },
		{ "{\"id\":\"\\u00g1\"}", IH_EBODY, NULL, NULL },
		{ "{\"id\":tru}", IH_EBODY, NULL, NULL },
		{ "{}", IH_OK, NULL, NULL },
	};
	char *vals[2];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		assert_int_equal(fields(t[i].doc, strlen(t[i].doc), vals),
		    t[i].rc);
		if (t[i].id != NULL)
			assert_string_equal(vals[0], t[i].id);
		else
			assert_null(vals[0]);
		if (t[i].type != NULL)
			assert_string_equal(vals[1], t[i].type);
		else
			assert_null(vals[1]);
		free(vals[0]);
		free(vals[1]);
	}
}

static void
nul_byte_refused(void **state)
{
	char *vals[2];

	(void)state;
	assert_int_equal(fields("{\"id\":\"a\"}\0", 11, vals), IH_EBODY);
}

static void
deep_nesting_refused(void **state)
{
	size_t depth = 100000, i;
	char *doc = malloc(2 * depth + 1);
	char *vals[2];

	(void)state;
	for (i = 0; i < depth; i++) {
		doc[i] = '[';
		doc[depth + i] = ']';
	}
	doc[2 * depth] = '\0';
	assert_int_equal(fields(doc, 2 * depth, vals), IH_EBODY);
	free(doc);
}

/* Builds {"x":[[...]]} with depth levels of nesting in all. */
static char *
nested(size_t depth)
{
	size_t inner = depth - 1, i;
	char *doc = malloc(2 * inner + 8);

	memcpy(doc, "{\"x\":", 5);
	for (i = 0; i < inner; i++) {
		doc[5 + i] = '[';
		doc[5 + inner + i] = ']';
	}
	memcpy(doc + 5 + 2 * inner, "}", 2);
	return doc;
}

static void
depth_bound(void **state)
{
	char *doc, *vals[2];

	(void)state;
	doc = nested(JSON_MAX_DEPTH);
	assert_int_equal(fields(doc, strlen(doc), vals), IH_OK);
	free(doc);
	doc = nested(JSON_MAX_DEPTH + 1);
	assert_int_equal(fields(doc, strlen(doc), vals), IH_EBODY);
	free(doc);
	/* Past jansson's own bound of 2,048, and with no closing. */
	doc = nested(3000);
	assert_int_equal(fields(doc, strlen(doc), vals), IH_EBODY);
	doc[strlen(doc) - 1500] = '\0';
	assert_int_equal(fields(doc, strlen(doc), vals), IH_EBODY);
	free(doc);
}

static int
path(const char *doc, const char *p, char **val)
{
	struct json *js;
	int rc;

	assert_int_equal(json_open(&js), IH_OK);
	rc = json_path_text(js, doc, strlen(doc), p, val);
	json_close(js);
	return rc;
}

static void
path_table(void **state)
{
	static const char stripe[] = "{\"id\":\"evt_1\",\"data\":{\"object\":"
	    "{\"id\":\"ch_1\",\"amount\":2000,\"lines\":[{\"id\":\"l0\"},"
	    "{\"id\":\"l1\"}],\"x.y\":\"dot\",\"n\":null}}}";
	static const struct {
		const char	*doc, *path;
		int		 rc;
		const char	*val;
	} t[] = {
		{ stripe, "$.data.object.id", IH_OK, "ch_1" },
		{ stripe, "$.data.object.amount", IH_OK, "2000" },
		{ stripe, "$.data.object.lines[1].id", IH_OK, "l1" },
		{ stripe, "$.data.object.lines[2].id", IH_OK, NULL },
		{ stripe, "$.data.object.lines", IH_OK, NULL },
		{ stripe, "$.data.object.n", IH_OK, NULL },
		{ stripe, "$.data.missing.id", IH_OK, NULL },
		{ stripe, "$.id", IH_OK, "evt_1" },
		{ stripe, "$.id.more", IH_OK, NULL },
		{ stripe, "$.data.object.\"x.y\"", IH_EINVAL, NULL },
		{ stripe, "$..id", IH_EINVAL, NULL },
		{ stripe, "$.data.", IH_EINVAL, NULL },
		{ stripe, "$.lines[x]", IH_EINVAL, NULL },
		{ stripe, "$.lines[-1]", IH_EINVAL, NULL },
		{ stripe, "$.lines[1", IH_EINVAL, NULL },
		{ stripe, "$", IH_EINVAL, NULL },
		{ stripe, "id", IH_EINVAL, NULL },
		{ "{\"payment\":{\"id\":\"pay_1\"}}", "$.payment.id", IH_OK,
		    "pay_1" },
		{ "{\"payment\":{\"id\":\"a\\u0000b\"}}", "$.payment.id", IH_OK,
		    NULL },
		{ "{\"payment\":{\"id\":\"1\",\"id\":\"2\"}}", "$.payment.id",
		    IH_EBODY, NULL },
		{ "{\"a\":1,{\"\":\"x\",\"payment\":{\"id\":\"72\"}}:\"b\"}",
		    "$.data.object.id", IH_EBODY, NULL },
		{ "{\"a\":1,{\"\":\"x\",\"payment\":{\"id\":\"72\"}}:\"b\"}",
		    "$.payment.id", IH_EBODY, NULL },
		{ "[{\"id\":1}]", "$.id", IH_EBODY, NULL },
		{ "not json", "$.id", IH_EBODY, NULL },
		/* The path is followed as the body streams past: members
		 * before, after and inside the one asked for. */
		{ "{\"l\":[{\"x\":[1,2,{\"id\":\"no\"}]},{\"id\":\"yes\"}]}",
		    "$.l[1].id", IH_OK, "yes" },
		{ "{\"l\":[{\"x\":[1,2,{\"id\":\"no\"}]},{\"id\":\"yes\"}]}",
		    "$.l[0].x[2].id", IH_OK, "no" },
		{ "{\"a\":[[1],[2,{\"b\":\"B\"}]]}", "$.a[1][1].b", IH_OK, "B" },
		{ "{\"a\":[[1],[2,{\"b\":\"B\"}]]}", "$.a[1][0].b", IH_OK, NULL },
		{ "{\"a\":{\"0\":{\"b\":\"B\"}}}", "$.a[0].b", IH_OK, NULL },
		{ "{\"a\":[{\"b\":\"B\"}]}", "$.a.b", IH_OK, NULL },
		{ "{\"data\":{\"x\":{\"object\":1},\"object\":{\"id\":\"ok\"}}}",
		    "$.data.object.id", IH_OK, "ok" },
		{ "{\"data\":{\"object\":{\"q\":{\"id\":\"in\"}},\"id\":\"out\"}}",
		    "$.data.object.id", IH_OK, NULL },
		{ "{\"id\":{\"id\":\"inner\"},\"x\":{\"id\":\"x\"}}", "$.id.id",
		    IH_OK, "inner" },
		{ "{\"data\":{\"\\u006fbject\":{\"id\":\"z\"}}}",
		    "$.data.object.id", IH_OK, "z" },
		{ "{\"data\":{\"object\":{\"id\":\"z\",\"\\u0069d\":\"y\"}}}",
		    "$.data.object.id", IH_EBODY, NULL },
		{ "{\"payment\":{\"id\":7}}", "$.payment.id", IH_OK, "7" },
		{ "{\"payment\":{\"id\":\"1\"},\"payment\":{}}", "$.payment.id",
		    IH_EBODY, NULL },
		{ "not json", "$..id", IH_EBODY, NULL },
		{ stripe, "$.a[99999999999999999999999]", IH_OK, NULL },
	};
	char *val;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		val = (char *)"unset";
		assert_int_equal(path(t[i].doc, t[i].path, &val), t[i].rc);
		if (t[i].val != NULL)
			assert_string_equal(val, t[i].val);
		else
			assert_null(val);
		free(val);
	}
}

static void
no_fields_validates(void **state)
{
	struct json *js;

	(void)state;
	assert_int_equal(json_open(&js), IH_OK);
	assert_int_equal(json_fields(js, "{\"a\":[1,2]}", 11, NULL, 0, NULL),
	    IH_OK);
	assert_int_equal(json_fields(js, "{\"a\":[1,2]", 10, NULL, 0, NULL),
	    IH_EBODY);
	json_close(js);
}

/*
 * Builds {"id":"x","a":{"k0":0,"k1":1,...}} with n keys in "a", the
 * last one a repeat of the first when dup.
 */
static char *
many_keys(size_t n, int dup, size_t *len)
{
	size_t size = n * 24 + 64;
	char *doc = malloc(size), *p = doc;
	size_t i;

	p += snprintf(p, size - (size_t)(p - doc), "{\"id\":\"x\",\"a\":{");
	for (i = 0; i < n; i++)
		p += snprintf(p, size - (size_t)(p - doc), "%s\"k%zu\":%zu",
		    i > 0 ? "," : "",
		    dup && i == n - 1 ? (size_t)0 : i, i);
	p += snprintf(p, size - (size_t)(p - doc), "}}");
	*len = (size_t)(p - doc);
	return doc;
}

/* A document of n keys or objects, with a repeated key when dup. */
struct doc_case {
	size_t	n;
	int	dup;
	int	rc;
};

/*
 * Runs each document build(n, dup) through one parser, as a receiver
 * does: each answers rc, and an accepted one has the id "x".
 */
static void
run_docs(char *(*build)(size_t, int, size_t *), const struct doc_case *t,
    size_t nt)
{
	struct json *js;
	char *doc, *vals[2];
	size_t i, len;

	assert_int_equal(json_open(&js), IH_OK);
	for (i = 0; i < nt; i++) {
		doc = build(t[i].n, t[i].dup, &len);
		assert_int_equal(json_fields(js, doc, len, keys, 2, vals),
		    t[i].rc);
		if (t[i].rc == IH_OK) {
			assert_string_equal(vals[0], "x");
			free(vals[0]);
		}
		free(doc);
	}
	json_close(js);
}

/* Large key sets do not stay with the parser: small documents still work
 * after them. */
static void
many_keys_checked(void **state)
{
	static const struct doc_case t[] = {
		{ 200000, 0, IH_OK },
		{ 200000, 1, IH_EBODY },
		{ 3, 1, IH_EBODY },
		{ 3, 0, IH_OK },
	};

	(void)state;
	run_docs(many_keys, t, sizeof(t) / sizeof(t[0]));
}

/* {"l":[{"a":1,"b":2},...],"id":"x"} with n objects, the last one
 * {"a":1,"a":2} when dup. */
static char *
many_objects_doc(size_t n, int dup, size_t *len)
{
	size_t size = n * 24 + 64;
	char *doc = malloc(size), *p = doc;
	size_t i;

	p += snprintf(p, size - (size_t)(p - doc), "{\"l\":[");
	for (i = 0; i < n; i++)
		p += snprintf(p, size - (size_t)(p - doc),
		    "%s{\"a\":1,\"%s\":2}", i > 0 ? "," : "",
		    dup && i == n - 1 ? "a" : "b");
	p += snprintf(p, size - (size_t)(p - doc), "],\"id\":\"x\"}");
	*len = (size_t)(p - doc);
	return doc;
}

/* A million small objects, each closed before the next: their keys are
 * not kept once each closes, and a repeat inside the last is found. */
static void
many_objects(void **state)
{
	static const struct doc_case t[] = {
		{ 1000000, 0, IH_OK },
		{ 1000000, 1, IH_EBODY },
	};

	(void)state;
	run_docs(many_objects_doc, t, sizeof(t) / sizeof(t[0]));
}

/* Builds {"id":"x","n":<pre><n copies of c><post>}. */
static char *
number_doc(const char *pre, size_t n, char c, const char *post)
{
	size_t size = n + 64;
	char *doc = malloc(size);
	int k;

	k = snprintf(doc, size, "{\"id\":\"x\",\"n\":%s", pre);
	memset(doc + k, c, n);
	snprintf(doc + k + n, size - (size_t)k - n, "%s}", post);
	return doc;
}

/* Numbers longer than any buffer: judged by value, as strtod() would. */
static void
long_numbers(void **state)
{
	static const struct {
		const char	*pre;
		size_t		 n;
		char		 c;
		const char	*post;
		int		 rc;
	} t[] = {
		{ "", 308, '9', "", IH_OK },
		{ "", 309, '9', "", IH_EBODY },
		{ "-", 309, '9', "", IH_EBODY },
		{ "1", 5000, '1', "e-99999999999", IH_OK },
		{ "1", 5000, '1', "e-4700", IH_OK },
		{ "1", 5000, '1', "e-4600", IH_EBODY },
		{ "0.", 5000, '0', "1e5300", IH_OK },
		{ "0.", 5000, '0', "1e5310", IH_EBODY },
		{ "1.", 5000, '0', "", IH_OK },
		{ "0.", 5000, '0', "", IH_OK },
		{ "0e", 5000, '9', "", IH_OK },
		{ "1e", 5000, '0', "", IH_OK },
		{ "1e", 5000, '0', "400", IH_EBODY },
	};
	char *doc, *vals[2];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		doc = number_doc(t[i].pre, t[i].n, t[i].c, t[i].post);
		assert_int_equal(fields(doc, strlen(doc), vals), t[i].rc);
		if (t[i].rc == IH_OK) {
			assert_string_equal(vals[0], "x");
			assert_null(vals[1]);
			free(vals[0]);
		}
		free(doc);
	}
}

static void
long_value_dropped(void **state)
{
	size_t n = JSON_VALUE_MAX + 1, i;
	char *doc = malloc(n + 16);
	char *vals[2];

	(void)state;
	memcpy(doc, "{\"id\":\"", 7);
	for (i = 0; i < n; i++)
		doc[7 + i] = 'a';
	memcpy(doc + 7 + n, "\"}", 3);
	assert_int_equal(fields(doc, strlen(doc), vals), IH_OK);
	assert_null(vals[0]);
	free(doc);
}

/* JSON_WANT_BOOL: a boolean's text; anything else is absent. */
/*
 * json_utf8_ok() passes ASCII eight bytes at a time: a NUL, a stray
 * continuation byte, a truncated or a valid sequence at every offset of
 * a long ASCII run is judged as the byte-by-byte decoder judges it.
 */
static void
utf8_every_offset(void **state)
{
	static const struct {
		const char	*bytes;
		size_t		 len;
		int		 ok;
	} ins[] = {
		{ "\0", 1, 0 },
		{ "\x80", 1, 0 },
		{ "\xc3", 1, 0 },
		{ "\xc3\xa9", 2, 1 },
		{ "\xed\xa0\x80", 3, 0 },
		{ "\xf0\x9f\x98\x80", 4, 1 },
		{ "\x7f", 1, 1 },
	};
	char buf[40];
	size_t i, at, len;

	(void)state;
	for (i = 0; i < sizeof(ins) / sizeof(ins[0]); i++)
		for (at = 0; at + ins[i].len <= sizeof(buf); at++) {
			memset(buf, 'a', sizeof(buf));
			memcpy(buf + at, ins[i].bytes, ins[i].len);
			/* Also where the sequence is cut by the end. */
			for (len = at + 1; len <= sizeof(buf); len++)
				assert_int_equal(json_utf8_ok(buf, len),
				    len >= at + ins[i].len ? ins[i].ok : 0);
		}
}

static void
want_bool(void **state)
{
	static const char doc[] = "{\"has_more\":true,\"x\":false,"
	    "\"s\":\"true\",\"o\":{\"b\":false},\"d\":[{\"id\":\"e1\"}]}";
	struct json_want w[5];
	struct json *js;
	size_t i;

	(void)state;
	memset(w, 0, sizeof(w));
	w[0].path = "$.has_more";
	w[1].path = "$.x";
	w[2].path = "$.s";
	w[3].path = "$.o";
	w[4].path = "$.d[0]";
	for (i = 0; i < 4; i++)
		w[i].raw = JSON_WANT_BOOL;
	w[4].raw = JSON_WANT_RAW;
	assert_int_equal(json_open(&js), IH_OK);
	assert_int_equal(json_extract(js, doc, strlen(doc), w, 5, 1024),
	    IH_OK);
	json_close(js);
	assert_string_equal(w[0].val, "true");
	assert_string_equal(w[1].val, "false");
	assert_null(w[2].val);
	assert_null(w[3].val);
	assert_string_equal(w[4].val, "{\"id\":\"e1\"}");
	for (i = 0; i < 5; i++)
		free(w[i].val);
}

/*
 * json_items(): a page of n items in one pass over the document (issue
 * 37 item 6: catch-up read 8 items per pass, so a page of 40,000 items
 * took 5,000 passes); each element's exact text, in order; the boolean
 * asked for alongside; scalar elements and nested arrays not counted.
 */
#define ITEMS_N	5000
static void
items_one_pass(void **state)
{
	struct json_span *spans;
	struct json_want w[1];
	struct json *js;
	char *doc, want[64];
	size_t cap = ITEMS_N * 48 + 256, len = 0, n, i;
	unsigned long before;

	(void)state;
	doc = malloc(cap);
	spans = calloc(ITEMS_N + 1, sizeof(*spans));
	assert_non_null(doc);
	assert_non_null(spans);
	len += (size_t)snprintf(doc + len, cap - len, "{\"data\":[1,");
	for (i = 0; i < ITEMS_N; i++)
		len += (size_t)snprintf(doc + len, cap - len,
		    "%s{\"id\":\"ev_%zu\",\"a\":[[%zu]]}", i ? "," : "", i,
		    i);
	len += (size_t)snprintf(doc + len, cap - len,
	    ",\"x\"],\"has_more\":true}");
	assert_int_equal(json_open(&js), IH_OK);
	memset(w, 0, sizeof(w));
	w[0].path = "$.has_more";
	w[0].raw = JSON_WANT_BOOL;
	before = js->parses;
	assert_int_equal(json_items(js, doc, len, "$.data", spans, ITEMS_N,
	    &n, w, 1, 0), IH_OK);
	assert_int_equal(js->parses - before, 1);
	assert_int_equal(n, ITEMS_N);
	assert_string_equal(w[0].val, "true");
	free(w[0].val);
	for (i = 0; i < n; i += 999) {
		snprintf(want, sizeof(want), "{\"id\":\"ev_%zu\",\"a\":[[%zu]]}",
		    i, i);
		assert_int_equal(spans[i].len, strlen(want));
		assert_memory_equal(doc + spans[i].off, want, spans[i].len);
	}
	/* One item more than the cap: refused, nothing handed back. */
	assert_int_equal(json_items(js, doc, len, "$.data", spans,
	    ITEMS_N - 1, &n, w, 1, 0), IH_ETOOBIG);
	assert_int_equal(n, 0);
	assert_null(w[0].val);
	/* No array there, or a bad document: no items. */
	assert_int_equal(json_items(js, doc, len, "$.has_more", spans,
	    ITEMS_N, &n, NULL, 0, 0), IH_OK);
	assert_int_equal(n, 0);
	assert_int_equal(json_items(js, doc, len - 1, "$.data", spans,
	    ITEMS_N, &n, NULL, 0, 0), IH_EBODY);
	assert_int_equal(n, 0);
	json_close(js);
	free(spans);
	free(doc);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(table),
		cmocka_unit_test(nul_byte_refused),
		cmocka_unit_test(deep_nesting_refused),
		cmocka_unit_test(long_value_dropped),
		cmocka_unit_test(depth_bound),
		cmocka_unit_test(path_table),
		cmocka_unit_test(no_fields_validates),
		cmocka_unit_test(many_keys_checked),
		cmocka_unit_test(many_objects),
		cmocka_unit_test(long_numbers),
		cmocka_unit_test(want_bool),
		cmocka_unit_test(utf8_every_offset),
		cmocka_unit_test(items_one_pass),
	};

	return cmocka_run_group_tests_name("json", tests, NULL, NULL);
}
