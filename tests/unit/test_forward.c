/* test_forward.c -- forwarding: each scheme's signature, the headers
 * passed on, and the settings refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config.h"
#include "config_vars.h"
#include "forward.h"
#include "forward_sign.h"
#include "ih.h"
#include "store_dest.h"

#define BODY	"{\"id\":\"evt_1\",\"object\":\"event\"}"

static void
sign_in(struct forward_sign_in *in, const char *provider, int mode,
    const char *secret, const char *kept)
{
	memset(in, 0, sizeof(*in));
	in->provider = provider;
	in->mode = mode;
	in->secret = secret;
	in->secret_len = secret != NULL ? strlen(secret) : 0;
	in->event_id = "evt_1";
	in->body = (const unsigned char *)BODY;
	in->body_len = strlen(BODY);
	in->kept = kept;
	in->now = 1700000000;
	in->key = "k1";
}

static void
stripe_fresh_timestamp(void **state)
{
	struct forward_sign_in in;
	char out[FORWARD_SIGN_MAX];

	(void)state;
	sign_in(&in, "stripe", FORWARD_SIGN_PROVIDER, "whsec_app",
	    "Stripe-Signature: t=1,v1=00\n");
	assert_int_equal(forward_sign_headers(&in, out, sizeof(out)), IH_OK);
	assert_string_equal(out, "Content-Type: application/json\n"
	    "Idempotency-Key: k1\n"
	    "Stripe-Signature: t=1700000000,v1=9786f3f2a67e71cf460ec607e89ed0"
	    "007a251239f3f9dcbe39231f8845623000\n");
}

static void
github_keeps_identifying_headers(void **state)
{
	struct forward_sign_in in;
	char out[FORWARD_SIGN_MAX];

	(void)state;
	sign_in(&in, "github", FORWARD_SIGN_PROVIDER, "gh",
	    "X-Hub-Signature-256: sha256=00\nX-GitHub-Event: push\n"
	    "X-GitHub-Delivery: d-1\n");
	assert_int_equal(forward_sign_headers(&in, out, sizeof(out)), IH_OK);
	assert_non_null(strstr(out, "X-GitHub-Event: push\n"));
	assert_non_null(strstr(out, "X-GitHub-Delivery: d-1\n"));
	assert_null(strstr(out, "sha256=00"));
	assert_non_null(strstr(out, "X-Hub-Signature-256: sha256=74ccb6b494d9"
	    "5e42a3e3a9674951019c792eb7d5ea5003736254ce5441ff9a2a\n"));
}

static void
shopify_and_asaas(void **state)
{
	struct forward_sign_in in;
	char out[FORWARD_SIGN_MAX];

	(void)state;
	sign_in(&in, "shopify", FORWARD_SIGN_PROVIDER, "sh",
	    "X-Shopify-Hmac-Sha256: AAAA\nX-Shopify-Topic: orders/create\n");
	assert_int_equal(forward_sign_headers(&in, out, sizeof(out)), IH_OK);
	assert_non_null(strstr(out, "X-Shopify-Topic: orders/create\n"));
	assert_non_null(strstr(out, "X-Shopify-Hmac-Sha256: "
	    "+fsV3WzJQcQMuo3JDlFOPFLkpDMZcZjjgjBtZk3/p7o=\n"));
	assert_null(strstr(out, "AAAA"));
	sign_in(&in, "asaas", FORWARD_SIGN_PROVIDER, "tok-1", NULL);
	assert_int_equal(forward_sign_headers(&in, out, sizeof(out)), IH_OK);
	assert_non_null(strstr(out, "asaas-access-token: tok-1\n"));
}

/* The Standard Webhooks specification's own example. */
static void
standard_vector(void **state)
{
	struct forward_sign_in in;
	char out[FORWARD_SIGN_MAX];

	(void)state;
	sign_in(&in, "github", FORWARD_SIGN_STANDARD,
	    "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "X-GitHub-Event: push\n");
	in.event_id = "msg_p5jXN8AQM9LWM0D4loKWxJek";
	in.body = (const unsigned char *)"{\"test\": 2432232314}";
	in.body_len = strlen((const char *)in.body);
	in.now = 1614265330;
	assert_int_equal(forward_sign_headers(&in, out, sizeof(out)), IH_OK);
	assert_non_null(strstr(out, "webhook-id: msg_p5jXN8AQM9LWM0D4loKWxJek\n"
	    "webhook-timestamp: 1614265330\nwebhook-signature: v1,g0hM9SsE+OTP"
	    "JTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=\n"));
	assert_non_null(strstr(out, "X-GitHub-Event: push\n"));
	in.secret = "not-whsec";
	in.secret_len = strlen(in.secret);
	assert_int_equal(forward_sign_headers(&in, out, sizeof(out)),
	    IH_EINVAL);
}

static void
as_received_untouched(void **state)
{
	struct forward_sign_in in;
	char out[FORWARD_SIGN_MAX];

	(void)state;
	sign_in(&in, "stripe", FORWARD_SIGN_AS_RECEIVED, NULL,
	    "Stripe-Signature: t=1,v1=00\n");
	assert_int_equal(forward_sign_headers(&in, out, sizeof(out)), IH_OK);
	assert_string_equal(out, "Content-Type: application/json\n"
	    "Idempotency-Key: k1\nStripe-Signature: t=1,v1=00\n");
	/* A stored line with a control character is not sent. */
	sign_in(&in, "stripe", FORWARD_SIGN_AS_RECEIVED, NULL,
	    "X-A: b\rc\n");
	assert_int_equal(forward_sign_headers(&in, out, sizeof(out)),
	    IH_EINVAL);
	sign_in(&in, "stripe", FORWARD_SIGN_PROVIDER, "s", NULL);
	assert_int_equal(forward_sign_headers(&in, out, 40), IH_ETOOBIG);
}

static int
load(char **env, const char *provider, struct config *cfg, char *err,
    size_t errlen)
{
	struct config_vars ev;
	struct config_source src;
	int rc;

	assert_int_equal(config_vars_from_env(&ev, env), IH_OK);
	src.get = config_vars_get;
	src.arg = &ev;
	err[0] = '\0';
	rc = config_load(cfg, provider, NULL, &src, 1, err, errlen);
	config_vars_free(&ev);
	return rc;
}

static void
settings_taken(void **state)
{
	char *env[] = {
		"IDEMHOOK_STRIPE_FORWARD_URL=https://app.example/hooks/stripe",
		"IDEMHOOK_STRIPE_FORWARD_SECRET=whsec_app",
		"IDEMHOOK_STRIPE_FORWARD_TIMEOUT=12", NULL };
	char *none[] = { "PATH=/bin", NULL };
	struct config cfg;
	char err[256];

	(void)state;
	assert_int_equal(load(env, "stripe", &cfg, err, sizeof(err)), IH_OK);
	assert_string_equal(cfg.forward.dest.url,
	    "https://app.example/hooks/stripe");
	assert_int_equal(cfg.forward.dest.sign, FORWARD_SIGN_PROVIDER);
	assert_int_equal(cfg.forward.dest.timeout_s, 12);
	assert_int_equal(cfg.forward.dest.secret_len, 9);
	config_free(&cfg);
	/* Another provider's destination is not this one's. */
	assert_int_equal(load(env, "github", &cfg, err, sizeof(err)), IH_OK);
	assert_null(cfg.forward.dest.url);
	config_free(&cfg);
	assert_int_equal(load(none, "stripe", &cfg, err, sizeof(err)), IH_OK);
	assert_null(cfg.forward.dest.url);
	config_free(&cfg);
}

#define URL	"IDEMHOOK_STRIPE_FORWARD_URL="
#define SECRET	"IDEMHOOK_STRIPE_FORWARD_SECRET=s3cr3t-value"

static void
settings_refused(void **state)
{
	static const struct {
		const char	*env[3];
		const char	*want;
	} bad[] = {
		{ { URL "ftp://h/x", SECRET, NULL }, "https" },
		{ { URL "http://10.0.0.1/x", SECRET, NULL }, "loopback" },
		{ { URL "https://u:pw@h/x", SECRET, NULL }, "user" },
		{ { URL "https://h/x#f", SECRET, NULL }, "fragment" },
		{ { URL "https://h/x", NULL, NULL },
		    "IDEMHOOK_STRIPE_FORWARD_SECRET is not set" },
		{ { SECRET, NULL, NULL }, "IDEMHOOK_STRIPE_FORWARD_URL is not" },
		{ { URL "https://h/x", SECRET,
		    "IDEMHOOK_STRIPE_FORWARD_SIGN=hmac" }, "provider, standard" },
		{ { URL "https://h/x", SECRET,
		    "IDEMHOOK_STRIPE_FORWARD_TIMEOUT=301" }, "1 to 300" },
		{ { URL "https://h/x", SECRET,
		    "IDEMHOOK_STRIPE_FORWARD_SIGN=as-received" }, "remove one" },
		{ { URL "https://h/x", SECRET,
		    "IDEMHOOK_STRIPE_FORWARD_PAUSE_AFTER=-1" }, "never pause" },
		{ { "IDEMHOOK_STRIPE_FORWARD_PAUSE_AFTER=2", NULL, NULL },
		    "nothing is forwarded" },
		{ { URL "https://h/x", SECRET,
		    "IDEMHOOK_STRIPE_FORWARD_CONCURRENCY=0" }, "1 to 256" },
		{ { URL "https://h/x", SECRET,
		    "IDEMHOOK_STRIPE_FORWARD_CONCURRENCY=257" }, "1 to 256" },
		{ { URL "https://h/x", SECRET,
		    "IDEMHOOK_STRIPE_FORWARD_CONCURRENCY=2x" }, "1 to 256" },
		{ { URL "https://h/x", SECRET,
		    "IDEMHOOK_STRIPE_FORWARD_RATE=0" }, "0.01 to 1000" },
		{ { URL "https://h/x", SECRET,
		    "IDEMHOOK_STRIPE_FORWARD_RATE=10/s" }, "0.01 to 1000" },
		{ { URL "https://h/x", SECRET,
		    "IDEMHOOK_STRIPE_FORWARD_RATE=1e2" }, "0.01 to 1000" },
		{ { URL "https://h/x", SECRET,
		    "IDEMHOOK_STRIPE_FORWARD_RATE=1.2.3" }, "0.01 to 1000" },
		{ { URL "https://h/x", SECRET,
		    "IDEMHOOK_STRIPE_FORWARD_RATE=1001" }, "0.01 to 1000" },
		{ { "IDEMHOOK_STRIPE_FORWARD_CONCURRENCY=2", NULL, NULL },
		    "nothing is forwarded" },
	};
	char *env[4];
	struct config cfg;
	char err[256];
	size_t i, j;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		for (j = 0; j < 3; j++)
			env[j] = (char *)bad[i].env[j];
		env[3] = NULL;
		assert_int_equal(load(env, "stripe", &cfg, err, sizeof(err)),
		    IH_ECONFIG);
		if (strstr(err, bad[i].want) == NULL)
			fail_msg("case %zu: \"%s\" lacks \"%s\"", i, err,
			    bad[i].want);
		assert_null(strstr(err, "s3cr3t"));
	}
}

static void
standard_and_asaas_rules(void **state)
{
	char *sw[] = { "IDEMHOOK_STANDARD_FORWARD_URL=https://h/x",
	    "IDEMHOOK_STANDARD_FORWARD_SECRET=plain", NULL };
	char *ar[] = { "IDEMHOOK_ASAAS_FORWARD_URL=https://h/x",
	    "IDEMHOOK_ASAAS_FORWARD_SIGN=as-received", NULL };
	struct config cfg;
	char err[256];

	(void)state;
	assert_int_equal(load(sw, "standard", &cfg, err, sizeof(err)),
	    IH_ECONFIG);
	assert_non_null(strstr(err, "whsec_"));
	assert_int_equal(load(ar, "asaas", &cfg, err, sizeof(err)),
	    IH_ECONFIG);
	assert_non_null(strstr(err, "never stored"));
}

/* A receiver keeps its own provider's forwarding secret, no other's. */
static void
forward_secret_kept(void **state)
{
	char *env[] = { "IDEMHOOK_STRIPE_FORWARD_SECRET=a",
	    "IDEMHOOK_GITHUB_FORWARD_SECRET=b", "IDEMHOOK_STRIPE_SECRET=c",
	    NULL };
	struct config_vars v;

	(void)state;
	assert_int_equal(config_vars_from_env(&v, env), IH_OK);
	config_vars_keep_secrets(&v, "IDEMHOOK_STRIPE_SECRET");
	assert_non_null(config_vars_get(&v, "IDEMHOOK_STRIPE_FORWARD_SECRET"));
	assert_null(config_vars_get(&v, "IDEMHOOK_GITHUB_FORWARD_SECRET"));
	assert_non_null(config_vars_get(&v, "IDEMHOOK_STRIPE_SECRET"));
	config_vars_free(&v);
}

/* Limits taken: the default, a value, a rate's spacing; @account's. */
static void
limits_taken(void **state)
{
	char *env[] = { URL "https://h/x", SECRET,
	    "IDEMHOOK_STRIPE_FORWARD_RATE=2.5",
	    "IDEMHOOK_STRIPE_FORWARD_URL@acme=https://h/acme",
	    "IDEMHOOK_STRIPE_FORWARD_SECRET@acme=s3cr3t-acme",
	    "IDEMHOOK_STRIPE_FORWARD_CONCURRENCY@acme=2", NULL };
	struct config cfg;
	char err[256];

	(void)state;
	assert_int_equal(load(env, "stripe", &cfg, err, sizeof(err)), IH_OK);
	assert_int_equal(cfg.forward.dest.concurrency,
	    FORWARD_DEFAULT_CONCURRENCY);
	assert_int_equal(cfg.forward.dest.rate_ms, 400);
	assert_int_equal(cfg.forward.nacct, 1);
	assert_int_equal(cfg.forward.acct[0].concurrency, 2);
	/* An account's rate falls back to the provider's. */
	assert_int_equal(cfg.forward.acct[0].rate_ms, 400);
	assert_string_equal(forward_dest_name(&cfg.forward.dest), "default");
	assert_string_equal(forward_dest_name(&cfg.forward.acct[0]), "acme");
	config_free(&cfg);
}

/* Why a due event waits on its destination (store_dest_why()). */
static void
dest_why(void **state)
{
	static const struct {
		int		 paused;
		int64_t		 probe, in_flight, next_at, rowid;
		const char	*want;
	} t[] = {
		{ 0, 0, 1, 0, 5, NULL },
		{ 0, 0, 2, 0, 5, "concurrency" },
		{ 0, 0, 0, 2000, 5, "rate" },
		{ 0, 0, 0, 1000, 5, NULL },
		{ 1, 7, 0, 0, 5, "paused" },
		{ 1, 7, 0, 0, 7, NULL },
		{ 1, 7, 1, 0, 7, "paused" },
	};
	struct store_dest_state ds;
	const char *got;
	size_t i;

	(void)state;
	memset(&ds, 0, sizeof(ds));
	assert_null(store_dest_why(&ds, 1, 0));
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		memset(&ds, 0, sizeof(ds));
		ds.found = 1;
		ds.concurrency = 2;
		ds.rate_ms = 500;
		ds.paused = t[i].paused;
		ds.probe = t[i].probe;
		if (t[i].probe > 0)
			snprintf(ds.probe_id, sizeof(ds.probe_id), "evt_%lld",
			    (long long)t[i].probe);
		ds.in_flight = t[i].in_flight;
		ds.next_at = t[i].next_at;
		got = store_dest_why(&ds, t[i].rowid, 1000);
		if (t[i].want == NULL ? got != NULL : got == NULL ||
		    strcmp(got, t[i].want) != 0)
			fail_msg("case %zu: %s", i, got != NULL ? got : "none");
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(stripe_fresh_timestamp),
		cmocka_unit_test(github_keeps_identifying_headers),
		cmocka_unit_test(shopify_and_asaas),
		cmocka_unit_test(standard_vector),
		cmocka_unit_test(as_received_untouched),
		cmocka_unit_test(settings_taken),
		cmocka_unit_test(settings_refused),
		cmocka_unit_test(standard_and_asaas_rules),
		cmocka_unit_test(forward_secret_kept),
		cmocka_unit_test(limits_taken),
		cmocka_unit_test(dest_why),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
