/* test_redact.c -- ih_redact_uri(): store locations without passwords. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "ih.h"
#include "redact.h"

struct rcase {
	const char	*in;
	const char	*want;
};

static const struct rcase cases[] = {
	/* Plain paths come out unchanged. */
	{ "/var/lib/idemhook/idemhook.db", "/var/lib/idemhook/idemhook.db" },
	{ "/srv/a:b/c@d.db", "/srv/a:b/c@d.db" },
	{ "", "" },
	/* The password of a URI's user information. */
	{ "postgresql://u:secretpw@h/db", "postgresql://u:***@h/db" },
	{ "postgres://u:secretpw@h:5432/db?sslmode=require",
	    "postgres://u:***@h:5432/db?sslmode=require" },
	{ "postgresql://u@h/db", "postgresql://u@h/db" },
	{ "postgresql://h/db", "postgresql://h/db" },
	{ "postgresql:///db?host=/run/pg&port=5433",
	    "postgresql:///db?host=/run/pg&port=5433" },
	/* An unencoded '@' or '/' in the password is hidden with it. */
	{ "postgresql://u:se@cr/et@h/db", "postgresql://u:***@h/db" },
	{ "postgresql://u:@h/db", "postgresql://u:***@h/db" },
	/* Password parameters in a query, whatever the case. */
	{ "postgresql://h/db?user=u&password=secretpw&sslmode=require",
	    "postgresql://h/db?user=u&password=***&sslmode=require" },
	{ "postgresql://h/db?PASSWORD=secretpw",
	    "postgresql://h/db?PASSWORD=***" },
	{ "postgresql://h/db?sslpassword=secretpw#x",
	    "postgresql://h/db?sslpassword=***#x" },
	{ "postgresql://u:secretpw@h/db?password=secretpw",
	    "postgresql://u:***@h/db?password=***" },
	/* A percent-encoded name, as libpq decodes it, in any case. */
	{ "postgresql://h/db?%70assword=secretpw&x=1",
	    "postgresql://h/db?%70assword=***&x=1" },
	{ "postgresql://h/db?%70%41%53%53%57%4f%52%44=secretpw",
	    "postgresql://h/db?%70%41%53%53%57%4f%52%44=***" },
	{ "postgresql://h/db?ssl%50assword=secretpw",
	    "postgresql://h/db?ssl%50assword=***" },
	{ "postgresql://h/db?pass%zzword=1", "postgresql://h/db?pass%zzword=1" },
	/* Keyword/value strings, quoted or not. */
	{ "host=h password=secretpw dbname=d",
	    "host=h password=*** dbname=d" },
	{ "password = 'secret pw \\' still' dbname=d",
	    "password = *** dbname=d" },
	{ "host=h password='secretpw'", "host=h password=***" },
	/* Not a password parameter: kept. */
	{ "postgresql://h/db?passwordless=1",
	    "postgresql://h/db?passwordless=1" },
	{ "postgresql://h/db?mypassword_hint=x",
	    "postgresql://h/db?mypassword_hint=x" },
	/* Without a scheme, user:password@host is still read as such. */
	{ "u:secretpw@h/db", "u:***@h/db" },
	{ NULL, "-" },
};

static void
table(void **state)
{
	char out[REDACT_URI_MAX];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(ih_redact_uri(cases[i].in, out, sizeof(out)),
		    IH_OK);
		if (strcmp(out, cases[i].want) != 0)
			fail_msg("case %zu: %s -> %s, want %s", i,
			    cases[i].in ? cases[i].in : "(null)", out,
			    cases[i].want);
		assert_null(strstr(out, "secret"));
	}
}

static void
quoted_value_fully_hidden(void **state)
{
	char out[REDACT_URI_MAX];

	(void)state;
	assert_int_equal(ih_redact_uri("password='a b\\' c' x=1", out,
	    sizeof(out)), IH_OK);
	assert_string_equal(out, "password=*** x=1");
}

static void
truncation_never_leaks(void **state)
{
	char out[24], big[300];
	size_t i;

	(void)state;
	memset(big, 0, sizeof(big));
	memcpy(big, "postgresql://", 13);
	for (i = 13; i < 200; i++)
		big[i] = 'u';
	memcpy(big + 200, ":secretpw@h/db", 14);
	assert_int_equal(ih_redact_uri(big, out, sizeof(out)), IH_ETOOBIG);
	assert_int_equal(strlen(out), sizeof(out) - 1);
	assert_string_equal(out + sizeof(out) - 4, "...");
	assert_null(strstr(out, "secret"));
	/* A tiny buffer is refused, and ih_redact() then gives "". */
	assert_int_equal(ih_redact_uri("/x", out, 4), IH_EINVAL);
	assert_string_equal(ih_redact("/x", out, 4), "");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(table),
		cmocka_unit_test(quoted_value_fully_hidden),
		cmocka_unit_test(truncation_never_leaks),
	};

	return cmocka_run_group_tests_name("redact", tests, NULL, NULL);
}
