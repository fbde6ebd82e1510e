/*
 * fuzz_shopify.c -- X-Shopify-Hmac-Sha256 parsing and verification; the
 * receipt's one pass over the body under topics of an object, of none and
 * of compliance, and under the secret's bytes as a topic, which must map
 * what the switch's own parse maps (fuzz_receipt.h).
 * Input: "<hmac header>\n<secret>\n<body>".
 */
#include "fuzz.h"
#include "fuzz_receipt.h"
#include "ih.h"
#include "shopify.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *topics[] = { NULL, "orders/updated", "products/delete",
	    "refunds/create", "customers/redact", "shop/redact",
	    "app/uninstalled" };
	struct fuzz_fields f;
	struct fuzz_vars v;
	struct verify_mac mac;
	size_t i;
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
	topics[0] = f.p[1];
	for (i = 0; i < sizeof(topics) / sizeof(topics[0]); i++) {
		memset(&v, 0, sizeof(v));
		fuzz_var(&v, "HTTP_X_SHOPIFY_WEBHOOK_ID", "w-1");
		fuzz_var(&v, "HTTP_X_SHOPIFY_TOPIC", topics[i]);
		fuzz_receipt(&shopify_provider, &v, f.p[2], f.len[2]);
	}
	fuzz_free(&f);
	return 0;
}
