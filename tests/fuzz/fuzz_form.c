/*
 * fuzz_form.c -- URL-form decoding, as GitHub's form bodies need.
 * Input: "<field name>\n<body>".
 */
#include "form.h"
#include "fuzz.h"
#include "ih.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_fields f;
	char out[256], *val = NULL;
	size_t outlen, vallen;

	if (fuzz_split(data, size, 2, &f) != 0)
		return 0;
	(void)form_decode(f.p[1], f.len[1], NULL, f.len[1], &outlen);
	(void)form_decode(f.p[1], f.len[1], out, sizeof(out), &outlen);
	if (form_field(f.p[1], f.len[1], "payload", f.len[1], &val,
	    &vallen) == IH_OK)
		free(val);
	if (form_field(f.p[1], f.len[1], f.p[0], 64, &val, &vallen) == IH_OK)
		free(val);
	fuzz_free(&f);
	return 0;
}
