/*
 * test_stripe.c -- the Stripe-Signature scheme, against known vectors;
 * the receipt's one pass that also maps the object.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "event.h"
#include "ih.h"
#include "json.h"
#include "json_int.h"
#include "object.h"
#include "provider.h"
#include "request.h"
#include "stripe.h"
#include "verify.h"

/* Derived with openssl from Stripe's SDK test secret (providers.md). */
#define SECRET	"whsec_test_secret"
#define BODY	"{\"id\":\"evt_test_webhook\",\"object\":\"event\"}"
#define TS	1492774577
#define V1	"88a022085c6bdb887b02cb26ff76dd681234d9675c0f22844059f55552a8883a"
#define OTHER	"0000000000000000000000000000000000000000000000000000000000000000"

static char secret1[] = SECRET;
static char secret2[] = "whsec_other_secret";

static int
check(const char *header, char *const *secrets, size_t n, time_t now,
    long tol)
{
	size_t lens[4] = { 0, 0, 0, 0 };
	const char *why = NULL;
	size_t i;
	int rc;

	for (i = 0; i < n; i++)
		lens[i] = strlen(secrets[i]);
	rc = stripe_verify_header(header, BODY, strlen(BODY), secrets, lens,
	    n, now, tol, 1, &why);
	if (rc != IH_OK)
		assert_non_null(why);
	return rc;
}

static void
vector_accepted(void **state)
{
	char *s[] = { secret1 };

	(void)state;
	assert_int_equal(check("t=1492774577,v1=" V1, s, 1, TS, 300), IH_OK);
}

static void
sdk_style_header_accepted(void **state)
{
	char *s[] = { secret1 };
	unsigned char mac[VERIFY_SHA256_LEN];
	struct verify_part parts[3] = {
		{ "1492774577", 10 }, { ".", 1 }, { BODY, sizeof(BODY) - 1 }
	};
	char hex[2 * VERIFY_SHA256_LEN + 1], header[128];
	size_t i;

	(void)state;
	/* Sign as stripe-python's generate_header does, then verify. */
	assert_int_equal(verify_hmac_sha256(SECRET, strlen(SECRET), parts, 3,
	    mac), IH_OK);
	for (i = 0; i < sizeof(mac); i++)
		snprintf(hex + 2 * i, 3, "%02x", mac[i]);
	assert_string_equal(hex, V1);
	snprintf(header, sizeof(header), "t=%d,v1=%s", TS, hex);
	assert_int_equal(check(header, s, 1, TS, 300), IH_OK);
}

static void
uppercase_hex_accepted(void **state)
{
	char *s[] = { secret1 };
	char header[128], *p;

	(void)state;
	snprintf(header, sizeof(header), "t=1492774577,v1=%s", V1);
	for (p = header; *p; p++)
		if (*p >= 'a' && *p <= 'f')
			*p = (char)(*p - 'a' + 'A');
	assert_int_equal(check(header, s, 1, TS, 300), IH_OK);
}

static void
multi_v1_with_junk_accepted(void **state)
{
	char *s[] = { secret1 };

	(void)state;
	assert_int_equal(check("t=1492774577,v1=" OTHER ",v1=" V1, s, 1, TS,
	    300), IH_OK);
	assert_int_equal(check("t=1492774577,v1=nothex,v1=" V1, s, 1, TS,
	    300), IH_OK);
}

static void
reordered_items_accepted(void **state)
{
	char *s[] = { secret1 };

	(void)state;
	assert_int_equal(check("v0=" OTHER ",v1=" V1 ",t=1492774577", s, 1,
	    TS, 300), IH_OK);
}

static void
rotation_any_secret_accepted(void **state)
{
	char *s[] = { secret2, secret1 };
	char *only_other[] = { secret2 };

	(void)state;
	assert_int_equal(check("t=1492774577,v1=" V1, s, 2, TS, 300), IH_OK);
	assert_int_equal(check("t=1492774577,v1=" V1, only_other, 1, TS,
	    300), IH_EAUTH);
}

static void
truncated_rejected(void **state)
{
	char *s[] = { secret1 };
	char header[128];

	(void)state;
	snprintf(header, sizeof(header), "t=1492774577,v1=%.62s", V1);
	assert_int_equal(check(header, s, 1, TS, 300), IH_EAUTH);
	snprintf(header, sizeof(header), "t=1492774577,v1=%.63s", V1);
	assert_int_equal(check(header, s, 1, TS, 300), IH_EAUTH);
	assert_int_equal(check("t=1492774577,v1=", s, 1, TS, 300), IH_EAUTH);
	assert_int_equal(check("t=1492774577", s, 1, TS, 300), IH_EAUTH);
}

/* Headers refused under the right secret, at the right time. */
static void
bad_headers_rejected(void **state)
{
	static const char *const bad[] = {
		/* A forged MAC; the same MAC on another timestamp is one too. */
		"t=1492774577,v1=" OTHER,
		"t=1492774578,v1=" V1,
		/* A correct MAC under v0 must not be accepted: downgrade. */
		"t=1492774577,v0=" V1,
		"t=1492774577,v2=" V1,
		/* Missing and malformed. */
		NULL,
		"",
		"v1=" V1,
		"t=1492774577,t=1492774577,v1=" V1,
		"garbage",
	};
	char *s[] = { secret1 };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (check(bad[i], s, 1, TS, 300) != IH_EAUTH)
			fail_msg("not refused: %s", bad[i] ? bad[i] : "(none)");
}

static void
stale_both_directions(void **state)
{
	char *s[] = { secret1 };

	(void)state;
	assert_int_equal(check("t=1492774577,v1=" V1, s, 1, TS + 300, 300),
	    IH_OK);
	assert_int_equal(check("t=1492774577,v1=" V1, s, 1, TS + 301, 300),
	    IH_ESTALE);
	assert_int_equal(check("t=1492774577,v1=" V1, s, 1, TS - 300, 300),
	    IH_OK);
	assert_int_equal(check("t=1492774577,v1=" V1, s, 1, TS - 301, 300),
	    IH_ESTALE);
	/* A tolerance of 0 must not disable the check. */
	assert_int_equal(check("t=1492774577,v1=" V1, s, 1, TS + 3600, 0),
	    IH_ESTALE);
}

static void
no_secret_rejected(void **state)
{
	(void)state;
	assert_int_equal(check("t=1492774577,v1=" V1, NULL, 0, TS, 300),
	    IH_EAUTH);
}

static void
too_many_v1_rejected(void **state)
{
	struct stripe_sig sig;
	char header[2048];
	size_t i, len;

	(void)state;
	len = (size_t)snprintf(header, sizeof(header), "t=1");
	for (i = 0; i < STRIPE_MAX_V1 + 1; i++)
		len += (size_t)snprintf(header + len, sizeof(header) - len,
		    ",v1=%s", OTHER);
	assert_int_equal(stripe_parse_header(header, len, &sig), IH_EINVAL);
}

/*
 * A thin event once fetched (STRIPE_FETCHED_PREFIX): the switch's object
 * is the related object, at the time of the fetch; a "v1." type is the
 * snapshot type's case, ".deleted" included.  The notification itself
 * maps no object.
 */
static void
fetched_thin_event_maps_related_object(void **state)
{
	static const char body[] = STRIPE_FETCHED_PREFIX
	    "\"fetched_at\":\"2026-11-26T08:00:00.250Z\","
	    "\"event\":{\"id\":\"evt_1\",\"object\":\"v2.core.event\"},"
	    "\"related_object\":{\"id\":\"sub_1\",\"object\":"
	    "\"subscription\",\"status\":\"canceled\"}}";
	static const char thin[] = "{\"id\":\"evt_1\",\"object\":"
	    "\"v2.core.event\",\"type\":\"v1.customer.subscription.deleted\","
	    "\"created\":\"2026-11-26T07:59:59.000Z\",\"related_object\":"
	    "{\"id\":\"sub_1\",\"type\":\"subscription\",\"url\":"
	    "\"/v1/subscriptions/sub_1\"}}";
	struct object_found f;
	struct event ev;

	(void)state;
	memset(&ev, 0, sizeof(ev));
	ev.provider = "stripe";
	ev.event_id = "evt_1";
	ev.event_type = "v1.customer.subscription.deleted";
	ev.payload = (const unsigned char *)body;
	ev.payload_len = sizeof(body) - 1;
	memset(&f, 0, sizeof(f));
	assert_int_equal(stripe_provider.map_object(&ev, &f), IH_OK);
	assert_int_equal(f.mapped, 1);
	assert_string_equal(f.kind, "subscription");
	assert_string_equal(f.object_id, "sub_1");
	assert_string_equal(f.status, "canceled");
	assert_int_equal(f.deleted, 1);
	assert_int_equal(f.source_ms, 1795680000250LL);
	object_found_free(&f);
	ev.payload = (const unsigned char *)thin;
	ev.payload_len = sizeof(thin) - 1;
	memset(&f, 0, sizeof(f));
	assert_int_equal(stripe_provider.map_object(&ev, &f), IH_OK);
	assert_int_equal(f.mapped, 0);
	object_found_free(&f);
}

/*
 * The receipt's one pass (provider_memo_fill()) finds what the switch's
 * mapping finds, ".deleted" applied from the type it names, so that an
 * event processed where it was recorded is not parsed again: one parse
 * for identify and the object together.
 */
static void
receipt_pass_maps_object(void **state)
{
	static const char *const bodies[] = {
	    "{\"id\":\"evt_1\",\"object\":\"event\",\"type\":"
	    "\"customer.subscription.updated\",\"created\":1714560000,"
	    "\"data\":{\"object\":{\"id\":\"sub_1\",\"object\":"
	    "\"subscription\",\"status\":\"canceled\",\"n\":[1,{}]}}}",
	    "{\"id\":\"evt_2\",\"object\":\"event\",\"type\":"
	    "\"customer.deleted\",\"created\":1714560001,\"data\":"
	    "{\"object\":{\"id\":\"cus_1\",\"object\":\"customer\"}}}",
	    "{\"id\":\"evt_3\",\"object\":\"event\",\"type\":"
	    "\"charge.updated\",\"data\":{\"object\":[1]}}",
	};
	struct provider_memo memo;
	struct provider_req pr;
	struct object_found got, want;
	struct request req;
	struct ident id;
	struct json *js = NULL;
	struct event ev;
	const char *why = NULL;
	unsigned long before;
	size_t i;

	(void)state;
	assert_int_equal(json_open(&js), IH_OK);
	for (i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++) {
		memset(&req, 0, sizeof(req));
		req.body = (unsigned char *)(uintptr_t)bodies[i];
		req.body_len = strlen(bodies[i]);
		memset(&pr, 0, sizeof(pr));
		pr.req = &req;
		pr.json = js;
		memset(&id, 0, sizeof(id));
		before = js->parses;
		provider_memo_fill(&memo, &stripe_provider, &pr);
		pr.memo = &memo;
		assert_int_equal(stripe_provider.identify(&pr, &id, &why),
		    IH_OK);
		memset(&ev, 0, sizeof(ev));
		ev.provider = "stripe";
		ev.event_id = id.event_id;
		ev.event_type = id.event_type;
		ev.payload = req.body;
		ev.payload_len = req.body_len;
		assert_int_equal(provider_memo_found(&memo, &stripe_provider,
		    &ev, &got), IH_OK);
		assert_int_equal(js->parses - before, 1);
		assert_int_equal(stripe_provider.map_object(&ev, &want), IH_OK);
		assert_int_equal(got.mapped, want.mapped);
		assert_int_equal(got.mapped, i < 2);
		if (got.mapped) {
			assert_string_equal(got.kind, want.kind);
			assert_string_equal(got.object_id, want.object_id);
			assert_string_equal(got.status, want.status);
			assert_string_equal(got.json, want.json);
			assert_int_equal(got.source_ms, want.source_ms);
			assert_int_equal(got.rank, want.rank);
			assert_int_equal(got.deleted, i == 1);
			assert_int_equal(got.deleted, want.deleted);
		}
		/* Taken once: a second call cannot tell. */
		object_found_free(&got);
		assert_int_equal(provider_memo_found(&memo, &stripe_provider,
		    &ev, &got), IH_ENOTFOUND);
		object_found_free(&got);
		object_found_free(&want);
		provider_memo_free(&memo);
		ident_free(&id);
	}
	json_close(js);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(vector_accepted),
		cmocka_unit_test(sdk_style_header_accepted),
		cmocka_unit_test(uppercase_hex_accepted),
		cmocka_unit_test(multi_v1_with_junk_accepted),
		cmocka_unit_test(reordered_items_accepted),
		cmocka_unit_test(rotation_any_secret_accepted),
		cmocka_unit_test(truncated_rejected),
		cmocka_unit_test(bad_headers_rejected),
		cmocka_unit_test(stale_both_directions),
		cmocka_unit_test(no_secret_rejected),
		cmocka_unit_test(too_many_v1_rejected),
		cmocka_unit_test(fetched_thin_event_maps_related_object),
		cmocka_unit_test(receipt_pass_maps_object),
	};

	return cmocka_run_group_tests_name("stripe", tests, NULL, NULL);
}
