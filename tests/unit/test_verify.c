/* test_verify.c -- decoding, HMAC and comparison primitives. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "hmac_direct.h"
#include "ih.h"
#include "verify.h"

static void
hmac_github_vector(void **state)
{
	/* GitHub's documented example (providers.md). */
	static const char key[] = "It's a Secret to Everybody";
	struct verify_part part = { "Hello, World!", 13 };
	unsigned char mac[VERIFY_SHA256_LEN], want[VERIFY_SHA256_LEN];
	size_t n;

	(void)state;
	assert_int_equal(verify_hex_decode(
	    "757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17",
	    64, want, sizeof(want), &n), IH_OK);
	assert_int_equal(n, 32);
	assert_int_equal(verify_hmac_sha256(key, strlen(key), &part, 1, mac),
	    IH_OK);
	assert_memory_equal(mac, want, 32);
}

static void
hmac_parts_equal_whole(void **state)
{
	struct verify_part whole = { "abc.def", 7 };
	struct verify_part parts[3] = { { "abc", 3 }, { ".", 1 },
	    { "def", 3 } };
	unsigned char a[32], b[32];

	(void)state;
	assert_int_equal(verify_hmac_sha256("k", 1, &whole, 1, a), IH_OK);
	assert_int_equal(verify_hmac_sha256("k", 1, parts, 3, b), IH_OK);
	assert_memory_equal(a, b, 32);
	/* An empty key is legal HMAC, and must not crash. */
	assert_int_equal(verify_hmac_sha256("", 0, &whole, 1, a), IH_OK);
}

/*
 * Each thread keeps its context keyed with the last key: another key of
 * the same length (one byte apart), a key too long to keep, an empty one
 * and the first again each give what OpenSSL's one-shot HMAC() gives.
 */
static void
hmac_key_changes(void **state)
{
	unsigned char a[48], b[48], longkey[300];
	const unsigned char *keys[6];
	size_t lens[6], i;
	struct verify_part part = { "the same message", 16 };
	unsigned char mac[32], want[EVP_MAX_MD_SIZE];
	unsigned int wlen;

	(void)state;
	memset(a, 'a', sizeof(a));
	memcpy(b, a, sizeof(b));
	b[47] = 'b';
	memset(longkey, 'k', sizeof(longkey));
	keys[0] = a; lens[0] = sizeof(a);
	keys[1] = b; lens[1] = sizeof(b);
	keys[2] = a; lens[2] = sizeof(a);
	keys[3] = longkey; lens[3] = sizeof(longkey);
	keys[4] = (const unsigned char *)""; lens[4] = 0;
	keys[5] = a; lens[5] = 47;
	for (i = 0; i < 6; i++) {
		assert_int_equal(verify_hmac_sha256(keys[i], lens[i], &part, 1,
		    mac), IH_OK);
		assert_non_null(HMAC(EVP_sha256(), keys[i], (int)lens[i],
		    (const unsigned char *)part.p, part.len, want, &wlen));
		assert_int_equal(wlen, 32);
		assert_memory_equal(mac, want, 32);
	}
}

static void
hex_decode_table(void **state)
{
	static const struct {
		const char	*in;
		int		 rc;
		size_t		 n;
	} t[] = {
		{ "", IH_OK, 0 }, { "00ff", IH_OK, 2 }, { "AbCd", IH_OK, 2 },
		{ "0", IH_EINVAL, 0 }, { "0g", IH_EINVAL, 0 },
		{ "zz", IH_EINVAL, 0 }, { "0 ", IH_EINVAL, 0 },
		{ "000000", IH_ETOOBIG, 0 },
	};
	unsigned char out[2];
	size_t i, n;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		n = 99;
		assert_int_equal(verify_hex_decode(t[i].in, strlen(t[i].in),
		    out, sizeof(out), &n), t[i].rc);
		if (t[i].rc == IH_OK)
			assert_int_equal(n, t[i].n);
	}
}

static void
b64_decode_table(void **state)
{
	static const struct {
		const char	*in;
		int		 rc;
		const char	*out;
	} t[] = {
		{ "Zm9v", IH_OK, "foo" }, { "Zm8=", IH_OK, "fo" },
		{ "Zg==", IH_OK, "f" }, { "", IH_EINVAL, NULL },
		{ "Zg=", IH_EINVAL, NULL }, { "Zg", IH_EINVAL, NULL },
		{ "Z===", IH_EINVAL, NULL }, { "Zm9v\n", IH_EINVAL, NULL },
		{ "Zm 9", IH_EINVAL, NULL }, { "Zm-_", IH_EINVAL, NULL },
		{ "=Zm9", IH_EINVAL, NULL }, { "Zm9vYmFy", IH_ETOOBIG, NULL },
	};
	unsigned char out[4];
	size_t i, n;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		n = 99;
		assert_int_equal(verify_b64_decode(t[i].in, strlen(t[i].in),
		    out, sizeof(out), &n), t[i].rc);
		if (t[i].rc == IH_OK) {
			assert_int_equal(n, strlen(t[i].out));
			assert_memory_equal(out, t[i].out, n);
		}
	}
}

static void
equal_checks_length(void **state)
{
	(void)state;
	assert_int_equal(verify_equal("abc", 3, "abc", 3), 1);
	assert_int_equal(verify_equal("abc", 3, "abd", 3), 0);
	assert_int_equal(verify_equal("abc", 3, "ab", 2), 0);
	assert_int_equal(verify_equal("", 0, "", 0), 1);
}

static void
timestamp_window(void **state)
{
	long long ts;

	(void)state;
	assert_int_equal(verify_timestamp("1000", 4, 1000, 300, &ts), IH_OK);
	assert_int_equal(ts, 1000);
	assert_int_equal(verify_timestamp("700", 3, 1000, 300, &ts), IH_OK);
	assert_int_equal(verify_timestamp("699", 3, 1000, 300, &ts),
	    IH_ESTALE);
	assert_int_equal(verify_timestamp("1301", 4, 1000, 300, &ts),
	    IH_ESTALE);
	assert_int_equal(verify_timestamp("", 0, 1000, 300, &ts), IH_EINVAL);
	assert_int_equal(verify_timestamp("-5", 2, 1000, 300, &ts),
	    IH_EINVAL);
	assert_int_equal(verify_timestamp("1e3", 3, 1000, 300, &ts),
	    IH_EINVAL);
	assert_int_equal(verify_timestamp("9999999999999999999", 19, 1000,
	    300, &ts), IH_EINVAL);
}

static void
any_tries_every_pair(void **state)
{
	char k1[] = "one", k2[] = "two";
	char *keys[] = { k1, k2 };
	size_t lens[] = { 3, 3 };
	struct verify_part part = { "msg", 3 };
	struct verify_mac macs[2];

	(void)state;
	memset(macs, 0, sizeof(macs));
	macs[0].len = 32;
	assert_int_equal(verify_hmac_sha256("two", 3, &part, 1, macs[1].mac),
	    IH_OK);
	macs[1].len = 32;
	assert_int_equal(verify_any(keys, lens, 2, &part, 1, macs, 2), IH_OK);
	assert_int_equal(verify_any(keys, lens, 1, &part, 1, macs, 2),
	    IH_EAUTH);
	assert_int_equal(verify_any(keys, lens, 2, &part, 1, macs, 1),
	    IH_EAUTH);
	assert_int_equal(verify_any(keys, lens, 0, &part, 1, macs, 2),
	    IH_EAUTH);
}

/*
 * The static CGI program's HMAC without the provider fetch
 * (hmac_direct.h): RFC 4231's longer-than-a-block key, then keys around
 * the block size and messages in parts, one of them empty, each as
 * OpenSSL's one-shot HMAC() gives.
 */
static void
hmac_direct_matches(void **state)
{
	static const size_t keylens[] = { 0, 1, 32, 63, 64, 65, 131, 300 };
	static const char msg[] = "Test Using Larger Than Block-Size Key - "
	    "Hash Key First";
	unsigned char key[300], mac[32], want[EVP_MAX_MD_SIZE];
	struct verify_part parts[3];
	unsigned int wlen;
	size_t i, n;

	(void)state;
	memset(key, 0xaa, sizeof(key));
	parts[0].p = msg;
	parts[0].len = strlen(msg);
	assert_int_equal(hmac_direct_sha256(key, 131, parts, 1, mac), IH_OK);
	assert_int_equal(verify_hex_decode(
	    "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54",
	    64, want, sizeof(want), &n), IH_OK);
	assert_memory_equal(mac, want, 32);
	parts[0].len = 10;
	parts[1].p = msg + 10;
	parts[1].len = 0;
	parts[2].p = msg + 10;
	parts[2].len = strlen(msg) - 10;
	for (i = 0; i < sizeof(keylens) / sizeof(keylens[0]); i++) {
		key[0] = (unsigned char)i;
		assert_int_equal(hmac_direct_sha256(key, keylens[i], parts, 3,
		    mac), IH_OK);
		assert_non_null(HMAC(EVP_sha256(), key, (int)keylens[i],
		    (const unsigned char *)msg, strlen(msg), want, &wlen));
		assert_int_equal(wlen, 32);
		assert_memory_equal(mac, want, 32);
	}
}

static void
sha256_hex_vector(void **state)
{
	char hex[VERIFY_SHA256_HEX];

	(void)state;
	assert_int_equal(verify_sha256_hex("abc", 3, hex), IH_OK);
	assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223"
	    "b00361a396177a9cb410ff61f20015ad");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(hmac_github_vector),
		cmocka_unit_test(hmac_parts_equal_whole),
		cmocka_unit_test(hmac_key_changes),
		cmocka_unit_test(hex_decode_table),
		cmocka_unit_test(b64_decode_table),
		cmocka_unit_test(equal_checks_length),
		cmocka_unit_test(timestamp_window),
		cmocka_unit_test(any_tries_every_pair),
		cmocka_unit_test(sha256_hex_vector),
		cmocka_unit_test(hmac_direct_matches),
	};

	return cmocka_run_group_tests_name("verify", tests, NULL, NULL);
}
