/*
 * fuzz_json.c -- event id and type extraction from untrusted JSON: the
 * top-level members every provider reads, nested paths (Asaas's order
 * key, Stripe's data.object members, an array element), and the UTF-8
 * check.  Any document accepted by one call must be accepted by all.
 * Input: the body.
 */
#include "fuzz.h"
#include "ih.h"
#include "json.h"

static struct json *js;

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const keys[] = { "id", "type", "event", "action" };
	static const char *const paths[] = { "$.payment.id",
	    "$.data.object.id", "$.data.object.lines[0].id", "$.a[1][0].b" };
	char *vals[4], *val = NULL;
	unsigned char *doc;
	size_t i;
	int rc;

	if (js == NULL && json_open(&js) != IH_OK)
		return 0;
	doc = malloc(size + 1);
	if (doc == NULL)
		return 0;
	memcpy(doc, data, size);
	doc[size] = '\0';
	(void)json_utf8_ok(doc, size);
	rc = json_fields(js, doc, size, keys, 4, vals);
	if (rc == IH_OK)
		for (i = 0; i < 4; i++)
			free(vals[i]);
	if (json_fields(js, doc, size, keys, 2, vals) == IH_OK) {
		for (i = 0; i < 2; i++)
			free(vals[i]);
	} else if (rc == IH_OK)
		abort();
	for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		if (json_path_text(js, doc, size, paths[i], &val) == IH_OK)
			free(val);
		else if (rc == IH_OK)
			abort();
	}
	free(doc);
	return 0;
}
