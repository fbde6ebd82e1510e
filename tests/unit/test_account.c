/* test_account.c -- account names, the URL's account, an account's settings. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "account.h"
#include "config.h"
#include "config_vars.h"
#include "ih.h"

static void
names(void **state)
{
	(void)state;
	assert_true(account_name_ok("acme"));
	assert_true(account_name_ok("a-b_c9"));
	assert_true(account_name_ok("0123456789abcdef0123456789abcdef"));
	assert_false(account_name_ok("0123456789abcdef0123456789abcdefg"));
	assert_false(account_name_ok(""));
	assert_false(account_name_ok(NULL));
	assert_false(account_name_ok("Acme"));
	assert_false(account_name_ok("a.b"));
	assert_false(account_name_ok("a/b"));
	assert_false(account_name_ok("a b"));
	assert_string_equal(account_or_default(NULL), "default");
	assert_string_equal(account_or_default(""), "default");
	assert_string_equal(account_or_default("x"), "x");
}

static void
from_path(void **state)
{
	char a[ACCOUNT_NAME_MAX + 1];

	(void)state;
	assert_int_equal(account_from_path(NULL, a, sizeof(a)), IH_OK);
	assert_string_equal(a, "default");
	assert_int_equal(account_from_path("", a, sizeof(a)), IH_OK);
	assert_string_equal(a, "default");
	assert_int_equal(account_from_path("/", a, sizeof(a)), IH_OK);
	assert_string_equal(a, "default");
	assert_int_equal(account_from_path("/acme", a, sizeof(a)), IH_OK);
	assert_string_equal(a, "acme");
	assert_int_equal(account_from_path("/acme/", a, sizeof(a)), IH_OK);
	assert_string_equal(a, "acme");
	assert_int_equal(account_from_path("/acme/x", a, sizeof(a)),
	    IH_EINVAL);
	assert_int_equal(account_from_path("acme", a, sizeof(a)), IH_EINVAL);
	assert_int_equal(account_from_path("//", a, sizeof(a)), IH_EINVAL);
	assert_int_equal(account_from_path("/../x", a, sizeof(a)), IH_EINVAL);
	assert_int_equal(account_from_path("/ACME", a, sizeof(a)), IH_EINVAL);
	assert_int_equal(account_from_path(
	    "/0123456789abcdef0123456789abcdefg", a, sizeof(a)), IH_EINVAL);
}

static void
secret_names(void **state)
{
	const char *v = "IDEMHOOK_STRIPE_SECRET";

	(void)state;
	assert_true(config_is_secret_of("IDEMHOOK_STRIPE_SECRET", v));
	assert_true(config_is_secret_of("IDEMHOOK_STRIPE_SECRET_4", v));
	assert_true(config_is_secret_of("IDEMHOOK_STRIPE_SECRET@acme", v));
	assert_true(config_is_secret_of("IDEMHOOK_STRIPE_SECRET_2@acme", v));
	assert_false(config_is_secret_of("IDEMHOOK_STRIPE_SECRET_5@acme", v));
	assert_false(config_is_secret_of("IDEMHOOK_STRIPE_SECRET@Acme", v));
	assert_false(config_is_secret_of("IDEMHOOK_STRIPE_SECRET@", v));
	assert_false(config_is_secret_of("IDEMHOOK_STRIPE_SECRETS@a", v));
	assert_false(config_is_secret_of("IDEMHOOK_GITHUB_SECRET@acme", v));
}

/* An account's settings: its own first, secrets never from elsewhere. */
static void
source(void **state)
{
	char *env[] = { "IDEMHOOK_STRIPE_SECRET=whsec_default",
	    "IDEMHOOK_STRIPE_SECRET@acme=whsec_acme",
	    "IDEMHOOK_STRIPE_TOLERANCE=100",
	    "IDEMHOOK_STRIPE_TOLERANCE@acme=600",
	    "IDEMHOOK_STRIPE_MAX_BODY=5000",
	    "IDEMHOOK_STRIPE_ACTION@acme=* true",
	    "IDEMHOOK_DB@acme=/tmp/elsewhere.db",
	    "IDEMHOOK_DB=/tmp/ih-account-test.db", NULL };
	struct config_vars v;
	struct config_source inner, one;
	struct account_src as;
	struct config cfg;
	char err[256];

	(void)state;
	assert_int_equal(config_vars_from_env(&v, env), IH_OK);
	inner.get = config_vars_get;
	inner.arg = &v;
	account_source(&as, &one, &inner, 1, "stripe",
	    "IDEMHOOK_STRIPE_SECRET", "acme");
	assert_int_equal(config_load(&cfg, "stripe", "IDEMHOOK_STRIPE_SECRET",
	    &one, 1, err, sizeof(err)), IH_OK);
	assert_int_equal(cfg.nsecrets, 1);
	assert_string_equal(cfg.secrets[0], "whsec_acme");
	assert_int_equal(cfg.tolerance_s, 600);
	assert_int_equal(cfg.max_body, 5000);
	/* Actions are the provider's: no account suffix. */
	assert_int_equal(cfg.nactions, 0);
	assert_string_equal(cfg.db_path, "/tmp/ih-account-test.db");
	config_free(&cfg);
	/* An account without a secret of its own has none. */
	account_source(&as, &one, &inner, 1, "stripe",
	    "IDEMHOOK_STRIPE_SECRET", "bravo");
	assert_int_equal(config_load(&cfg, "stripe", "IDEMHOOK_STRIPE_SECRET",
	    &one, 1, err, sizeof(err)), IH_OK);
	assert_int_equal(cfg.nsecrets, 0);
	assert_int_equal(cfg.tolerance_s, 100);
	config_free(&cfg);
	/* The default account reads the plain names only. */
	account_source(&as, &one, &inner, 1, "stripe",
	    "IDEMHOOK_STRIPE_SECRET", NULL);
	assert_int_equal(config_load(&cfg, "stripe", "IDEMHOOK_STRIPE_SECRET",
	    &one, 1, err, sizeof(err)), IH_OK);
	assert_int_equal(cfg.nsecrets, 1);
	assert_string_equal(cfg.secrets[0], "whsec_default");
	assert_int_equal(cfg.tolerance_s, 100);
	config_free(&cfg);
	config_vars_free(&v);
}

static void
route(void **state)
{
	char *env[] = { "IDEMHOOK_GITHUB_ROUTE_123=app-one",
	    "IDEMHOOK_SHOPIFY_ROUTE_acme.myshopify.com=shop-a",
	    "IDEMHOOK_GITHUB_ROUTE_9=Not_A_Name", NULL };
	struct config_vars v;
	struct config_source src;
	char a[ACCOUNT_NAME_MAX + 1];

	(void)state;
	assert_int_equal(config_vars_from_env(&v, env), IH_OK);
	src.get = config_vars_get;
	src.arg = &v;
	assert_string_equal(account_route_header("github"),
	    "X-GitHub-Hook-Installation-Target-ID");
	assert_null(account_route_header("stripe"));
	assert_int_equal(account_route("github", "123", &src, 1, a,
	    sizeof(a)), IH_OK);
	assert_string_equal(a, "app-one");
	assert_int_equal(account_route("shopify", "acme.myshopify.com", &src,
	    1, a, sizeof(a)), IH_OK);
	assert_string_equal(a, "shop-a");
	assert_int_equal(account_route("github", "124", &src, 1, a,
	    sizeof(a)), IH_ENOTFOUND);
	assert_int_equal(account_route("github", "12 3", &src, 1, a,
	    sizeof(a)), IH_ENOTFOUND);
	assert_int_equal(account_route("github", "9", &src, 1, a,
	    sizeof(a)), IH_ECONFIG);
	config_vars_free(&v);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(names),
		cmocka_unit_test(from_path),
		cmocka_unit_test(secret_names),
		cmocka_unit_test(source),
		cmocka_unit_test(route),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
