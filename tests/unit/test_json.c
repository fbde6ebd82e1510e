/* test_json.c -- field extraction from hostile bodies. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ih.h"
#include "json.h"

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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(table),
		cmocka_unit_test(nul_byte_refused),
		cmocka_unit_test(deep_nesting_refused),
		cmocka_unit_test(long_value_dropped),
	};

	return cmocka_run_group_tests_name("json", tests, NULL, NULL);
}
