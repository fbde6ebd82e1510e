/*
 * fuzz_asaas.c -- the asaas-access-token check against configured tokens,
 * an empty one among them; the receipt's one pass over the body, which
 * must map what the switch's own parse maps (fuzz_receipt.h).
 * Input: "<token header>\n<configured token>\n<body>".
 */
#include "asaas.h"
#include "fuzz.h"
#include "fuzz_receipt.h"
#include "ih.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_fields f;
	struct fuzz_vars v;
	char *tokens[3] = { "ih0123456789abcdef0123456789abcdef", "", NULL };
	size_t token_len[3] = { 34, 0, 0 };
	const char *why = NULL;

	if (fuzz_split(data, size, 3, &f) != 0)
		return 0;
	tokens[2] = f.p[1];
	token_len[2] = f.len[1];
	(void)asaas_verify_token(f.p[0], tokens, token_len, 3, &why);
	(void)asaas_verify_token(f.len[0] ? f.p[0] : NULL, tokens, token_len,
	    3, &why);
	memset(&v, 0, sizeof(v));
	fuzz_receipt(&asaas_provider, &v, f.p[2], f.len[2]);
	fuzz_free(&f);
	return 0;
}
