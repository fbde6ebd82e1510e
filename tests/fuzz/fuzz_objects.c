/*
 * fuzz_objects.c -- the mapping of an event to its object: each
 * provider's map_object (object.h's object_extract() over json_path.c's
 * json_extract()) and the provider time parser, on untrusted bodies.
 * Input: "<provider>\n<event type>\n<subtype>\n<body>"; a provider name
 * that is not one picks one by its first byte.  Checks: a mapped
 * object's kind and id are short printable text, its status is set,
 * its JSON is a part of the body that the strict parser accepts on its
 * own (when it is an object), its rank is one object_rank() gives, and
 * a raw extraction agrees with json_path_text() on the same body.
 */
#include "fuzz.h"
#include "asaas.h"
#include "dispatch.h"
#include "github.h"
#include "ih.h"
#include "json.h"
#include "object.h"
#include "provider.h"
#include "shopify.h"
#include "standard.h"
#include "stripe.h"

static struct json *js;

static const struct provider *const fuzz_providers[] = {
	&stripe_provider, &shopify_provider, &asaas_provider,
	&github_provider, &standard_provider,
};

static void
text_ok(const char *s, size_t max)
{
	size_t i, n;

	if (s == NULL)
		abort();
	n = strlen(s);
	if (n == 0 || n >= max)
		abort();
	for (i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			abort();
}

/* Is the n bytes at s a part of the len bytes at body? */
static int
part_of(const char *body, size_t len, const char *s, size_t n)
{
	size_t i;

	for (i = 0; n <= len && i <= len - n; i++)
		if (memcmp(body + i, s, n) == 0)
			return 1;
	return 0;
}

static void
found_ok(const struct object_found *f, const char *body, size_t len)
{
	char *none[1];
	int64_t ms;

	if (!f->mapped)
		return;
	text_ok(f->kind, OBJECT_KIND_MAX);
	text_ok(f->object_id, OBJECT_ID_MAX);
	if (f->status == NULL || !json_utf8_ok(f->status, strlen(f->status)))
		abort();
	if (f->deleted != (f->rank == OBJECT_RANK_DELETED))
		abort();
	if (f->rank < OBJECT_RANK_OPEN || f->rank > OBJECT_RANK_DELETED)
		abort();
	if (f->json != NULL) {
		if (f->json_len != strlen(f->json) || f->json_len > len ||
		    !part_of(body, len, f->json, f->json_len))
			abort();
		if (f->json[0] == '{' && json_fields(js, f->json, f->json_len,
		    NULL, 0, none) != IH_OK)
			abort();
	}
	if (f->source_ms != 0 && object_time_parse("0", &ms) != 0)
		abort();
}

/* A raw member and its scalar neighbour, against json_path_text(). */
static void
extract_agrees(const char *body, size_t len)
{
	struct json_want w[2];
	char *v = NULL;
	int rc, prc;

	memset(w, 0, sizeof(w));
	w[0].path = "$.data.object";
	w[0].raw = 1;
	w[1].path = "$.data.object.id";
	rc = json_extract(js, body, len, w, 2, OBJECT_JSON_MAX);
	prc = json_path_text(js, body, len, "$.data.object.id", &v);
	if ((rc == IH_OK) != (prc == IH_OK) && rc != IH_ENOMEM &&
	    prc != IH_ENOMEM)
		abort();
	if (rc == IH_OK && prc == IH_OK && ((v == NULL) != (w[1].val == NULL) ||
	    (v != NULL && strcmp(v, w[1].val) != 0)))
		abort();
	if (w[0].val != NULL && (w[0].val[0] != '{' && w[0].val[0] != '['))
		abort();
	free(v);
	free(w[0].val);
	free(w[1].val);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct provider *p = NULL;
	struct event ev;
	struct object_found f;
	struct fuzz_fields in;
	size_t i, n = sizeof(fuzz_providers) / sizeof(fuzz_providers[0]);
	int64_t ms;
	int rc;

	if (js == NULL && json_open(&js) != IH_OK)
		return 0;
	if (fuzz_split(data, size, 4, &in) != 0)
		return 0;
	for (i = 0; i < n; i++)
		if (strcmp(in.p[0], fuzz_providers[i]->name) == 0)
			p = fuzz_providers[i];
	if (p == NULL)
		p = fuzz_providers[in.len[0] > 0 ?
		    (unsigned char)in.p[0][0] % n : 0];
	(void)object_time_parse(in.p[1], &ms);
	(void)object_time_parse(in.p[3], &ms);
	memset(&ev, 0, sizeof(ev));
	ev.provider = p->name;
	ev.event_id = "evt_fuzz";
	ev.event_type = in.p[1];
	ev.subtype = in.len[2] > 0 ? in.p[2] : NULL;
	ev.payload = (const unsigned char *)in.p[3];
	ev.payload_len = in.len[3];
	rc = p->map_object(&ev, &f);
	if (rc != IH_OK && rc != IH_ENOMEM)
		abort();
	if (rc == IH_OK)
		found_ok(&f, in.p[3], in.len[3]);
	object_found_free(&f);
	extract_agrees(in.p[3], in.len[3]);
	fuzz_free(&in);
	return 0;
}
