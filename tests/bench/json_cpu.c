/*
 * json_cpu.c -- CPU per event of shared/json_*.c: what a receiver spends
 * reading a body's id and type (json_fields) and a nested member
 * (json_path_text).  Without arguments it measures three built-in
 * bodies: a 1.5 KB Stripe event, a 7 KB GitHub push and a 1.3 MB push
 * of 200 commits; otherwise each file named.  Not part of any build:
 *
 *   cc -O2 -Ishared -o /tmp/json_cpu tests/bench/json_cpu.c \
 *       shared/json_parse.c shared/json_check.c shared/json_path.c \
 *       $(pkg-config --cflags --libs yajl)
 *   /tmp/json_cpu [body.json...]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ih.h"
#include "json.h"

#define BODY_MAX	(64 << 20)

static const char stripe[] =
    "{\"id\":\"evt_1NG8Du2eZvKYlo2CUI79vXWy\",\"object\":\"event\","
    "\"api_version\":\"2022-11-15\",\"created\":1686089970,\"data\":{"
    "\"object\":{\"id\":\"ch_3NG8Du2eZvKYlo2C0l6yrxh1\",\"object\":"
    "\"charge\",\"amount\":2000,\"amount_captured\":2000,"
    "\"amount_refunded\":0,\"application\":null,\"application_fee\":null,"
    "\"balance_transaction\":\"txn_3NG8Du2eZvKYlo2C0wHDc2pW\","
    "\"billing_details\":{\"address\":{\"city\":null,\"country\":null,"
    "\"line1\":null,\"line2\":null,\"postal_code\":\"94107\",\"state\":null},"
    "\"email\":\"jenny.rosen@example.com\",\"name\":\"Jenny Rosen\","
    "\"phone\":null},\"calculated_statement_descriptor\":\"Stripe\","
    "\"captured\":true,\"created\":1686089970,\"currency\":\"usd\","
    "\"customer\":\"cus_O2CvGtjV3hPqPe\",\"description\":\"Order #1042 "
    "\\u2014 2 items\",\"disputed\":false,\"failure_code\":null,"
    "\"livemode\":false,\"metadata\":{\"order_id\":\"1042\"},"
    "\"outcome\":{\"network_status\":\"approved_by_network\","
    "\"reason\":null,\"risk_level\":\"normal\",\"risk_score\":32,"
    "\"seller_message\":\"Payment complete.\",\"type\":\"authorized\"},"
    "\"paid\":true,\"payment_intent\":\"pi_3NG8Du2eZvKYlo2C0ZJZ8JmD\","
    "\"payment_method\":\"pm_1NG8Du2eZvKYlo2CvJ2ZPqZ1\","
    "\"payment_method_details\":{\"card\":{\"brand\":\"visa\",\"checks\":{"
    "\"address_line1_check\":null,\"address_postal_code_check\":\"pass\","
    "\"cvc_check\":\"pass\"},\"country\":\"US\",\"exp_month\":8,"
    "\"exp_year\":2027,\"fingerprint\":\"Xt5EWLLDS7FJjR1c\",\"funding\":"
    "\"credit\",\"last4\":\"4242\",\"network\":\"visa\"},\"type\":\"card\"},"
    "\"receipt_email\":null,\"receipt_url\":\"https://pay.stripe.com/"
    "receipts/payment/CAcaFwoVYWNjdF8xMDMyRDgyZVp2S1lsbzJDKPLv\","
    "\"refunded\":false,\"status\":\"succeeded\"}},\"livemode\":false,"
    "\"pending_webhooks\":1,\"request\":{\"id\":\"req_D8bGnF0h1KQnpT\","
    "\"idempotency_key\":\"5f3e4a8c-1b2d-4c6e-9f0a-7b8c9d0e1f2a\"},"
    "\"type\":\"charge.succeeded\"}";

/* One commit of a push, about 1.1 KB, or 6.5 KB with a long message. */
static void
commit(FILE *f, int i, int long_msg)
{
	int k;

	fprintf(f, "{\"id\":\"%040x\",\"tree_id\":\"%040x\",\"distinct\":true,"
	    "\"message\":\"Fix the parser's handling of case %d\\n\\n",
	    i, i + 1, i);
	for (k = 0; k < (long_msg ? 90 : 4); k++)
		fprintf(f, "Line %d of the explanation, with a \\\"quote\\\"."
		    "\\n", k);
	fprintf(f, "\",\"timestamp\":\"2026-11-20T10:%02d:00+01:00\","
	    "\"url\":\"https://github.com/octo/hello/commit/%040x\","
	    "\"author\":{\"name\":\"Mona Lisa\",\"email\":\"mona@example.com\","
	    "\"username\":\"octocat\"},\"committer\":{\"name\":\"GitHub\","
	    "\"email\":\"noreply@github.com\",\"username\":\"web-flow\"},"
	    "\"added\":[\"src/case%d.c\"],\"removed\":[],\"modified\":"
	    "[\"src/parser.c\",\"src/parser.h\",\"tests/test_parser.c\"]}",
	    i % 60, i, i);
}

/* A GitHub push of n commits. */
static char *
push(int n, int long_msg, size_t *len)
{
	char *doc = NULL;
	size_t sz = 0;
	FILE *f;
	int i;

	f = open_memstream(&doc, &sz);
	if (f == NULL)
		return NULL;
	fprintf(f, "{\"ref\":\"refs/heads/main\",\"before\":\"%040x\","
	    "\"after\":\"%040x\",\"repository\":{\"id\":1296269,\"node_id\":"
	    "\"MDEwOlJlcG9zaXRvcnkxMjk2MjY5\",\"name\":\"hello\",\"full_name\":"
	    "\"octo/hello\",\"private\":false,\"owner\":{\"name\":\"octo\","
	    "\"email\":null,\"login\":\"octo\",\"id\":583231,\"type\":\"User\","
	    "\"site_admin\":false},"
	    "\"html_url\":\"https://github.com/octo/hello\","
	    "\"description\":\"My first repository\",\"fork\":false,"
	    "\"created_at\":1296068472,\"pushed_at\":1700000000,\"size\":108,"
	    "\"stargazers_count\":80,\"language\":\"C\",\"topics\":[\"json\","
	    "\"webhooks\"],\"default_branch\":\"main\"},\"pusher\":{\"name\":"
	    "\"octocat\",\"email\":\"mona@example.com\"},\"sender\":{\"login\":"
	    "\"octocat\",\"id\":1,\"type\":\"User\",\"site_admin\":false},"
	    "\"created\":false,\"deleted\":false,\"forced\":false,\"compare\":"
	    "\"https://github.com/octo/hello/compare/abc...def\",\"commits\":[",
	    1, 2);
	for (i = 0; i < n; i++) {
		if (i > 0)
			fputc(',', f);
		commit(f, i, long_msg);
	}
	fprintf(f, "],\"head_commit\":null}");
	fclose(f);
	*len = sz;
	return doc;
}

static double
cpu_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int
measure(struct json *js, const char *name, const char *doc, size_t len)
{
	static const char *const keys[] = { "id", "type" };
	double t0, fields_us, path_us;
	char *vals[2], *val;
	long n, i;

	n = len > 100000 ? 50 : 20000;
	t0 = cpu_us();
	for (i = 0; i < n; i++) {
		if (json_fields(js, doc, len, keys, 2, vals) != IH_OK)
			return 2;
		free(vals[0]);
		free(vals[1]);
	}
	fields_us = (cpu_us() - t0) / n;
	t0 = cpu_us();
	for (i = 0; i < n; i++) {
		if (json_path_text(js, doc, len, "$.data.object.id",
		    &val) != IH_OK)
			return 3;
		free(val);
	}
	path_us = (cpu_us() - t0) / n;
	printf("%-20s %8zu bytes  json_fields %9.1f us  "
	    "json_path_text %9.1f us\n", name, len, fields_us, path_us);
	return 0;
}

int
main(int argc, char **argv)
{
	struct json *js;
	char *doc;
	size_t len;
	FILE *f;
	int a, rc = 0;

	if (json_open(&js) != IH_OK)
		return 1;
	if (argc == 1) {
		rc = measure(js, "stripe", stripe, strlen(stripe));
		doc = push(8, 0, &len);
		if (rc == 0 && doc != NULL)
			rc = measure(js, "github-push", doc, len);
		free(doc);
		doc = push(270, 1, &len);
		if (rc == 0 && doc != NULL)
			rc = measure(js, "github-push-270", doc, len);
		free(doc);
	}
	for (a = 1; a < argc && rc == 0; a++) {
		f = fopen(argv[a], "rb");
		doc = malloc(BODY_MAX);
		if (f == NULL || doc == NULL)
			return 1;
		len = fread(doc, 1, BODY_MAX, f);
		fclose(f);
		rc = measure(js, argv[a], doc, len);
		free(doc);
	}
	json_close(js);
	return rc;
}
