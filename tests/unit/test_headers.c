/*
 * test_headers.c -- the kept headers: written from a request by
 * headers_keep(), read back line by line by headers_next(), and named as
 * CGI variables by headers_cgi_name(), so that what the receivers store
 * is what the command re-verifies.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "headers.h"
#include "ih.h"
#include "request.h"

static const char *
param(void *arg, const char *name)
{
	(void)arg;
	if (strcmp(name, "HTTP_STRIPE_SIGNATURE") == 0)
		return "t=1,v1=ab";
	if (strcmp(name, "HTTP_X_ID") == 0)
		return "42";
	if (strcmp(name, "REQUEST_METHOD") == 0)
		return "POST";
	return NULL;
}

static size_t
no_body(void *arg, void *buf, size_t len)
{
	(void)arg;
	(void)buf;
	(void)len;
	return 0;
}

static void
test_round_trip(void **state)
{
	static const char *const names[] = { "Stripe-Signature", "X-Absent",
	    "X-Id", NULL };
	struct request_io io = { param, no_body, NULL };
	struct request r;
	struct headers_field f;
	char buf[256], var[HEADERS_CGI_NAME_MAX];
	const char *pos = buf;

	(void)state;
	memset(&r, 0, sizeof(r));
	request_begin(&r, &io);
	assert_int_equal(headers_keep(&r, names, buf, sizeof(buf)), IH_OK);
	assert_string_equal(buf, "Stripe-Signature: t=1,v1=ab\nX-Id: 42\n");
	assert_int_equal(headers_next(&pos, &f), 1);
	assert_int_equal(f.valued, 1);
	assert_int_equal(f.name_len, 16);
	assert_memory_equal(f.value, "t=1,v1=ab", f.value_len);
	assert_int_equal(headers_cgi_name(f.name, f.name_len, var,
	    sizeof(var)), IH_OK);
	assert_string_equal(var, "HTTP_STRIPE_SIGNATURE");
	assert_int_equal(headers_next(&pos, &f), 1);
	assert_memory_equal(f.name, "X-Id", f.name_len);
	assert_int_equal(headers_next(&pos, &f), 0);
	/* Too small a buffer is refused, never cut. */
	assert_int_equal(headers_keep(&r, names, buf, 10), IH_ETOOBIG);
	request_free(&r);
}

static void
test_odd_lines(void **state)
{
	const char *pos = "\n\nNoColon\nName: \n";
	struct headers_field f;
	char line[64], var[8];

	(void)state;
	assert_int_equal(headers_next(&pos, &f), 1);
	assert_int_equal(f.valued, 0);
	assert_int_equal(f.name_len, 7);
	assert_int_equal(headers_next(&pos, &f), 1);
	assert_int_equal(f.valued, 1);
	assert_int_equal(f.value_len, 0);
	assert_int_equal(headers_next(&pos, &f), 0);
	assert_int_equal(headers_line("Event-Id", "e1", line, sizeof(line)),
	    IH_OK);
	assert_string_equal(line, "\nEvent-Id: e1\n");
	assert_int_equal(headers_cgi_name("Long-Name", 9, var, sizeof(var)),
	    IH_EINVAL);
	assert_int_equal(headers_cgi_name("", 0, line, sizeof(line)),
	    IH_EINVAL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_odd_lines),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
