/*
 * fuzz_json.c -- event id and type extraction from untrusted JSON: the
 * top-level members every provider reads, nested paths (Asaas's order
 * key, Stripe's data.object members, an array element), and the UTF-8
 * check.  Any document accepted by one call must be accepted by all,
 * "$.id" must find what json_fields() finds, and every value returned
 * is valid UTF-8 without NUL, at most JSON_VALUE_MAX bytes.  The body is
 * copied to exactly its size, so that a read past its end is seen.
 * Input: the body.
 */
#include "fuzz.h"
#include "ih.h"
#include "json.h"

static struct json *js;

static void
value_ok(const char *v)
{
	if (v != NULL && (strlen(v) > JSON_VALUE_MAX ||
	    !json_utf8_ok(v, strlen(v))))
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const keys[] = { "id", "type", "event", "action" };
	static const char *const paths[] = { "$.payment.id",
	    "$.data.object.id", "$.data.object.lines[0].id", "$.a[1][0].b" };
	char *vals[4], *val = NULL;
	unsigned char *doc;
	size_t i;
	int rc, prc;

	if (js == NULL && json_open(&js) != IH_OK)
		return 0;
	doc = malloc(size > 0 ? size : 1);
	if (doc == NULL)
		return 0;
	if (size > 0)
		memcpy(doc, data, size);
	(void)json_utf8_ok(doc, size);
	rc = json_fields(js, doc, size, keys, 4, vals);
	if (rc == IH_OK) {
		for (i = 0; i < 4; i++)
			value_ok(vals[i]);
		prc = json_path_text(js, doc, size, "$.id", &val);
		if (prc != IH_OK || (val == NULL) != (vals[0] == NULL) ||
		    (val != NULL && strcmp(val, vals[0]) != 0))
			abort();
		free(val);
		val = NULL;
		for (i = 0; i < 4; i++)
			free(vals[i]);
	}
	if (json_fields(js, doc, size, keys, 2, vals) == IH_OK) {
		if (rc != IH_OK && rc != IH_ENOMEM)
			abort();
		for (i = 0; i < 2; i++)
			free(vals[i]);
	} else if (rc == IH_OK)
		abort();
	for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		prc = json_path_text(js, doc, size, paths[i], &val);
		if (prc == IH_OK) {
			if (rc != IH_OK && rc != IH_ENOMEM)
				abort();
			value_ok(val);
			free(val);
			val = NULL;
		} else if (rc == IH_OK)
			abort();
	}
	free(doc);
	return 0;
}
