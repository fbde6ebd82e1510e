/*
 * fuzz_github.c -- X-Hub-Signature-256 parsing and verification, the
 * content type test and the event id built from the hook id and delivery;
 * the receipt's one pass over the body under each type that sets an
 * object (and one that sets none), which must map what the switch's own
 * parse maps (fuzz_receipt.h).
 * Input: "<signature>\n<hook id>\n<delivery>\n<content type>\n<body>".
 */
#include <string.h>

#include "fuzz.h"
#include "fuzz_receipt.h"
#include "github.h"
#include "ih.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const types[] = { "issues", "pull_request",
	    "check_run", "push", "ping" };
	struct fuzz_fields f;
	struct fuzz_vars v;
	struct verify_mac mac;
	size_t i;
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
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		memset(&v, 0, sizeof(v));
		fuzz_var(&v, "CONTENT_TYPE", f.len[3] ? f.p[3] : NULL);
		fuzz_var(&v, "HTTP_X_GITHUB_EVENT", types[i]);
		fuzz_var(&v, "HTTP_X_GITHUB_DELIVERY", f.p[2]);
		fuzz_var(&v, "HTTP_X_GITHUB_HOOK_ID", f.p[1]);
		fuzz_receipt(&github_provider, &v, f.p[4], f.len[4]);
	}
	fuzz_free(&f);
	return 0;
}
