/*
 * test_standard.c -- the Standard Webhooks scheme: the published vector,
 * secrets with and without whsec_, several signatures and versions,
 * forged, truncated, wrong-secret and rotated signatures, the timestamp
 * window both ways, and the identity.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <openssl/evp.h>

#include "ih.h"
#include "json.h"
#include "standard.h"
#include "unit.h"
#include "verify.h"

/* Published in standard-webhooks' JavaScript library tests. */
#define V_SECRET	"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
#define V_ID		"msg_p5jXN8AQM9LWM0D4loKWxJek"
#define V_TS		"1614265330"
#define V_NOW		((time_t)1614265330)
#define V_BODY		"{\"test\": 2432232314}"
#define V_MAC		"g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
#define V_SIG		"v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
/* Another key, for rotation: whsec_ + base64 of 24 bytes 0x01..0x18. */
#define OTHER_SECRET	"whsec_AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcY"

static int
check_at(const char *id, const char *ts, const char *sigs, const char *body,
    const char *const *secrets, time_t now, int check_time)
{
	char *s[CONFIG_MAX_SECRETS];
	size_t l[CONFIG_MAX_SECRETS], n = unit_secret_list(secrets, s, l);
	const char *why = NULL;
	int rc;

	rc = standard_verify_headers(id, ts, sigs, body, strlen(body), s, l,
	    n, now, CONFIG_DEFAULT_TOLERANCE, check_time, &why);
	if (rc != IH_OK)
		assert_non_null(why);
	return rc;
}

static int
check(const char *sigs, const char *body, const char *const *secrets)
{
	return check_at(V_ID, V_TS, sigs, body, secrets, V_NOW, 1);
}

/* Signs id.ts.body with secret into "v1,<base64>". */
static void
sign(const char *secret, const char *id, const char *ts, const char *body,
    char out[64])
{
	unsigned char key[STANDARD_KEY_MAX], mac[VERIFY_SHA256_LEN];
	struct verify_part parts[5] = {
		{ id, strlen(id) }, { ".", 1 }, { ts, strlen(ts) }, { ".", 1 },
		{ body, strlen(body) }
	};
	size_t keylen;

	assert_int_equal(standard_decode_secret(secret, strlen(secret), key,
	    sizeof(key), &keylen), IH_OK);
	assert_int_equal(verify_hmac_sha256(key, keylen, parts, 5, mac),
	    IH_OK);
	memcpy(out, "v1,", 3);
	assert_int_equal(EVP_EncodeBlock((unsigned char *)out + 3, mac,
	    sizeof(mac)), 44);
}

/* Our decoding and HMAC give the published signature, byte for byte. */
static void
test_vector_recomputed(void **state)
{
	char sig[64];

	(void)state;
	sign(V_SECRET, V_ID, V_TS, V_BODY, sig);
	assert_string_equal(sig, V_SIG);
}

static void
test_vector_verify(void **state)
{
	const char *const s[] = { V_SECRET, NULL };
	const char *const bare[] = { V_SECRET + 6, NULL };

	(void)state;
	assert_int_equal(check(V_SIG, V_BODY, s), IH_OK);
	/* The secret without its whsec_ prefix is the same key. */
	assert_int_equal(check(V_SIG, V_BODY, bare), IH_OK);
}

static void
test_secret_decoding(void **state)
{
	unsigned char key[STANDARD_KEY_MAX];
	size_t len;

	(void)state;
	assert_int_equal(standard_decode_secret(V_SECRET, strlen(V_SECRET),
	    key, sizeof(key), &len), IH_OK);
	assert_int_equal(len, 24);
	assert_int_equal(standard_decode_secret(OTHER_SECRET,
	    strlen(OTHER_SECRET), key, sizeof(key), &len), IH_OK);
	assert_int_equal(len, 24);
	assert_int_equal(key[0], 1);
	assert_int_equal(key[23], 24);
	/* Not base64: the raw string is never used as the key. */
	assert_int_equal(standard_decode_secret("whsec_not base64!", 17, key,
	    sizeof(key), &len), IH_EINVAL);
	assert_int_equal(standard_decode_secret("whsec_", 6, key, sizeof(key),
	    &len), IH_EINVAL);
	assert_int_equal(standard_decode_secret("whsec_AAAA", 10, key, 2,
	    &len), IH_ETOOBIG);
}

static void
test_bad_secret(void **state)
{
	static const struct unit_secrets t[] = {
		{ { "not base64!", NULL }, IH_EAUTH },
		{ { "not base64!", V_SECRET, NULL }, IH_OK },
		/* The whole string as a key, as Stripe would use it. */
		{ { "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw ", NULL },
		    IH_EAUTH },
	};

	(void)state;
	unit_check_secrets(check, V_SIG, V_BODY, t, sizeof(t) / sizeof(t[0]));
}

static void
test_signature_list(void **state)
{
	const char *const s[] = { V_SECRET, NULL };

	(void)state;
	/* Junk and other versions around a good v1. */
	assert_int_equal(check("v1a," V_MAC " " V_SIG, V_BODY, s), IH_OK);
	assert_int_equal(check("v1,AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
	    "AAA= " V_SIG " v2,xyz", V_BODY, s), IH_OK);
	assert_int_equal(check("v1,bad  " V_SIG, V_BODY, s), IH_OK);
	/* The right MAC under another version is never accepted. */
	assert_int_equal(check("v1a," V_MAC, V_BODY, s), IH_EAUTH);
	assert_int_equal(check("v2," V_MAC, V_BODY, s), IH_EAUTH);
	assert_int_equal(check("V1," V_MAC, V_BODY, s), IH_EAUTH);
	assert_int_equal(check("v1;" V_MAC, V_BODY, s), IH_EAUTH);
	/* Malformed entries are skipped: they cost no HMAC. */
	assert_int_equal(check("v1,a v1,a v1,a v1,a v1,a v1,a v1,a v1,a v1,a "
	    V_SIG, V_BODY, s), IH_OK);
	/* More well-formed v1 entries than STANDARD_MAX_V1. */
#define Z "v1,AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA= "
	assert_int_equal(check(Z Z Z Z Z Z Z V_SIG, V_BODY, s), IH_OK);
	assert_int_equal(check(Z Z Z Z Z Z Z Z V_SIG, V_BODY, s), IH_EAUTH);
#undef Z
}

static void
test_forged(void **state)
{
	const char *const s[] = { V_SECRET, NULL };
	char sig[] = V_SIG;

	(void)state;
	sig[3] = 'h';
	assert_int_equal(check(sig, V_BODY, s), IH_EAUTH);
	/* Truncated; unpadded; the body, id or timestamp changed. */
	assert_int_equal(check("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE",
	    V_BODY, s), IH_EAUTH);
	assert_int_equal(check("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ",
	    V_BODY, s), IH_EAUTH);
	assert_int_equal(check(V_SIG, "{\"test\":2432232314}", s), IH_EAUTH);
	assert_int_equal(check_at("msg_p5jXN8AQM9LWM0D4loKWxJeK", V_TS, V_SIG,
	    V_BODY, s, V_NOW, 1), IH_EAUTH);
	assert_int_equal(check_at(V_ID, "1614265331", V_SIG, V_BODY, s, V_NOW,
	    1), IH_EAUTH);
}

static void
test_missing(void **state)
{
	const char *const s[] = { V_SECRET, NULL };

	(void)state;
	assert_int_equal(check_at(NULL, V_TS, V_SIG, V_BODY, s, V_NOW, 1),
	    IH_EAUTH);
	assert_int_equal(check_at(V_ID, NULL, V_SIG, V_BODY, s, V_NOW, 1),
	    IH_EAUTH);
	assert_int_equal(check_at(V_ID, V_TS, NULL, V_BODY, s, V_NOW, 1),
	    IH_EAUTH);
	assert_int_equal(check_at("", V_TS, V_SIG, V_BODY, s, V_NOW, 1),
	    IH_EAUTH);
	assert_int_equal(check("", V_BODY, s), IH_EAUTH);
}

static void
test_secrets(void **state)
{
	const char *const rot[] = { OTHER_SECRET, V_SECRET, NULL };
	const char *const rot2[] = { V_SECRET, OTHER_SECRET, NULL };
	const char *const wrong[] = { OTHER_SECRET, NULL };
	const char *const none[] = { NULL };
	const char *const s[] = { V_SECRET, NULL };
	char sig[64], two[160];

	(void)state;
	assert_int_equal(check(V_SIG, V_BODY, rot), IH_OK);
	assert_int_equal(check(V_SIG, V_BODY, rot2), IH_OK);
	assert_int_equal(check(V_SIG, V_BODY, wrong), IH_EAUTH);
	assert_int_equal(check(V_SIG, V_BODY, none), IH_EAUTH);
	/* A sender signing with both, during its own rotation. */
	sign(OTHER_SECRET, V_ID, V_TS, V_BODY, sig);
	assert_int_equal(check(sig, V_BODY, wrong), IH_OK);
	assert_int_equal(check(sig, V_BODY, s), IH_EAUTH);
	memcpy(two, sig, 47);
	two[47] = ' ';
	memcpy(two + 48, V_SIG, sizeof(V_SIG));
	assert_int_equal(check(two, V_BODY, s), IH_OK);
	assert_int_equal(check(two, V_BODY, wrong), IH_OK);
}

static void
test_timestamp(void **state)
{
	const char *const s[] = { V_SECRET, NULL };
	time_t tol = CONFIG_DEFAULT_TOLERANCE;
	char sig[64];

	(void)state;
	/* The window's edges, both ways. */
	assert_int_equal(check_at(V_ID, V_TS, V_SIG, V_BODY, s, V_NOW + tol,
	    1), IH_OK);
	assert_int_equal(check_at(V_ID, V_TS, V_SIG, V_BODY, s, V_NOW - tol,
	    1), IH_OK);
	assert_int_equal(check_at(V_ID, V_TS, V_SIG, V_BODY, s,
	    V_NOW + tol + 1, 1), IH_ESTALE);
	assert_int_equal(check_at(V_ID, V_TS, V_SIG, V_BODY, s,
	    V_NOW - tol - 1, 1), IH_ESTALE);
	/* Re-verifying later skips the window, not the signature. */
	assert_int_equal(check_at(V_ID, V_TS, V_SIG, V_BODY, s, V_NOW + 86400,
	    0), IH_OK);
	assert_int_equal(check_at(V_ID, "1614265331", V_SIG, V_BODY, s,
	    V_NOW + 86400, 0), IH_EAUTH);
	/* A signed but malformed timestamp. */
	sign(V_SECRET, V_ID, "16142653x0", V_BODY, sig);
	assert_int_equal(check_at(V_ID, "16142653x0", sig, V_BODY, s, V_NOW,
	    0), IH_EAUTH);
	sign(V_SECRET, V_ID, "-1614265330", V_BODY, sig);
	assert_int_equal(check_at(V_ID, "-1614265330", sig, V_BODY, s, V_NOW,
	    1), IH_EAUTH);
}

/* An id with a '.' makes the signed content ambiguous. */
static void
test_dotted_id(void **state)
{
	const char *const s[] = { V_SECRET, NULL };
	char sig[64];

	(void)state;
	sign(V_SECRET, "msg.1", V_TS, V_BODY, sig);
	assert_int_equal(check_at("msg.1", V_TS, sig, V_BODY, s, V_NOW, 1),
	    IH_EAUTH);
}

static void
run(const char *body, const char *id, int want_ident, const char *want_type)
{
	const char *const secrets[] = { V_SECRET, NULL };
	struct unit_req u;
	struct ident ident;
	struct json *js;
	const char *why = NULL;
	char sig[64];

	sign(V_SECRET, id, V_TS, body, sig);
	assert_int_equal(json_open(&js), IH_OK);
	unit_begin(&u, js, body, strlen(body), secrets);
	u.pr.now = V_NOW;
	unit_set(&u, "HTTP_WEBHOOK_ID", id);
	unit_set(&u, "HTTP_WEBHOOK_TIMESTAMP", V_TS);
	unit_set(&u, "HTTP_WEBHOOK_SIGNATURE", sig);
	assert_int_equal(standard_provider.verify(&u.pr, &why), IH_OK);
	unit_identify(&u, &standard_provider, &ident, &why, want_ident, id,
	    want_type);
	ident_free(&ident);
	/* The same request a day later is stale. */
	u.pr.now = V_NOW + 86400;
	assert_int_equal(standard_provider.verify(&u.pr, &why), IH_ESTALE);
	json_close(js);
}

static void
test_provider(void **state)
{
	(void)state;
	run("{\"type\":\"invoice.paid\",\"timestamp\":\"2021-02-25T15:42:10Z\","
	    "\"data\":{}}", "msg_1", IH_OK, "invoice.paid");
	/* The published vector's body has no type. */
	run(V_BODY, V_ID, IH_EBODY, NULL);
	run("{\"type\":7}", "msg_2", IH_OK, "7");
	run("{\"type\":\"\"}", "msg_3", IH_EBODY, NULL);
	run("not json", "msg_4", IH_EBODY, NULL);
}

static void
test_provider_struct(void **state)
{
	(void)state;
	assert_string_equal(standard_provider.name, "standard");
	assert_string_equal(standard_provider.secret_var,
	    "IDEMHOOK_STANDARD_SECRET");
	assert_string_equal(standard_provider.kept_headers[0], "webhook-id");
	assert_string_equal(standard_provider.kept_headers[1],
	    "webhook-timestamp");
	assert_string_equal(standard_provider.kept_headers[2],
	    "webhook-signature");
	assert_null(standard_provider.kept_headers[3]);
}

/*
 * The paths are the same for every type: one pass reads the type and
 * the object, and the switch's kind (the type's first segment) and
 * tombstone apply to it as to its own parse.
 */
static void
receipt(const char *body, int want_mapped)
{
	const char *const secrets[] = { V_SECRET, NULL };
	struct unit_req u;
	struct json *js;

	assert_int_equal(json_open(&js), IH_OK);
	unit_begin(&u, js, body, strlen(body), secrets);
	unit_set(&u, "HTTP_WEBHOOK_ID", "msg_1");
	unit_receipt_pass(&u, &standard_provider, IH_OK, want_mapped);
	json_close(js);
}

static void
test_receipt_pass(void **state)
{
	(void)state;
	receipt("{\"type\":\"invoice.paid\",\"timestamp\":"
	    "\"2024-05-01T12:00:00Z\",\"data\":{\"id\":\"in_1\",\"status\":"
	    "\"paid\",\"n\":[1,{}]}}", 1);
	receipt("{\"type\":\"invoice.deleted\",\"data\":{\"id\":\"in_1\"}}",
	    1);
	receipt("{\"type\":\"ping\",\"data\":{\"id\":\"in_1\"}}", 0);
	receipt("{\"type\":\".x\",\"data\":{\"id\":\"in_1\"}}", 0);
	receipt("{\"type\":\"invoice.paid\",\"data\":[1]}", 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vector_recomputed),
		cmocka_unit_test(test_vector_verify),
		cmocka_unit_test(test_secret_decoding),
		cmocka_unit_test(test_bad_secret),
		cmocka_unit_test(test_signature_list),
		cmocka_unit_test(test_forged),
		cmocka_unit_test(test_missing),
		cmocka_unit_test(test_secrets),
		cmocka_unit_test(test_timestamp),
		cmocka_unit_test(test_dotted_id),
		cmocka_unit_test(test_provider),
		cmocka_unit_test(test_receipt_pass),
		cmocka_unit_test(test_provider_struct),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
