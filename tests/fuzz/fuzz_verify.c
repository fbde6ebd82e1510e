/*
 * fuzz_verify.c -- the shared decoders every scheme relies on: hex,
 * base64 and signed timestamps.
 * Input: "<hex>\n<base64>\n<timestamp>".
 */
#include <time.h>

#include "fuzz.h"
#include "ih.h"
#include "verify.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_fields f;
	unsigned char out[64];
	size_t outlen;
	long long ts;

	if (fuzz_split(data, size, 3, &f) != 0)
		return 0;
	(void)verify_hex_decode(f.p[0], f.len[0], out, sizeof(out), &outlen);
	(void)verify_hex_decode(f.p[0], f.len[0], out, 32, &outlen);
	(void)verify_b64_decode(f.p[1], f.len[1], out, sizeof(out), &outlen);
	(void)verify_b64_decode(f.p[1], f.len[1], out, 32, &outlen);
	(void)verify_timestamp(f.p[2], f.len[2], (time_t)1614265330, 300,
	    &ts);
	(void)verify_timestamp(f.p[2], f.len[2], time(NULL), 1, &ts);
	fuzz_free(&f);
	return 0;
}
