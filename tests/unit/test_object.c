/*
 * test_object.c -- the ordering guard, status ranks, provider times,
 * the extraction of an event's object (object.h, json_extract()), and
 * each provider's mapping through its struct provider.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

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

static void
guard_order(void **state)
{
	struct object_key row = { 2000, 1, "evt_m" }, ev;

	(void)state;
	ev = row;
	assert_int_equal(object_guard(NULL, &ev), OBJECT_APPLIED);
	/* The same event again changes nothing. */
	assert_int_equal(object_guard(&row, &ev), OBJECT_TIED);
	ev.source_ms = 1999;
	ev.rank = OBJECT_RANK_DELETED;
	assert_int_equal(object_guard(&row, &ev), OBJECT_STALE);
	ev.source_ms = 2001;
	ev.rank = 0;
	assert_int_equal(object_guard(&row, &ev), OBJECT_APPLIED);
	ev.source_ms = 2000;
	ev.rank = 2;
	assert_int_equal(object_guard(&row, &ev), OBJECT_APPLIED);
	ev.rank = 1;
	ev.event_id = "evt_z";
	assert_int_equal(object_guard(&row, &ev), OBJECT_APPLIED);
	ev.event_id = "evt_a";
	assert_int_equal(object_guard(&row, &ev), OBJECT_TIED);
	assert_string_equal(object_verdict_name(OBJECT_STALE), "stale");
	assert_string_equal(object_verdict_name(0), "?");
}

/* Two keys, in both orders, end alike: the guard is a total order. */
static void
guard_commutes(void **state)
{
	static const struct object_key k[] = {
		{ 1000, 1, "a" }, { 1000, 1, "b" }, { 1000, 3, "a" },
		{ 999, 100, "z" }, { 1001, 0, "" },
	};
	size_t i, j;
	int ij, ji;

	(void)state;
	for (i = 0; i < 5; i++)
		for (j = 0; j < 5; j++) {
			if (i == j)
				continue;
			ij = object_guard(&k[i], &k[j]) == OBJECT_APPLIED;
			ji = object_guard(&k[j], &k[i]) == OBJECT_APPLIED;
			assert_int_equal(ij + ji, 1);
		}
}

static void
ranks(void **state)
{
	static const char *const term[] = { "paid", "canceled", NULL };

	(void)state;
	assert_int_equal(object_rank("active", term, 0), OBJECT_RANK_OPEN);
	assert_int_equal(object_rank("paid", term, 0), OBJECT_RANK_TERMINAL);
	assert_int_equal(object_rank("canceled", term, 0),
	    OBJECT_RANK_TERMINAL + 1);
	assert_int_equal(object_rank("active", term, 1), OBJECT_RANK_DELETED);
	assert_int_equal(object_rank("paid", NULL, 0), OBJECT_RANK_OPEN);
	assert_true(OBJECT_RANK_TERMINAL + 20 < OBJECT_RANK_DELETED);
}

static void
times(void **state)
{
	int64_t ms;

	(void)state;
	assert_int_equal(object_time_parse("1714560000", &ms), 0);
	assert_int_equal(ms, 1714560000000LL);
	assert_int_equal(object_time_parse("2024-05-01T10:40:00Z", &ms), 0);
	assert_int_equal(ms, 1714560000000LL);
	assert_int_equal(object_time_parse("2024-05-01T07:40:00-03:00", &ms),
	    0);
	assert_int_equal(ms, 1714560000000LL);
	assert_int_equal(object_time_parse("2024-05-01T12:10:00+0130", &ms),
	    0);
	assert_int_equal(ms, 1714560000000LL);
	assert_int_equal(object_time_parse("2024-05-01 10:40:00", &ms), 0);
	assert_int_equal(ms, 1714560000000LL);
	assert_int_equal(object_time_parse("2024-05-01T10:40:00.250123Z",
	    &ms), 0);
	assert_int_equal(ms, 1714560000250LL);
	assert_int_equal(object_time_parse("2024-05-01", &ms), 0);
	assert_int_equal(ms, 1714521600000LL);
	assert_int_equal(object_time_parse("1970-01-01T00:00:00Z", &ms), 0);
	assert_int_equal(ms, 0);
	assert_int_equal(object_time_parse("2024-13-01", &ms), -1);
	assert_int_equal(object_time_parse("2024-05-01T10:40:00Zjunk", &ms),
	    -1);
	assert_int_equal(object_time_parse("2024-05-01T25:00", &ms), -1);
	assert_int_equal(object_time_parse("", &ms), -1);
	assert_int_equal(object_time_parse("-5", &ms), -1);
	assert_int_equal(object_time_parse("2024-05-01T10:40:00.Z", &ms), -1);
	assert_int_equal(object_time_parse("99999999999999", &ms), -1);
}

static void
extract_raw(void **state)
{
	static const char doc[] = "{\"a\":1,\"data\":{\"object\":{\"id\":"
	    "\"x\",\"n\":[1,{\"b\":2}]},\"k\":[]},\"z\":{}}";
	struct json_want w[3];
	struct json *js;

	(void)state;
	assert_int_equal(json_open(&js), IH_OK);
	memset(w, 0, sizeof(w));
	w[0].path = "$.data.object";
	w[0].raw = 1;
	w[1].path = "$.data.object.id";
	w[2].path = "$.data.k";
	w[2].raw = 1;
	assert_int_equal(json_extract(js, doc, strlen(doc), w, 3, 100), IH_OK);
	assert_string_equal(w[0].val, "{\"id\":\"x\",\"n\":[1,{\"b\":2}]}");
	assert_int_equal(w[0].len, strlen(w[0].val));
	assert_string_equal(w[1].val, "x");
	assert_string_equal(w[2].val, "[]");
	free(w[0].val);
	free(w[1].val);
	free(w[2].val);
	/* Too long for raw_max: absent; a scalar is never raw. */
	w[0].path = "$.data.object";
	w[1].path = "$.a";
	w[1].raw = 1;
	assert_int_equal(json_extract(js, doc, strlen(doc), w, 2, 10), IH_OK);
	assert_null(w[0].val);
	assert_null(w[1].val);
	/* The body is judged whole: a repeated key refuses it. */
	assert_int_equal(json_extract(js, "{\"a\":{},\"a\":{}}", 15, w, 1,
	    100), IH_EBODY);
	assert_null(w[0].val);
	w[0].path = "data";
	assert_int_equal(json_extract(js, doc, strlen(doc), w, 1, 100),
	    IH_EINVAL);
	json_close(js);
}

/* Maps body as provider p's event of type (and subtype). */
static void
map(const struct provider *p, const char *type, const char *subtype,
    const char *body, struct object_found *f)
{
	struct event ev;

	memset(&ev, 0, sizeof(ev));
	ev.provider = p->name;
	ev.event_id = "evt_1";
	ev.event_type = type;
	ev.subtype = subtype;
	ev.payload = (const unsigned char *)body;
	ev.payload_len = strlen(body);
	assert_non_null(p->map_object);
	assert_int_equal(p->map_object(&ev, f), IH_OK);
}

/* p's event of type (and subtype) with body sets no object. */
static void
unmapped(const struct provider *p, const char *type, const char *subtype,
    const char *body)
{
	struct object_found f;

	map(p, type, subtype, body, &f);
	assert_int_equal(f.mapped, 0);
	object_found_free(&f);
}

/* Maps as map() does, and checks that it names an object of kind. */
static void
map_kind(const struct provider *p, const char *type, const char *subtype,
    const char *body, const char *kind, struct object_found *f)
{
	map(p, type, subtype, body, f);
	assert_int_equal(f->mapped, 1);
	assert_string_equal(f->kind, kind);
}

static void
provider_maps(void **state)
{
	struct object_found f;

	(void)state;
	map_kind(&stripe_provider, "customer.subscription.deleted", NULL,
	    "{\"id\":\"evt_1\",\"created\":1714560000,\"data\":{\"object\":"
	    "{\"id\":\"sub_1\",\"object\":\"subscription\",\"status\":"
	    "\"canceled\"}}}", "subscription", &f);
	assert_string_equal(f.object_id, "sub_1");
	assert_string_equal(f.status, "canceled");
	assert_int_equal(f.deleted, 1);
	assert_int_equal(f.rank, OBJECT_RANK_DELETED);
	assert_int_equal(f.source_ms, 1714560000000LL);
	assert_string_equal(f.json, "{\"id\":\"sub_1\",\"object\":"
	    "\"subscription\",\"status\":\"canceled\"}");
	object_found_free(&f);
	/* No data.object.id: nothing to map. */
	unmapped(&stripe_provider, "balance.available", NULL,
	    "{\"id\":\"evt_1\",\"created\":1,\"data\":{\"object\":{\"object\":"
	    "\"balance\"}}}");
	map_kind(&shopify_provider, "orders/delete", NULL,
	    "{\"id\":820982911946154500}", "orders", &f);
	assert_string_equal(f.object_id, "820982911946154500");
	assert_string_equal(f.status, "deleted");
	assert_int_equal(f.source_ms, 0);
	object_found_free(&f);
	unmapped(&shopify_provider, "customers/redact", NULL, "{\"id\":1}");
	unmapped(&shopify_provider, "app/uninstalled", NULL, "{\"id\":1}");
	map_kind(&asaas_provider, "PAYMENT_RECEIVED", NULL, "{\"id\":\"evt_1\","
	    "\"dateCreated\":\"2024-05-01 10:40:00\",\"payment\":{\"id\":"
	    "\"pay_1\",\"status\":\"RECEIVED\"}}", "payment", &f);
	assert_int_equal(f.source_ms, 1714560000000LL);
	assert_true(f.rank > OBJECT_RANK_TERMINAL);
	object_found_free(&f);
	map_kind(&github_provider, "issues", "deleted", "{\"issue\":{\"id\":7,"
	    "\"state\":\"open\",\"updated_at\":\"2024-05-01T10:40:00Z\"}}",
	    "issue", &f);
	assert_string_equal(f.object_id, "7");
	assert_int_equal(f.deleted, 1);
	object_found_free(&f);
	unmapped(&github_provider, "push", NULL, "{\"issue\":{\"id\":7}}");
	map_kind(&standard_provider, "invoice.paid", NULL, "{\"type\":"
	    "\"invoice.paid\",\"timestamp\":\"2024-05-01T10:40:00.5Z\","
	    "\"data\":{\"id\":\"inv_1\",\"status\":\"paid\"}}", "invoice", &f);
	assert_int_equal(f.source_ms, 1714560000500LL);
	object_found_free(&f);
	/* An id holding a control byte is refused. */
	unmapped(&standard_provider, "invoice.paid", NULL, "{\"data\":{\"id\":"
	    "\"a\\u001bb\"}}");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(guard_order),
		cmocka_unit_test(guard_commutes),
		cmocka_unit_test(ranks),
		cmocka_unit_test(times),
		cmocka_unit_test(extract_raw),
		cmocka_unit_test(provider_maps),
	};

	return cmocka_run_group_tests_name("object", tests, NULL, NULL);
}
