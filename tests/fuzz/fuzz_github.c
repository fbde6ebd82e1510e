/*
 * fuzz_github.c -- X-Hub-Signature-256 parsing and verification, the
 * content type test and the event id built from the hook id and delivery.
 * Input: "<signature>\n<hook id>\n<delivery>\n<content type>\n<body>".
 */
#include "fuzz.h"
#include "github.h"
#include "ih.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_fields f;
	struct verify_mac mac;
	char *secrets[1] = { "It's a Secret to Everybody" };
	size_t secret_len[1] = { 26 };
	const char *why = NULL;
	char *id = NULL;

	if (fuzz_split(data, size, 5, &f) != 0)
		return 0;
	(void)github_parse_signature(f.p[0], f.len[0], &mac);
	(void)github_verify_header(f.p[0], f.p[4], f.len[4], secrets,
	    secret_len, 1, &why);
	(void)github_verify_header(NULL, f.p[4], f.len[4], secrets,
	    secret_len, 1, &why);
	if (github_event_id(f.len[1] ? f.p[1] : NULL, f.p[2], &id) == IH_OK)
		free(id);
	(void)github_is_form(f.p[3]);
	fuzz_free(&f);
	return 0;
}
