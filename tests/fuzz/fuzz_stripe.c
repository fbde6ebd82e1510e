/*
 * fuzz_stripe.c -- Stripe-Signature parsing and verification; the
 * receipt's one pass over the body, which must map the same object as
 * the switch's own parse (provider_memo_found(), map_object).
 * Input: "<Stripe-Signature value>\n<secret>\n<body>".
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "event.h"
#include "fuzz.h"
#include "ih.h"
#include "json.h"
#include "object.h"
#include "provider.h"
#include "request.h"
#include "stripe.h"

/* Aborts unless a and b are the same object. */
static void
same_found(const struct object_found *a, const struct object_found *b)
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
	    a->source_ms != b->source_ms || a->rank != b->rank ||
	    a->deleted != b->deleted)
		abort();
}

/* The receipt's pass against the switch's parse, over body. */
static void
receipt_pass(const char *body, size_t len)
{
	struct provider_memo memo;
	struct provider_req pr;
	struct object_found got, want;
	struct request req;
	struct ident id;
	struct json *js = NULL;
	struct event ev;
	const char *why = NULL;

	if (json_open(&js) != IH_OK)
		return;
	memset(&req, 0, sizeof(req));
	req.body = (unsigned char *)(uintptr_t)body;
	req.body_len = len;
	memset(&pr, 0, sizeof(pr));
	pr.req = &req;
	pr.json = js;
	memset(&id, 0, sizeof(id));
	provider_memo_fill(&memo, &stripe_provider, &pr);
	pr.memo = &memo;
	if (stripe_provider.identify(&pr, &id, &why) == IH_OK) {
		memset(&ev, 0, sizeof(ev));
		ev.provider = "stripe";
		ev.event_id = id.event_id;
		ev.event_type = id.event_type;
		ev.payload = req.body;
		ev.payload_len = len;
		memset(&want, 0, sizeof(want));
		if (provider_memo_found(&memo, &stripe_provider, &ev,
		    &got) == IH_OK && stripe_provider.map_object(&ev,
		    &want) == IH_OK)
			same_found(&got, &want);
		object_found_free(&got);
		object_found_free(&want);
	}
	provider_memo_free(&memo);
	ident_free(&id);
	json_close(js);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_fields f;
	struct stripe_sig sig;
	char *secrets[2] = { "whsec_test_secret", NULL };
	size_t secret_len[2] = { 17, 0 };
	const char *why = NULL;

	if (fuzz_split(data, size, 3, &f) != 0)
		return 0;
	(void)stripe_parse_header(f.p[0], f.len[0], &sig);
	secrets[1] = f.p[1];
	secret_len[1] = f.len[1];
	(void)stripe_verify_header(f.p[0], f.p[2], f.len[2], secrets,
	    secret_len, 2, (time_t)1492774577, 300, 1, &why);
	(void)stripe_verify_header(f.p[0], f.p[2], f.len[2], secrets,
	    secret_len, 2, time(NULL), 300, 0, &why);
	receipt_pass(f.p[2], f.len[2]);
	fuzz_free(&f);
	return 0;
}
