/*
 * test_shopify.c -- the Shopify scheme: the published vector, forged,
 * truncated, wrong-secret and rotated HMACs, bad base64, the empty body,
 * and the identity headers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <openssl/evp.h>

#include "ih.h"
#include "json.h"
#include "shopify.h"
#include "unit.h"
#include "verify.h"

/* Published in Shopify/shopify-app-js's tests. */
#define V_SECRET	"test_secret_key"
#define V_BODY		"{\"foo\": \"bar\"}"
#define V_HMAC		"B23tXN681gZ0qIWNRrgtzBE9XSDo5yaUu6wfmhu3a7g="

static int
check(const char *header, const char *body, const char *const *secrets)
{
	return unit_check_header(shopify_verify_header, header, body, secrets);
}

/* Our HMAC gives the published digest, byte for byte. */
static void
test_vector_recomputed(void **state)
{
	unsigned char mac[VERIFY_SHA256_LEN], want[VERIFY_SHA256_LEN];
	struct verify_part part = { V_BODY, sizeof(V_BODY) - 1 };
	size_t len;

	(void)state;
	assert_int_equal(verify_b64_decode(V_HMAC, strlen(V_HMAC), want,
	    sizeof(want), &len), IH_OK);
	assert_int_equal(len, VERIFY_SHA256_LEN);
	assert_int_equal(verify_hmac_sha256(V_SECRET, strlen(V_SECRET), &part,
	    1, mac), IH_OK);
	assert_memory_equal(mac, want, VERIFY_SHA256_LEN);
}

static void
test_vector_verify(void **state)
{
	const char *const s[] = { V_SECRET, NULL };

	(void)state;
	assert_int_equal(check(V_HMAC, V_BODY, s), IH_OK);
}

static void
test_forged(void **state)
{
	const char *const s[] = { V_SECRET, NULL };
	char h[] = V_HMAC;

	(void)state;
	h[0] = 'C';
	assert_int_equal(check(h, V_BODY, s), IH_EAUTH);
	/* Re-serialized JSON, a truncated body. */
	assert_int_equal(check(V_HMAC, "{\"foo\":\"bar\"}", s), IH_EAUTH);
	assert_int_equal(check(V_HMAC, "{\"foo\": \"bar\"", s), IH_EAUTH);
}

static void
test_malformed_header(void **state)
{
	const char *const s[] = { V_SECRET, NULL };
	struct verify_mac mac;

	(void)state;
	assert_int_equal(check(NULL, V_BODY, s), IH_EAUTH);
	assert_int_equal(check("", V_BODY, s), IH_EAUTH);
	/* Truncated; unpadded; URL-safe alphabet; a blank; hex. */
	assert_int_equal(check("B23tXN681gZ0qIWNRrgtzBE9XSDo5yaUu6wfmhu3a7g",
	    V_BODY, s), IH_EAUTH);
	assert_int_equal(check("B23tXN681gZ0qIWNRrgtzBE9XSDo5yaUu6wfmhu3",
	    V_BODY, s), IH_EAUTH);
	assert_int_equal(check("B23tXN681gZ0qIWNRrgtzBE9XSDo5yaUu6wfmhu3a7g= ",
	    V_BODY, s), IH_EAUTH);
	assert_int_equal(shopify_parse_hmac("B23tXN681gZ0qIWNRrgtzBE9XSDo5ya"
	    "Uu6wfmhu3a7g=", 44, &mac), IH_OK);
	assert_int_equal(shopify_parse_hmac("B23tXN681gZ0qIWNRrgtzBE9XSDo5ya"
	    "Uu6wfmhu3a7_=", 44, &mac), IH_EINVAL);
	assert_int_equal(shopify_parse_hmac("076ded5cdebad6067", 17, &mac),
	    IH_EINVAL);
	/* Base64 of 33 bytes is 44 characters too, without padding. */
	assert_int_equal(shopify_parse_hmac("B23tXN681gZ0qIWNRrgtzBE9XSDo5ya"
	    "Uu6wfmhu3a7gA", 44, &mac), IH_EINVAL);
}

static void
test_secrets(void **state)
{
	static const struct unit_secrets t[] = {
		{ { "old", V_SECRET, NULL }, IH_OK },
		{ { V_SECRET, "new", NULL }, IH_OK },
		{ { "old", "new", "test_secret_ke", NULL }, IH_EAUTH },
		{ { NULL }, IH_EAUTH },
	};

	(void)state;
	unit_check_secrets(check, V_HMAC, V_BODY, t, sizeof(t) / sizeof(t[0]));
}

/* An empty body is refused even with its correct HMAC. */
static void
test_empty_body(void **state)
{
	const char *const s[] = { V_SECRET, NULL };
	unsigned char mac[VERIFY_SHA256_LEN];
	struct verify_part part = { "", 0 };
	char b64[64];
	int n;

	(void)state;
	assert_int_equal(verify_hmac_sha256(V_SECRET, strlen(V_SECRET), &part,
	    1, mac), IH_OK);
	n = EVP_EncodeBlock((unsigned char *)b64, mac, sizeof(mac));
	assert_int_equal(n, 44);
	assert_int_equal(check(b64, "", s), IH_EAUTH);
}

static void
run(const char *body, const char *whid, const char *topic,
    const char *sub, int want_ident)
{
	const char *const secrets[] = { V_SECRET, NULL };
	unsigned char mac[VERIFY_SHA256_LEN];
	struct verify_part part = { body, strlen(body) };
	struct unit_req u;
	struct json *js;
	char b64[64];

	assert_int_equal(verify_hmac_sha256(V_SECRET, strlen(V_SECRET), &part,
	    1, mac), IH_OK);
	EVP_EncodeBlock((unsigned char *)b64, mac, sizeof(mac));
	assert_int_equal(json_open(&js), IH_OK);
	unit_begin(&u, js, body, strlen(body), secrets);
	unit_set(&u, "HTTP_X_SHOPIFY_HMAC_SHA256", b64);
	unit_set(&u, "HTTP_X_SHOPIFY_SHOP_DOMAIN", "example.myshopify.com");
	unit_set_opt(&u, "HTTP_X_SHOPIFY_WEBHOOK_ID", whid);
	unit_set_opt(&u, "HTTP_X_SHOPIFY_TOPIC", topic);
	unit_set_opt(&u, "HTTP_X_SHOPIFY_SUB_TOPIC", sub);
	unit_verify_identify(&u, &shopify_provider, IH_OK, want_ident, whid,
	    topic, sub);
	json_close(js);
}

static void
test_provider(void **state)
{
	(void)state;
	run("{\"id\":820982911946154508}", "b54557e4-bdd9-4b37-8a5f",
	    "orders/create", NULL, IH_OK);
	run("{\"shop_id\":954889,\"shop_domain\":\"x.myshopify.com\"}",
	    "w-1", "shop/redact", NULL, IH_OK);
	run("{}", "w-2", "products/update", "variants", IH_OK);
	/* Missing or empty identity headers; a body that is not JSON. */
	run("{}", NULL, "orders/create", NULL, IH_EBODY);
	run("{}", "", "orders/create", NULL, IH_EBODY);
	run("{}", "w-3", NULL, NULL, IH_EBODY);
	run("not json", "w-4", "orders/create", NULL, IH_EBODY);
	/* The compliance topics need their documented shapes. */
	run("{\"shop_id\":1,\"shop_domain\":\"x\",\"customer\":{\"id\":2},"
	    "\"orders_to_redact\":[3]}", "w-5", "customers/redact", NULL,
	    IH_OK);
	run("{\"shop_id\":1,\"shop_domain\":\"x\",\"customer\":{\"id\":2},"
	    "\"orders_requested\":[3],\"data_request\":{\"id\":9}}", "w-6",
	    "customers/data_request", NULL, IH_OK);
	/* An order body, or another compliance body, under them: refused. */
	run("{\"id\":820982911946154508,\"customer\":{\"id\":2}}", "w-7",
	    "customers/redact", NULL, IH_EBODY);
	run("{\"id\":820982911946154508}", "w-8", "shop/redact", NULL,
	    IH_EBODY);
	run("{\"shop_id\":1,\"shop_domain\":\"x\",\"customer\":{\"id\":2},"
	    "\"orders_to_redact\":[3]}", "w-9", "shop/redact", NULL,
	    IH_EBODY);
	run("{\"shop_id\":1,\"shop_domain\":\"x\",\"customer\":{\"id\":2},"
	    "\"orders_to_redact\":[3]}", "w-10", "customers/data_request",
	    NULL, IH_EBODY);
}

static void
test_check_topic(void **state)
{
	/* What the body holds: shop, data_request, customer. */
	static const struct {
		const char	*topic;
		int		 shop, data_request, customer;
		int		 rc;
	} t[] = {
		{ "orders/create", 0, 0, 0, IH_OK },
		{ "orders/create", 1, 1, 1, IH_OK },
		{ "shop/redact", 1, 0, 0, IH_OK },
		{ "customers/redact", 1, 0, 1, IH_OK },
		{ "customers/data_request", 1, 1, 1, IH_OK },
		{ "shop/redact", 0, 0, 0, IH_EBODY },
		{ "shop/redact", 1, 0, 1, IH_EBODY },
		{ "customers/redact", 1, 1, 1, IH_EBODY },
		{ "customers/data_request", 1, 0, 1, IH_EBODY },
	};
	const char *why;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		why = NULL;
		assert_int_equal(shopify_check_topic(t[i].topic, t[i].shop,
		    t[i].data_request, t[i].customer, &why), t[i].rc);
		if (t[i].rc != IH_OK)
			assert_non_null(why);
	}
}

/* Whether a body first recorded under topic first may come as topic. */
static int
repeat(const char *first, int same_action, const char *topic)
{
	return unit_repeat(&shopify_provider, "wh-1", first, same_action,
	    "wh-2", topic);
}

static void
test_repeat_ok(void **state)
{
	(void)state;
	/* What Shopify sends: another subscription, one action's topics. */
	assert_true(repeat("orders/create", 0, "orders/create"));
	assert_true(repeat("orders/delete", 0, "orders/delete"));
	assert_true(repeat("orders/create", 1, "orders/paid"));
	assert_true(repeat("orders/paid", 1, "orders/updated"));
	/* The review's probes, with the first delivery's Event-Id. */
	assert_false(repeat("orders/create", 1, "orders/delete"));
	assert_false(repeat("orders/create", 1, "products/update"));
	assert_false(repeat("orders/create", 1, "app/uninstalled"));
	assert_false(repeat("orders/create", 1, "customers/redact"));
	assert_false(repeat("orders/create", 1, "customers/data_request"));
	assert_false(repeat("orders/create", 1, "shop/redact"));
	assert_false(repeat("orders/create", 1, "orders"));
	/* Nor out of a topic that says what the body is. */
	assert_false(repeat("orders/delete", 1, "orders/updated"));
	assert_false(repeat("app/uninstalled", 1, "shop/update"));
	assert_false(repeat("customers/redact", 1, "customers/update"));
	/* Without the action's Event-Id, no other topic at all. */
	assert_false(repeat("orders/create", 0, "orders/paid"));
	/* A kind is its whole first segment. */
	assert_false(repeat("orders/create", 1, "orders_x/create"));
	assert_false(repeat("draft_orders/create", 1, "orders/create"));
}

static void
test_provider_struct(void **state)
{
	static const char *const want[] = {
		"X-Shopify-Hmac-Sha256", "X-Shopify-Shop-Domain",
		"X-Shopify-Event-Id", "X-Shopify-Triggered-At",
		"X-Shopify-API-Version", "X-Shopify-Topic",
		"X-Shopify-Webhook-Id",
	};
	size_t i;

	(void)state;
	assert_string_equal(shopify_provider.sig_header,
	    "X-Shopify-Hmac-Sha256");
	assert_int_equal(shopify_provider.type_unsigned, 1);
	assert_string_equal(shopify_provider.same_action_header,
	    "X-Shopify-Event-Id");
	assert_ptr_equal(shopify_provider.repeat_ok, shopify_repeat_ok);
	assert_int_equal(shopify_provider.hold_replays, 0);
	assert_string_equal(shopify_provider.name, "shopify");
	assert_string_equal(shopify_provider.secret_var,
	    "IDEMHOOK_SHOPIFY_SECRET");
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		assert_true(unit_kept(&shopify_provider, want[i]));
}

/*
 * One pass reads what identify asks (the compliance shapes too) and the
 * object of X-Shopify-Topic's kind, the whole body: the switch maps the
 * same, a "/delete" topic as its tombstone.
 */
static void
receipt(const char *body, const char *topic, int want_found,
    int want_mapped)
{
	const char *const secrets[] = { V_SECRET, NULL };
	struct unit_req u;
	struct json *js;

	assert_int_equal(json_open(&js), IH_OK);
	unit_begin(&u, js, body, strlen(body), secrets);
	unit_set(&u, "HTTP_X_SHOPIFY_WEBHOOK_ID", "w-1");
	unit_set(&u, "HTTP_X_SHOPIFY_TOPIC", topic);
	unit_receipt_pass(&u, &shopify_provider, want_found, want_mapped);
	json_close(js);
}

static void
test_receipt_pass(void **state)
{
	(void)state;
	receipt("{\"id\":820982911946154508,\"financial_status\":\"paid\","
	    "\"updated_at\":\"2024-05-01T09:00:00-03:00\",\"customer\":"
	    "{\"id\":2}}", "orders/updated", IH_OK, 1);
	receipt("{\"id\":5,\"status\":\"active\",\"created_at\":"
	    "\"2024-05-01\"}", "products/create", IH_OK, 1);
	receipt("{\"id\":5}", "products/delete", IH_OK, 1);
	receipt("{\"shop_id\":1,\"shop_domain\":\"x\",\"customer\":{\"id\":2},"
	    "\"orders_to_redact\":[3]}", "customers/redact", IH_ENOTFOUND, 0);
	receipt("{\"shop_id\":1,\"shop_domain\":\"x\"}", "shop/redact",
	    IH_ENOTFOUND, 0);
	receipt("{\"id\":1}", "app/uninstalled", IH_ENOTFOUND, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vector_recomputed),
		cmocka_unit_test(test_vector_verify),
		cmocka_unit_test(test_forged),
		cmocka_unit_test(test_malformed_header),
		cmocka_unit_test(test_secrets),
		cmocka_unit_test(test_empty_body),
		cmocka_unit_test(test_provider),
		cmocka_unit_test(test_receipt_pass),
		cmocka_unit_test(test_check_topic),
		cmocka_unit_test(test_repeat_ok),
		cmocka_unit_test(test_provider_struct),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
