/*
 * fuzz_stripe.c -- Stripe-Signature parsing and verification; the
 * receipt's one pass over the body, which must map the same object as
 * the switch's own parse (provider_memo_found(), map_object).
 * Input: "<Stripe-Signature value>\n<secret>\n<body>".
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fuzz.h"
#include "fuzz_receipt.h"
#include "ih.h"
#include "stripe.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_fields f;
	struct fuzz_vars v;
	struct stripe_sig sig;
	char *secrets[2] = { "whsec_test_secret", NULL };
	size_t secret_len[2] = { 17, 0 };
	const char *why = NULL;

	if (fuzz_split(data, size, 3, &f) != 0)
		return 0;
	(void)stripe_parse_header(f.p[0], f.len[0], &sig);
	secrets[1] = f.p[1];
	secret_len[1] = f.len[1];
	(void)stripe_verify_header(f.p[0], f.p[2], f.len[2], secrets,
	    secret_len, 2, (time_t)1492774577, 300, 1, &why);
	(void)stripe_verify_header(f.p[0], f.p[2], f.len[2], secrets,
	    secret_len, 2, time(NULL), 300, 0, &why);
	memset(&v, 0, sizeof(v));
	fuzz_receipt(&stripe_provider, &v, f.p[2], f.len[2]);
	fuzz_free(&f);
	return 0;
}
