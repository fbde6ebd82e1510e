/* test_form.c -- form.c: one field of a URL-encoded body, table-driven. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "form.h"
#include "ih.h"

struct ftest {
	const char	*body;
	const char	*name;
	size_t		 max;
	int		 rc;
	const char	*want;	/* decoded value when rc is IH_OK */
	size_t		 wantlen;
};

static const struct ftest ftests[] = {
	/* GitHub's shape: the JSON in "payload". */
	{ "payload=%7B%22action%22%3A%22opened%22%7D", "payload", 1024,
	    IH_OK, "{\"action\":\"opened\"}", 19 },
	{ "payload=a+b%20c", "payload", 1024, IH_OK, "a b c", 5 },
	{ "x=1&payload=v&y=2", "payload", 1024, IH_OK, "v", 1 },
	{ "payload=", "payload", 1024, IH_OK, "", 0 },
	{ "payload", "payload", 1024, IH_OK, "", 0 },
	{ "payload=a=b", "payload", 1024, IH_OK, "a=b", 3 },
	{ "payload=%2b%2B", "payload", 1024, IH_OK, "++", 2 },
	{ "payload=%00x", "payload", 1024, IH_OK, "\0x", 2 },
	{ "&&payload=v&", "payload", 1024, IH_OK, "v", 1 },
	/* The name is matched after decoding. */
	{ "p%61yload=v", "payload", 1024, IH_OK, "v", 1 },
	/* Exactly at the limit, then one past it. */
	{ "payload=abcd", "payload", 4, IH_OK, "abcd", 4 },
	{ "payload=abcde", "payload", 4, IH_ETOOBIG, NULL, 0 },
	{ "payload=%41%41%41%41", "payload", 4, IH_OK, "AAAA", 4 },
	/* Absent. */
	{ "", "payload", 1024, IH_ENOTFOUND, NULL, 0 },
	{ "payloadx=1&xpayload=2", "payload", 1024, IH_ENOTFOUND, NULL, 0 },
	{ "PAYLOAD=1", "payload", 1024, IH_ENOTFOUND, NULL, 0 },
	/* Malformed escapes, in the field or anywhere else. */
	{ "payload=%", "payload", 1024, IH_EINVAL, NULL, 0 },
	{ "payload=%4", "payload", 1024, IH_EINVAL, NULL, 0 },
	{ "payload=%4g", "payload", 1024, IH_EINVAL, NULL, 0 },
	{ "payload=%g4", "payload", 1024, IH_EINVAL, NULL, 0 },
	{ "payload=ok&x=%zz", "payload", 1024, IH_EINVAL, NULL, 0 },
	{ "%=1&payload=ok", "payload", 1024, IH_EINVAL, NULL, 0 },
	/* Twice, even when spelled differently. */
	{ "payload=a&payload=b", "payload", 1024, IH_EINVAL, NULL, 0 },
	{ "payload=a&p%61yload=b", "payload", 1024, IH_EINVAL, NULL, 0 },
	/* Bad names. */
	{ "=1", "", 1024, IH_EINVAL, NULL, 0 },
};

static void
test_form_table(void **state)
{
	char *val;
	size_t i, len;
	int rc;

	(void)state;
	for (i = 0; i < sizeof(ftests) / sizeof(ftests[0]); i++) {
		const struct ftest *t = &ftests[i];

		print_message("form case %zu: %s\n", i, t->body);
		rc = form_field(t->body, strlen(t->body), t->name, t->max,
		    &val, &len);
		assert_int_equal(rc, t->rc);
		if (rc != IH_OK) {
			assert_null(val);
			assert_int_equal(len, 0);
			continue;
		}
		assert_non_null(val);
		assert_int_equal(len, t->wantlen);
		assert_memory_equal(val, t->want, len);
		assert_int_equal(val[len], '\0');
		free(val);
	}
}

static void
test_form_long_name(void **state)
{
	char name[FORM_NAME_MAX + 2], *val;
	size_t len;

	(void)state;
	memset(name, 'a', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	assert_int_equal(form_field("a=1", 3, name, 10, &val, &len),
	    IH_EINVAL);
	assert_null(val);
}

static void
test_form_decode_cap(void **state)
{
	char out[4];
	size_t len;

	(void)state;
	assert_int_equal(form_decode("abcd", 4, out, 4, &len), IH_OK);
	assert_int_equal(len, 4);
	assert_int_equal(form_decode("abcde", 5, out, 4, &len), IH_ETOOBIG);
	assert_int_equal(form_decode("%41%42", 6, NULL, 0, &len), IH_OK);
	assert_int_equal(len, 2);
	assert_int_equal(form_decode("%4", 2, NULL, 0, &len), IH_EINVAL);
}

/* The body need not be NUL-terminated: only len bytes are read. */
static void
test_form_not_terminated(void **state)
{
	char body[] = { 'p', 'a', 'y', 'l', 'o', 'a', 'd', '=', 'x', '%' };
	char *val;
	size_t len;

	(void)state;
	assert_int_equal(form_field(body, 9, "payload", 10, &val, &len),
	    IH_OK);
	assert_int_equal(len, 1);
	assert_int_equal(val[0], 'x');
	free(val);
	assert_int_equal(form_field(body, 10, "payload", 10, &val, &len),
	    IH_EINVAL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_form_table),
		cmocka_unit_test(test_form_long_name),
		cmocka_unit_test(test_form_decode_cap),
		cmocka_unit_test(test_form_not_terminated),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
