/*
 * fuzz_shopify.c -- X-Shopify-Hmac-Sha256 parsing and verification.
 * Input: "<hmac header>\n<secret>\n<body>".
 */
#include "fuzz.h"
#include "ih.h"
#include "shopify.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_fields f;
	struct verify_mac mac;
	char *secrets[2] = { "test_secret_key", NULL };
	size_t secret_len[2] = { 15, 0 };
	const char *why = NULL;

	if (fuzz_split(data, size, 3, &f) != 0)
		return 0;
	(void)shopify_parse_hmac(f.p[0], f.len[0], &mac);
	secrets[1] = f.p[1];
	secret_len[1] = f.len[1];
	(void)shopify_verify_header(f.p[0], f.p[2], f.len[2], secrets,
	    secret_len, 2, &why);
	fuzz_free(&f);
	return 0;
}
