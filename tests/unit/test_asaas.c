/*
 * test_asaas.c -- the Asaas token check (matching, wrong, missing,
 * prefixes, rotation), the identity from the body, and
 * json_path_text(), which reads the payment id.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "asaas.h"
#include "ih.h"
#include "json.h"
#include "unit.h"

#define TOKEN	"whk_0b3c1c5e8d5a4e0f9a7b6c5d4e3f2a1b"
#define TOKEN2	"whk_ffeeddccbbaa99887766554433221100"

static int
check(const char *token, const char *const *tokens)
{
	char *s[CONFIG_MAX_SECRETS];
	size_t l[CONFIG_MAX_SECRETS], n = unit_secret_list(tokens, s, l);
	const char *why = NULL;
	int rc;

	rc = asaas_verify_token(token, s, l, n, &why);
	if (rc != IH_OK)
		assert_non_null(why);
	return rc;
}

static void
test_token(void **state)
{
	const char *const one[] = { TOKEN, NULL };
	const char *const rot[] = { TOKEN2, TOKEN, NULL };
	const char *const none[] = { NULL };
	char t[] = TOKEN;

	(void)state;
	assert_int_equal(check(TOKEN, one), IH_OK);
	assert_int_equal(check(TOKEN, rot), IH_OK);
	assert_int_equal(check(TOKEN2, rot), IH_OK);
	assert_int_equal(check(TOKEN2, one), IH_EAUTH);
	assert_int_equal(check(TOKEN, none), IH_EAUTH);
	assert_int_equal(check(NULL, one), IH_EAUTH);
	assert_int_equal(check("", one), IH_EAUTH);
	/* A prefix, an extension, one byte changed, another case. */
	t[sizeof(t) - 2] = '\0';
	assert_int_equal(check(t, one), IH_EAUTH);
	assert_int_equal(check(TOKEN "0", one), IH_EAUTH);
	t[sizeof(t) - 2] = 'c';
	assert_int_equal(check(t, one), IH_EAUTH);
	assert_int_equal(check("WHK_0B3C1C5E8D5A4E0F9A7B6C5D4E3F2A1B", one),
	    IH_EAUTH);
}

static void
run(const char *body, const char *token, int want_verify, int want_ident,
    const char *want_id, const char *want_type, const char *want_order)
{
	const char *const tokens[] = { TOKEN, TOKEN2, NULL };
	struct unit_req u;
	struct ident id;
	struct json *js;
	const char *why = NULL;

	assert_int_equal(json_open(&js), IH_OK);
	unit_begin(&u, js, body, strlen(body), tokens);
	if (token != NULL)
		unit_set(&u, "HTTP_ASAAS_ACCESS_TOKEN", token);
	assert_int_equal(asaas_provider.verify(&u.pr, &why), want_verify);
	unit_identify(&u, &asaas_provider, &id, &why, want_ident, want_id,
	    want_type);
	if (want_ident == IH_OK) {
		unit_str_or_null(id.order_key, want_order);
		assert_null(id.subtype);
	}
	ident_free(&id);
	json_close(js);
}

static void
test_provider(void **state)
{
	(void)state;
	/* The shape of Asaas's documented example, '&' in the id. */
	run("{\"id\":\"evt_05b708f961d739ea7eba7e4db318f621&368604920\","
	    "\"event\":\"PAYMENT_RECEIVED\",\"dateCreated\":\"2024-06-12 "
	    "16:45:03\",\"payment\":{\"object\":\"payment\",\"id\":"
	    "\"pay_080225913252\",\"value\":100.0}}", TOKEN2, IH_OK, IH_OK,
	    "evt_05b708f961d739ea7eba7e4db318f621&368604920",
	    "PAYMENT_RECEIVED", "pay_080225913252");
	/* No payment: no order key. */
	run("{\"id\":\"evt_1\",\"event\":\"TRANSFER_DONE\","
	    "\"transfer\":{\"id\":\"tra_1\"}}", TOKEN, IH_OK, IH_OK, "evt_1",
	    "TRANSFER_DONE", NULL);
	/* A payment id of another type is ignored. */
	run("{\"id\":\"evt_2\",\"event\":\"PAYMENT_CREATED\","
	    "\"payment\":{\"id\":[1]}}", TOKEN, IH_OK, IH_OK, "evt_2",
	    "PAYMENT_CREATED", NULL);
	/* Unusable bodies: refused here, kept quarantined by serve.c. */
	run("{\"event\":\"PAYMENT_CREATED\"}", TOKEN, IH_OK, IH_EBODY, NULL,
	    NULL, NULL);
	run("{\"id\":\"evt_3\"}", TOKEN, IH_OK, IH_EBODY, NULL, NULL, NULL);
	run("{\"id\":\"evt_3\",\"id\":\"evt_4\",\"event\":\"X\"}", TOKEN,
	    IH_OK, IH_EBODY, NULL, NULL, NULL);
	run("not json", TOKEN, IH_OK, IH_EBODY, NULL, NULL, NULL);
	run("", TOKEN, IH_OK, IH_EBODY, NULL, NULL, NULL);
	/* Forged or missing token. */
	run("{\"id\":\"e\",\"event\":\"X\"}", "nope", IH_EAUTH, IH_OK, "e",
	    "X", NULL);
	run("{\"id\":\"e\",\"event\":\"X\"}", NULL, IH_EAUTH, IH_OK, "e", "X",
	    NULL);
}

static void
test_provider_struct(void **state)
{
	(void)state;
	assert_string_equal(asaas_provider.name, "asaas");
	assert_string_equal(asaas_provider.secret_var, "IDEMHOOK_ASAAS_TOKEN");
	assert_int_equal(asaas_provider.keep_unusable, 1);
	/* The token is a secret: never stored with the event. */
	assert_null(asaas_provider.kept_headers[0]);
}

struct ptest {
	const char	*doc;
	const char	*path;
	int		 rc;
	const char	*want;	/* NULL: absent */
};

static const struct ptest ptests[] = {
	{ "{\"payment\":{\"id\":\"pay_1\"}}", "$.payment.id", IH_OK, "pay_1" },
	{ "{\"payment\":{\"id\":12}}", "$.payment.id", IH_OK, "12" },
	{ "{\"a\":{\"b\":{\"c\":\"d\"}}}", "$.a.b.c", IH_OK, "d" },
	{ "{\"payment\":{}}", "$.payment.id", IH_OK, NULL },
	{ "{\"payment\":null}", "$.payment.id", IH_OK, NULL },
	{ "{\"payment\":{\"id\":null}}", "$.payment.id", IH_OK, NULL },
	{ "{\"payment\":{\"id\":{\"x\":1}}}", "$.payment.id", IH_OK, NULL },
	{ "{\"payment\":{\"id\":1.5}}", "$.payment.id", IH_OK, NULL },
	{ "{\"payment\":{\"id\":\"a\\u0000b\"}}", "$.payment.id", IH_OK,
	    NULL },
	{ "{\"x\":\"\\u0000\",\"payment\":{\"id\":\"p\"}}", "$.payment.id",
	    IH_OK, "p" },
	{ "{}", "$.payment.id", IH_OK, NULL },
	{ "[{\"id\":1}]", "$.id", IH_EBODY, NULL },
	{ "\"s\"", "$.id", IH_EBODY, NULL },
	{ "{\"payment\":", "$.payment.id", IH_EBODY, NULL },
	{ "", "$.payment.id", IH_EBODY, NULL },
	{ "{}", "payment.id", IH_EINVAL, NULL },
};

static void
test_json_path_text(void **state)
{
	struct json *js;
	char *val;
	size_t i;

	(void)state;
	assert_int_equal(json_open(&js), IH_OK);
	for (i = 0; i < sizeof(ptests) / sizeof(ptests[0]); i++) {
		const struct ptest *t = &ptests[i];

		print_message("json_path_text case %zu: %s\n", i, t->doc);
		assert_int_equal(json_path_text(js, t->doc, strlen(t->doc),
		    t->path, &val), t->rc);
		if (t->want == NULL)
			assert_null(val);
		else
			assert_string_equal(val, t->want);
		free(val);
	}
	json_close(js);
}

static void
test_json_path_text_long(void **state)
{
	char doc[JSON_VALUE_MAX + 64], *val;
	struct json *js;
	size_t n;

	(void)state;
	assert_int_equal(json_open(&js), IH_OK);
	memcpy(doc, "{\"p\":{\"id\":\"", 12);
	n = 12;
	memset(doc + n, 'x', JSON_VALUE_MAX);
	n += JSON_VALUE_MAX;
	memcpy(doc + n, "\"}}", 3);
	n += 3;
	assert_int_equal(json_path_text(js, doc, n, "$.p.id", &val), IH_OK);
	assert_non_null(val);
	assert_int_equal(strlen(val), JSON_VALUE_MAX);
	free(val);
	/* One byte more is too long. */
	memmove(doc + 13, doc + 12, n - 12);
	n++;
	assert_int_equal(json_path_text(js, doc, n, "$.p.id", &val), IH_OK);
	assert_null(val);
	json_close(js);
}

/*
 * The body names the type: one pass reads both rules' paths with the
 * id, the type and the order key, and the switch maps its type's: a
 * payment, a subscription, a tombstone, or nothing.
 */
static void
receipt(const char *body, int want_mapped)
{
	const char *const tokens[] = { TOKEN, NULL };
	struct unit_req u;
	struct json *js;

	assert_int_equal(json_open(&js), IH_OK);
	unit_begin(&u, js, body, strlen(body), tokens);
	unit_receipt_pass(&u, &asaas_provider, IH_OK, want_mapped);
	json_close(js);
}

static void
test_receipt_pass(void **state)
{
	(void)state;
	receipt("{\"id\":\"evt_1&2\",\"event\":\"PAYMENT_RECEIVED\","
	    "\"dateCreated\":\"2024-06-12 16:45:03\",\"payment\":{\"id\":"
	    "\"pay_1\",\"status\":\"RECEIVED\"},\"subscription\":{\"id\":"
	    "\"sub_1\",\"status\":\"ACTIVE\"}}", 1);
	receipt("{\"id\":\"evt_2\",\"event\":\"SUBSCRIPTION_DELETED\","
	    "\"dateCreated\":\"2024-06-12 16:45:04\",\"payment\":{\"id\":"
	    "\"pay_1\"},\"subscription\":{\"id\":\"sub_1\"}}", 1);
	receipt("{\"id\":\"evt_3\",\"event\":\"PAYMENT_DELETED\","
	    "\"payment\":{\"id\":\"pay_2\",\"status\":\"PENDING\"}}", 1);
	receipt("{\"id\":\"evt_4\",\"event\":\"PAYMENT_CREATED\","
	    "\"subscription\":{\"id\":\"sub_1\"}}", 0);
	receipt("{\"id\":\"evt_5\",\"event\":\"TRANSFER_DONE\","
	    "\"transfer\":{\"id\":\"tra_1\"}}", 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_token),
		cmocka_unit_test(test_provider),
		cmocka_unit_test(test_receipt_pass),
		cmocka_unit_test(test_provider_struct),
		cmocka_unit_test(test_json_path_text),
		cmocka_unit_test(test_json_path_text_long),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
