/*
 * test_smoke.c -- smoke.c: which events are idemhook smoke's test
 * events, table-driven.  Only the signed body's mark, naming the id,
 * makes one; the type alone (an unsigned header for GitHub and Shopify)
 * never does.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "event.h"
#include "ih.h"
#include "smoke.h"

struct stest {
	const char	*type;
	const char	*id;
	const char	*body;	/* NULL: payload purged */
	int		 yes;
};

#define ID	"idemhook_smoke_0123abcd"
#define MARK	"{\"idemhook_smoke\":\"" ID "\",\"type\":\"idemhook.smoke\"}"

static const struct stest stests[] = {
	/* The command's events, GitHub's id with its hook part. */
	{ SMOKE_TYPE, ID, MARK, 1 },
	{ SMOKE_TYPE, "-:" ID, MARK, 1 },
	{ SMOKE_TYPE, "123:" ID, MARK, 1 },
	/* Another type, whatever the body says. */
	{ "invoice.paid", ID, MARK, 0 },
	{ "idemhook.smoke2", ID, MARK, 0 },
	{ "", ID, MARK, 0 },
	/* The type under a body without the mark: a real body relabelled. */
	{ SMOKE_TYPE, ID, "{\"action\":\"opened\"}", 0 },
	{ SMOKE_TYPE, ID, "{\"idemhook_smoke\":1}", 0 },
	{ SMOKE_TYPE, ID, "{\"idemhook_smoke\":true}", 0 },
	{ SMOKE_TYPE, ID, "{\"x\":{\"idemhook_smoke\":\"" ID "\"}}", 0 },
	/* The mark must name this event and have the prefix. */
	{ SMOKE_TYPE, "idemhook_smoke_other", MARK, 0 },
	{ SMOKE_TYPE, ID "x", MARK, 0 },
	{ SMOKE_TYPE, "evt_1", "{\"idemhook_smoke\":\"evt_1\"}", 0 },
	{ SMOKE_TYPE, SMOKE_ID_PREFIX,
	    "{\"idemhook_smoke\":\"" SMOKE_ID_PREFIX "\"}", 0 },
	{ SMOKE_TYPE, "0123abcd", "{\"idemhook_smoke\":\"0123abcd\"}", 0 },
	/* Not JSON, a repeated key, a purged payload. */
	{ SMOKE_TYPE, ID, "payload=%7B%7D", 0 },
	{ SMOKE_TYPE, ID, "{\"idemhook_smoke\":\"" ID "\","
	    "\"idemhook_smoke\":\"" ID "\"}", 0 },
	{ SMOKE_TYPE, ID, NULL, 0 },
};

static void
test_smoke_table(void **state)
{
	struct event ev;
	size_t i;
	int yes;

	(void)state;
	for (i = 0; i < sizeof(stests) / sizeof(stests[0]); i++) {
		memset(&ev, 0, sizeof(ev));
		ev.provider = "stripe";
		ev.event_type = stests[i].type;
		ev.event_id = stests[i].id;
		ev.payload = (const unsigned char *)stests[i].body;
		ev.payload_len = stests[i].body != NULL ?
		    strlen(stests[i].body) : 0;
		yes = -1;
		assert_int_equal(smoke_event(&ev, &yes), IH_OK);
		if (yes != stests[i].yes)
			fail_msg("case %zu (%s, %s): %d", i, stests[i].type,
			    stests[i].id, yes);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_smoke_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
