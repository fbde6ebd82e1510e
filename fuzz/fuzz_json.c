/*
 * fuzz_json.c -- event id and type extraction from untrusted JSON: the
 * top-level members every provider reads, a nested path as Asaas's order
 * key, and the UTF-8 check.
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
	char *vals[4], *val = NULL;
	unsigned char *doc;
	size_t i;

	if (js == NULL && json_open(&js) != IH_OK)
		return 0;
	doc = malloc(size + 1);
	if (doc == NULL)
		return 0;
	memcpy(doc, data, size);
	doc[size] = '\0';
	(void)json_utf8_ok(doc, size);
	if (json_fields(js, doc, size, keys, 4, vals) == IH_OK)
		for (i = 0; i < 4; i++)
			free(vals[i]);
	if (json_fields(js, doc, size, keys, 2, vals) == IH_OK)
		for (i = 0; i < 2; i++)
			free(vals[i]);
	if (json_path_text(js, doc, size, "$.payment.id", &val) == IH_OK)
		free(val);
	if (json_path_text(js, doc, size, "$.data.object.id", &val) == IH_OK)
		free(val);
	free(doc);
	return 0;
}
