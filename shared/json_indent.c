/*
 * json_indent.c -- a stored JSON body re-printed with indentation, for
 * people to read (the console).  yajl parses and yajl_gen prints: the
 * callbacks only pass each token from one to the other, so no JSON is
 * parsed or escaped here.  The body must first pass json_fields()'s
 * strict checks; numbers are copied as their text, never converted.
 */

#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_gen.h>
#include <yajl/yajl_parse.h>

#include "ih.h"
#include "json.h"

static int
on_null(void *g)
{
	return yajl_gen_null(g) == yajl_gen_status_ok;
}

static int
on_boolean(void *g, int v)
{
	return yajl_gen_bool(g, v) == yajl_gen_status_ok;
}

static int
on_number(void *g, const char *s, size_t len)
{
	return yajl_gen_number(g, s, len) == yajl_gen_status_ok;
}

static int
on_string(void *g, const unsigned char *s, size_t len)
{
	return yajl_gen_string(g, s, len) == yajl_gen_status_ok;
}

static int
on_start_map(void *g)
{
	return yajl_gen_map_open(g) == yajl_gen_status_ok;
}

static int
on_end_map(void *g)
{
	return yajl_gen_map_close(g) == yajl_gen_status_ok;
}

static int
on_start_array(void *g)
{
	return yajl_gen_array_open(g) == yajl_gen_status_ok;
}

static int
on_end_array(void *g)
{
	return yajl_gen_array_close(g) == yajl_gen_status_ok;
}

static const yajl_callbacks copy_tokens = {
	on_null, on_boolean, NULL, NULL, on_number, on_string,
	on_start_map, on_string, on_end_map, on_start_array, on_end_array
};

int
json_indent(struct json *js, const void *doc, size_t len, char **out,
    size_t *outlen)
{
	yajl_gen g = NULL;
	yajl_handle h = NULL;
	const unsigned char *buf;
	size_t blen;
	int rc = IH_ENOMEM;

	*out = NULL;
	*outlen = 0;
	/* The same strict checks as for every body: nothing laxer is shown. */
	rc = json_fields(js, doc, len, NULL, 0, NULL);
	if (rc != IH_OK)
		return rc;
	rc = IH_ENOMEM;
	g = yajl_gen_alloc(NULL);
	if (g == NULL)
		goto out;
	yajl_gen_config(g, yajl_gen_beautify, 1);
	yajl_gen_config(g, yajl_gen_indent_string, "  ");
	h = yajl_alloc(&copy_tokens, NULL, g);
	if (h == NULL)
		goto out;
	rc = IH_EBODY;
	if (yajl_parse(h, doc, len) != yajl_status_ok ||
	    yajl_complete_parse(h) != yajl_status_ok)
		goto out;
	if (yajl_gen_get_buf(g, &buf, &blen) != yajl_gen_status_ok)
		goto out;
	rc = IH_ENOMEM;
	*out = malloc(blen + 1);
	if (*out == NULL)
		goto out;
	memcpy(*out, buf, blen);
	(*out)[blen] = '\0';
	*outlen = blen;
	rc = IH_OK;
out:
	if (h != NULL)
		yajl_free(h);
	if (g != NULL)
		yajl_gen_free(g);
	return rc;
}
