/*
 * fuzz_receipt.h -- the receipt's one pass over a body, checked against
 * the switch's own parse: for a provider whose switch maps from the
 * receipt's pass (provider.h, map_paths), what provider_memo_found()
 * tells must be what map_object finds by parsing the same bytes, on
 * every input.  A harness gives the body and the request's headers as
 * CGI variables; any difference aborts.
 */
#ifndef IH_FUZZ_RECEIPT_H
#define IH_FUZZ_RECEIPT_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "event.h"
#include "ih.h"
#include "json.h"
#include "object.h"
#include "provider.h"
#include "request.h"

#define FUZZ_RECEIPT_VARS	8

/* The CGI variables of one request: name, value pairs. */
struct fuzz_vars {
	const char	*name[FUZZ_RECEIPT_VARS];
	const char	*value[FUZZ_RECEIPT_VARS];
	size_t		 n;
};

static const char *
fuzz_vars_param(void *arg, const char *name)
{
	const struct fuzz_vars *v = arg;
	size_t i;

	for (i = 0; i < v->n; i++)
		if (strcmp(v->name[i], name) == 0)
			return v->value[i];
	return NULL;
}

static size_t
fuzz_vars_read(void *arg, void *buf, size_t len)
{
	(void)arg;
	(void)buf;
	(void)len;
	return 0;
}

/* Adds the CGI variable name (value NULL: none). */
static void
fuzz_var(struct fuzz_vars *v, const char *name, const char *value)
{
	if (value == NULL || v->n == FUZZ_RECEIPT_VARS)
		return;
	v->name[v->n] = name;
	v->value[v->n++] = value;
}

/* Aborts unless a and b are the same object. */
static void
fuzz_same_found(const struct object_found *a, const struct object_found *b)
{
	if (a->mapped != b->mapped)
		abort();
	if (!a->mapped)
		return;
	if (strcmp(a->kind, b->kind) != 0 ||
	    strcmp(a->object_id, b->object_id) != 0 ||
	    strcmp(a->status, b->status) != 0 ||
	    (a->json == NULL) != (b->json == NULL) ||
	    (a->json != NULL && strcmp(a->json, b->json) != 0) ||
	    a->json_len != b->json_len ||
	    a->source_ms != b->source_ms || a->rank != b->rank ||
	    a->deleted != b->deleted)
		abort();
}

/*
 * The receipt of body (len bytes) by p with the variables v: its pass,
 * identify, then the object by both paths when identify accepts it.
 */
static void
fuzz_receipt(const struct provider *p, struct fuzz_vars *v,
    const char *body, size_t len)
{
	struct provider_memo memo;
	struct provider_req pr;
	struct object_found got, want;
	struct request_io io;
	struct request req;
	struct ident id;
	struct json *js = NULL;
	struct event ev;
	const char *why = NULL;

	if (json_open(&js) != IH_OK)
		return;
	fuzz_var(v, "REQUEST_METHOD", "POST");
	io.param = fuzz_vars_param;
	io.read = fuzz_vars_read;
	io.arg = v;
	memset(&req, 0, sizeof(req));
	request_begin(&req, &io);
	req.content_type = fuzz_vars_param(v, "CONTENT_TYPE");
	req.body = (unsigned char *)(uintptr_t)body;
	req.body_len = len;
	memset(&pr, 0, sizeof(pr));
	pr.req = &req;
	pr.json = js;
	memset(&id, 0, sizeof(id));
	provider_memo_fill(&memo, p, &pr);
	pr.memo = &memo;
	if (p->identify(&pr, &id, &why) == IH_OK) {
		memset(&ev, 0, sizeof(ev));
		ev.provider = p->name;
		ev.event_id = id.event_id;
		ev.event_type = id.event_type;
		ev.subtype = id.subtype;
		ev.payload = req.body;
		ev.payload_len = len;
		memset(&want, 0, sizeof(want));
		if (provider_memo_found(&memo, p, &ev, &got) == IH_OK &&
		    p->map_object(&ev, &want) == IH_OK)
			fuzz_same_found(&got, &want);
		object_found_free(&got);
		object_found_free(&want);
	}
	provider_memo_free(&memo);
	ident_free(&id);
	json_close(js);
}

#endif
