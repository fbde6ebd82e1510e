/*
 * fuzz_standard.c -- Standard Webhooks: webhook-signature parsing, secret
 * decoding and verification of id, timestamp and signatures; the
 * receipt's one pass over the body, which must map what the switch's own
 * parse maps (fuzz_receipt.h).
 * Input: "<webhook-id>\n<webhook-timestamp>\n<webhook-signature>\n
 * <secret>\n<body>".
 */
#include <time.h>

#include "fuzz.h"
#include "fuzz_receipt.h"
#include "ih.h"
#include "standard.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_fields f;
	struct fuzz_vars v;
	struct standard_sig sig;
	unsigned char key[STANDARD_KEY_MAX];
	char *secrets[2] = { "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", NULL };
	size_t secret_len[2] = { 38, 0 }, keylen;
	const char *why = NULL;

	if (fuzz_split(data, size, 5, &f) != 0)
		return 0;
	(void)standard_parse_header(f.p[2], f.len[2], &sig);
	(void)standard_decode_secret(f.p[3], f.len[3], key, sizeof(key),
	    &keylen);
	(void)standard_decode_secret(f.p[3], f.len[3], key, 16, &keylen);
	secrets[1] = f.p[3];
	secret_len[1] = f.len[3];
	(void)standard_verify_headers(f.p[0], f.p[1], f.p[2], f.p[4],
	    f.len[4], secrets, secret_len, 2, (time_t)1614265330, 300, 1,
	    &why);
	(void)standard_verify_headers(f.len[0] ? f.p[0] : NULL, f.p[1],
	    f.p[2], f.p[4], f.len[4], secrets, secret_len, 2, time(NULL), 300,
	    0, &why);
	memset(&v, 0, sizeof(v));
	fuzz_var(&v, "HTTP_WEBHOOK_ID", f.p[0]);
	fuzz_receipt(&standard_provider, &v, f.p[4], f.len[4]);
	fuzz_free(&f);
	return 0;
}
