/*
 * test_github.c -- the GitHub scheme: the two published vectors, forged,
 * truncated, wrong-secret and rotated signatures, JSON and form bodies,
 * and the event id.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "github.h"
#include "ih.h"
#include "json.h"
#include "unit.h"
#include "verify.h"

/* Published by GitHub's "Validating webhook deliveries". */
#define V1_SECRET	"It's a Secret to Everybody"
#define V1_BODY		"Hello, World!"
#define V1_SIG		"sha256=757107ea0eb2509fc211221cce984b8a37570b6d" \
			"7586c22c46f4379c8b043e17"
/* Published in octokit/webhooks-methods.js's tests. */
#define V2_SECRET	"mysecret"
#define V2_BODY		"{\n  \"foo\": \"bar\"\n}\n"
#define V2_SIG		"sha256=e3eccac34c43c7dc1cbb905488b1b81347fcc700" \
			"a7b025697a9d07862256023f"

static void
hexsig(const char *secret, const void *body, size_t len, char out[72])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char mac[VERIFY_SHA256_LEN];
	struct verify_part part = { body, len };
	size_t i;

	assert_int_equal(verify_hmac_sha256(secret, strlen(secret), &part, 1,
	    mac), IH_OK);
	memcpy(out, "sha256=", 7);
	for (i = 0; i < VERIFY_SHA256_LEN; i++) {
		out[7 + 2 * i] = hex[mac[i] >> 4];
		out[8 + 2 * i] = hex[mac[i] & 0xf];
	}
	out[7 + 2 * VERIFY_SHA256_LEN] = '\0';
}

static int
check(const char *header, const char *body, const char *const *secrets)
{
	return unit_check_header(github_verify_header, header, body, secrets);
}

/* Our HMAC gives the published digests, byte for byte. */
static void
test_vectors_recomputed(void **state)
{
	char sig[72];

	(void)state;
	hexsig(V1_SECRET, V1_BODY, strlen(V1_BODY), sig);
	assert_string_equal(sig, V1_SIG);
	hexsig(V2_SECRET, V2_BODY, strlen(V2_BODY), sig);
	assert_string_equal(sig, V2_SIG);
}

static void
test_vectors_verify(void **state)
{
	const char *const s1[] = { V1_SECRET, NULL };
	const char *const s2[] = { V2_SECRET, NULL };

	(void)state;
	assert_int_equal(check(V1_SIG, V1_BODY, s1), IH_OK);
	assert_int_equal(check(V2_SIG, V2_BODY, s2), IH_OK);
	/* Each vector fails under the other's secret. */
	assert_int_equal(check(V1_SIG, V1_BODY, s2), IH_EAUTH);
	assert_int_equal(check(V2_SIG, V2_BODY, s1), IH_EAUTH);
}

static void
test_forged(void **state)
{
	const char *const s1[] = { V1_SECRET, NULL };
	char sig[] = V1_SIG;

	(void)state;
	/* One digit changed. */
	sig[sizeof(sig) - 2] = sig[sizeof(sig) - 2] == '7' ? '8' : '7';
	assert_int_equal(check(sig, V1_BODY, s1), IH_EAUTH);
	/* The body changed: a byte, a trailing newline, truncation. */
	assert_int_equal(check(V1_SIG, "Hello, World?", s1), IH_EAUTH);
	assert_int_equal(check(V1_SIG, "Hello, World!\n", s1), IH_EAUTH);
	assert_int_equal(check(V1_SIG, "Hello, World", s1), IH_EAUTH);
	assert_int_equal(check(V1_SIG, "", s1), IH_EAUTH);
}

static void
test_malformed_header(void **state)
{
	const char *const s1[] = { V1_SECRET, NULL };
	char sig[] = V1_SIG;
	struct verify_mac mac;

	(void)state;
	assert_int_equal(check(NULL, V1_BODY, s1), IH_EAUTH);
	assert_int_equal(check("", V1_BODY, s1), IH_EAUTH);
	/* Truncated by one and by two digits. */
	sig[sizeof(sig) - 2] = '\0';
	assert_int_equal(check(sig, V1_BODY, s1), IH_EAUTH);
	sig[sizeof(sig) - 3] = '\0';
	assert_int_equal(check(sig, V1_BODY, s1), IH_EAUTH);
	/* The hex alone, the legacy SHA-1 prefix, a wrong-case prefix. */
	assert_int_equal(check(V1_SIG + 7, V1_BODY, s1), IH_EAUTH);
	assert_int_equal(check("sha1=757107ea0eb2509fc211221cce984b8a37570b6d"
	    "7586c22c46f4379c8b043e17", V1_BODY, s1), IH_EAUTH);
	assert_int_equal(check("SHA256=757107ea0eb2509fc211221cce984b8a37570b"
	    "6d7586c22c46f4379c8b043e17", V1_BODY, s1), IH_EAUTH);
	/* Not hex; a trailing blank. */
	assert_int_equal(github_parse_signature("sha256=zz", 9, &mac),
	    IH_EINVAL);
	assert_int_equal(check(V1_SIG " ", V1_BODY, s1), IH_EAUTH);
	assert_int_equal(github_parse_signature(V1_SIG, strlen(V1_SIG), &mac),
	    IH_OK);
	assert_int_equal(mac.len, VERIFY_SHA256_LEN);
}

static void
test_secrets(void **state)
{
	static const struct unit_secrets t[] = {
		{ { "old-secret", V1_SECRET, NULL }, IH_OK },
		{ { V1_SECRET, "new-secret", NULL }, IH_OK },
		{ { "old-secret", "new-secret", NULL }, IH_EAUTH },
		{ { NULL }, IH_EAUTH },
		{ { "It's a Secret", NULL }, IH_EAUTH },
	};

	(void)state;
	unit_check_secrets(check, V1_SIG, V1_BODY, t, sizeof(t) / sizeof(t[0]));
}

static void
test_is_form(void **state)
{
	(void)state;
	assert_true(github_is_form("application/x-www-form-urlencoded"));
	assert_true(github_is_form("Application/X-WWW-Form-Urlencoded"));
	assert_true(github_is_form(
	    "application/x-www-form-urlencoded; charset=utf-8"));
	assert_false(github_is_form(NULL));
	assert_false(github_is_form("application/json"));
	assert_false(github_is_form("application/x-www-form-urlencodedx"));
}

static void
test_event_id(void **state)
{
	char *id, longid[GITHUB_HOOK_ID_MAX + 2];

	(void)state;
	assert_int_equal(github_event_id("123", "72d3162e-cc78", &id), IH_OK);
	assert_string_equal(id, "123:72d3162e-cc78");
	free(id);
	assert_int_equal(github_event_id(NULL, "72d3162e", &id), IH_OK);
	assert_string_equal(id, "-:72d3162e");
	free(id);
	assert_int_equal(github_event_id("", "72d3162e", &id), IH_OK);
	assert_string_equal(id, "-:72d3162e");
	free(id);
	assert_int_equal(github_event_id("123", NULL, &id), IH_EBODY);
	assert_null(id);
	assert_int_equal(github_event_id("123", "", &id), IH_EBODY);
	/* "1:2" + "3" would read like "1" + "2:3". */
	assert_int_equal(github_event_id("1:2", "3", &id), IH_EBODY);
	memset(longid, '1', sizeof(longid) - 1);
	longid[sizeof(longid) - 1] = '\0';
	assert_int_equal(github_event_id(longid, "g", &id), IH_EBODY);
}

/* The provider, through a fake request, as serve.c drives it. */
static void
run(const char *body, const char *ct, const char *event, const char *guid,
    const char *hook, int want_verify, int want_ident, const char *want_id,
    const char *want_sub)
{
	const char *const secrets[] = { "s3cret", NULL };
	struct unit_req u;
	struct json *js;
	char sig[72];

	assert_int_equal(json_open(&js), IH_OK);
	unit_begin(&u, js, body, strlen(body), secrets);
	hexsig("s3cret", body, strlen(body), sig);
	unit_set(&u, "HTTP_X_HUB_SIGNATURE_256", sig);
	unit_set_opt(&u, "CONTENT_TYPE", ct);
	unit_set_opt(&u, "HTTP_X_GITHUB_EVENT", event);
	unit_set_opt(&u, "HTTP_X_GITHUB_DELIVERY", guid);
	unit_set_opt(&u, "HTTP_X_GITHUB_HOOK_ID", hook);
	unit_verify_identify(&u, &github_provider, want_verify, want_ident,
	    want_id, event, want_sub);
	json_close(js);
}

static void
test_provider_json(void **state)
{
	(void)state;
	run("{\"action\":\"opened\",\"number\":1}", "application/json",
	    "pull_request", "guid-1", "42", IH_OK, IH_OK, "42:guid-1",
	    "opened");
	/* A ping has no action. */
	run("{\"zen\":\"Keep it logically awesome.\",\"hook_id\":42}",
	    "application/json", "ping", "guid-2", "42", IH_OK, IH_OK,
	    "42:guid-2", NULL);
	/* Two hooks, one GUID: two events. */
	run("{}", "application/json", "push", "guid-3", "7", IH_OK, IH_OK,
	    "7:guid-3", NULL);
	run("{}", "application/json", "push", "guid-3", NULL, IH_OK, IH_OK,
	    "-:guid-3", NULL);
	/* No Content-Type: read as JSON. */
	run("{\"action\":\"created\"}", NULL, "issue_comment", "g", "1",
	    IH_OK, IH_OK, "1:g", "created");
}

static void
test_provider_form(void **state)
{
	(void)state;
	run("payload=%7B%22action%22%3A%22opened%22%2C%22n%22%3A+1%7D",
	    "application/x-www-form-urlencoded", "issues", "guid-4", "42",
	    IH_OK, IH_OK, "42:guid-4", "opened");
	run("payload=%7B%7D&other=1", "application/x-www-form-urlencoded",
	    "push", "guid-5", "42", IH_OK, IH_OK, "42:guid-5", NULL);
	/* No payload field, a bad escape, not JSON once decoded. */
	run("other=1", "application/x-www-form-urlencoded", "push", "g",
	    "1", IH_OK, IH_EBODY, NULL, NULL);
	run("payload=%7B%7", "application/x-www-form-urlencoded", "push",
	    "g", "1", IH_OK, IH_EBODY, NULL, NULL);
	run("payload=nope", "application/x-www-form-urlencoded", "push",
	    "g", "1", IH_OK, IH_EBODY, NULL, NULL);
	/* A form body sent as JSON is not JSON. */
	run("payload=%7B%7D", "application/json", "push", "g", "1", IH_OK,
	    IH_EBODY, NULL, NULL);
}

static void
test_provider_missing(void **state)
{
	(void)state;
	run("{}", "application/json", NULL, "g", "1", IH_OK, IH_EBODY, NULL,
	    NULL);
	run("{}", "application/json", "", "g", "1", IH_OK, IH_EBODY, NULL,
	    NULL);
	run("{}", "application/json", "push", NULL, "1", IH_OK, IH_EBODY,
	    NULL, NULL);
	run("[1]", "application/json", "push", "g", "1", IH_OK, IH_EBODY,
	    NULL, NULL);
}

/* The body's own type against X-GitHub-Event. */
static void
test_check_type(void **state)
{
	const char *why = NULL;

	(void)state;
	assert_int_equal(github_check_type("ping", "zen", "42", "42", &why),
	    IH_OK);
	assert_int_equal(github_check_type("ping", "zen", "42", NULL, &why),
	    IH_OK);
	assert_int_equal(github_check_type("ping", "zen", NULL, "42", &why),
	    IH_OK);
	assert_int_equal(github_check_type("push", NULL, NULL, "42", &why),
	    IH_OK);
	/* A body with only one of the two is not taken for a ping. */
	assert_int_equal(github_check_type("push", "zen", NULL, "42", &why),
	    IH_OK);
	assert_int_equal(github_check_type("push", NULL, "7", "42", &why),
	    IH_OK);
	why = NULL;
	assert_int_equal(github_check_type("push", "zen", "42", "42", &why),
	    IH_EBODY);
	assert_non_null(why);
	assert_int_equal(github_check_type("release", "z", "1", NULL, &why),
	    IH_EBODY);
	assert_int_equal(github_check_type("ping", NULL, "42", "42", &why),
	    IH_EBODY);
	assert_int_equal(github_check_type("ping", "zen", "41", "42", &why),
	    IH_EBODY);
}

static void
test_provider_replay_body(void **state)
{
	(void)state;
	/* The review's probe: a ping body under push or release. */
	run("{\"zen\":\"Design for failure.\",\"hook_id\":42}",
	    "application/json", "push", "guid-r", "42", IH_OK, IH_EBODY, NULL,
	    NULL);
	run("{\"zen\":\"Design for failure.\",\"hook_id\":42}",
	    "application/json", "release", "guid-r", "42", IH_OK, IH_EBODY,
	    NULL, NULL);
	/* And in a form body. */
	run("payload=%7B%22zen%22%3A%22z%22%2C%22hook_id%22%3A42%7D",
	    "application/x-www-form-urlencoded", "push", "g", "42", IH_OK,
	    IH_EBODY, NULL, NULL);
	run("{\"action\":\"opened\"}", "application/json", "ping", "g",
	    "42", IH_OK, IH_EBODY, NULL, NULL);
}

/* Whether a body first recorded as (id, type) may come as (id2, type2). */
static int
repeat(const char *id, const char *type, const char *id2, const char *type2)
{
	return unit_repeat(&github_provider, id, type, 0, id2, type2);
}

static void
test_repeat_ok(void **state)
{
	(void)state;
	/* Another hook, the same event: GitHub sends it. */
	assert_true(repeat("1:g-1", "push", "2:g-1", "push"));
	assert_true(repeat("1:g-1", "push", "-:g-1", "push"));
	/* A new GUID or another type: only a replay. */
	assert_false(repeat("1:g-1", "push", "1:g-2", "push"));
	assert_false(repeat("1:g-1", "push", "2:g-2", "push"));
	assert_false(repeat("1:g-1", "push", "2:g-1", "release"));
	assert_false(repeat("1:g-1", "push", "1:g-10", "push"));
}

static void
test_provider_struct(void **state)
{
	(void)state;
	assert_string_equal(github_provider.sig_header, "X-Hub-Signature-256");
	assert_int_equal(github_provider.type_unsigned, 1);
	assert_null(github_provider.same_action_header);
	assert_ptr_equal(github_provider.repeat_ok, github_repeat_ok);
	assert_int_equal(github_provider.hold_replays, 1);
	assert_string_equal(github_provider.name, "github");
	assert_string_equal(github_provider.secret_var,
	    "IDEMHOOK_GITHUB_SECRET");
	assert_int_equal(github_provider.keep_unusable, 0);
	assert_true(unit_kept(&github_provider, "X-Hub-Signature-256") &&
	    unit_kept(&github_provider, "X-GitHub-Hook-ID"));
}

/*
 * One pass reads what identify asks and the object X-GitHub-Event's
 * rule names: the switch maps the same, an issue "deleted" as its
 * tombstone; an event of no object, or a form, is left to the switch.
 */
static void
receipt(const char *body, const char *ct, const char *event,
    int want_found, int want_mapped)
{
	const char *const secrets[] = { "s3cret", NULL };
	struct unit_req u;
	struct json *js;

	assert_int_equal(json_open(&js), IH_OK);
	unit_begin(&u, js, body, strlen(body), secrets);
	unit_set_opt(&u, "CONTENT_TYPE", ct);
	unit_set(&u, "HTTP_X_GITHUB_EVENT", event);
	unit_set(&u, "HTTP_X_GITHUB_DELIVERY", "72d3162e");
	unit_set(&u, "HTTP_X_GITHUB_HOOK_ID", "42");
	unit_receipt_pass(&u, &github_provider, want_found, want_mapped);
	json_close(js);
}

static void
test_receipt_pass(void **state)
{
	(void)state;
	receipt("{\"action\":\"closed\",\"issue\":{\"id\":7,\"state\":"
	    "\"closed\",\"updated_at\":\"2024-05-01T12:00:00Z\",\"n\":[1]}}",
	    "application/json", "issues", IH_OK, 1);
	receipt("{\"action\":\"deleted\",\"issue\":{\"id\":7,\"state\":"
	    "\"open\",\"updated_at\":\"2024-05-01T12:00:01Z\"}}", NULL,
	    "issues", IH_OK, 1);
	receipt("{\"action\":\"created\",\"check_run\":{\"id\":9,\"status\":"
	    "\"queued\",\"started_at\":\"2024-05-01T12:00:00Z\"}}", NULL,
	    "check_run", IH_OK, 1);
	receipt("{\"action\":\"opened\",\"pull_request\":{\"id\":\"x\"}}",
	    NULL, "pull_request", IH_OK, 1);
	/* No id: nothing, by either path. */
	receipt("{\"action\":\"opened\",\"issue\":{\"state\":\"open\"}}",
	    NULL, "issues", IH_OK, 0);
	receipt("{\"ref\":\"refs/heads/main\"}", NULL, "push", IH_ENOTFOUND,
	    0);
	receipt("payload=%7B%22action%22%3A%22closed%22%2C%22issue%22%3A%7B"
	    "%22id%22%3A7%7D%7D", "application/x-www-form-urlencoded",
	    "issues", IH_ENOTFOUND, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vectors_recomputed),
		cmocka_unit_test(test_receipt_pass),
		cmocka_unit_test(test_vectors_verify),
		cmocka_unit_test(test_forged),
		cmocka_unit_test(test_malformed_header),
		cmocka_unit_test(test_secrets),
		cmocka_unit_test(test_is_form),
		cmocka_unit_test(test_event_id),
		cmocka_unit_test(test_provider_json),
		cmocka_unit_test(test_provider_form),
		cmocka_unit_test(test_provider_missing),
		cmocka_unit_test(test_check_type),
		cmocka_unit_test(test_provider_replay_body),
		cmocka_unit_test(test_repeat_ok),
		cmocka_unit_test(test_provider_struct),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
