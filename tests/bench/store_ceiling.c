/*
 * store_ceiling.c -- the storage ceiling: how many events per second one
 * process can record when each event gets its own durable transaction.
 *
 *	store_ceiling [-s FULL|NORMAL|SHARED] [-t seconds] [-b bytes]
 *	    [-P procs] db
 *	store_ceiling -c db		(create the store, record nothing)
 *	store_ceiling -F n [-b bytes] db	(fill: n done events, fast)
 *
 * It goes through the library's own store_open() and store_record(), so
 * the schema (compiled in from db/schema.sql), WAL mode, the synchronous
 * level, the busy handler and the statement are exactly those of the
 * receivers: one BEGIN IMMEDIATE + INSERT .. ON CONFLICT .. RETURNING +
 * COMMIT per event, with a payload of about the size the benchmark sends.
 * Nothing else is done between events, so the figure is what the disk and
 * SQLite allow.  With -P, that many processes record concurrently (each
 * its own writer, as the FastCGI processes are).
 *
 * Prints one line: "events=<n> seconds=<s> events_per_s=<r>".
 * Exits 1 on any store error.
 *
 * -F fills a store for make bench's growth runs (issue 27): n Stripe
 * events with random ids (as Stripe's are: the unique index grows at
 * random places), each recorded, claimed and completed through the
 * library (store_record_claim(), store_complete(): the event row, its
 * payload, its attempt), with the payment_intent object each sets, of a
 * random id too (store_object_apply(): the object and its history, as
 * stripe's switch writes them), FILL_BATCH per relaxed transaction, so
 * that a million take minutes, not hours of HTTP.  Received times are
 * spread over the past n seconds.  No fingerprint: Stripe's events have
 * none (only GitHub's and Shopify's replay checks read it).
 */
#include <sys/wait.h>

#include <stdint.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "ih.h"
#include "store.h"

#define CEIL_MAX_BODY	(64 * 1024)
#define CEIL_MAX_PROCS	16
#define FILL_BATCH	2000
#define FILL_MAX	100000000L

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int
parse_num(const char *s, long min, long max, long *out)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < min || v > max)
		return -1;
	*out = (long)v;
	return 0;
}

/* A JSON body of exactly len bytes (len >= 128) naming event id. */
static size_t
make_body(char *buf, size_t len, const char *id)
{
	int n;

	n = snprintf(buf, len, "{\"id\":\"%s\",\"object\":\"event\","
	    "\"type\":\"payment_intent.succeeded\",\"data\":{\"pad\":\"", id);
	if (n < 0 || (size_t)n + 4 > len)
		return 0;
	memset(buf + n, 'x', len - (size_t)n - 3);
	memcpy(buf + len - 3, "\"}}", 3);
	return len;
}

/*
 * Records events for seconds in one process; writes the count to *count.
 * Returns 0, or -1 after printing the store's error.
 */
static int
run(const char *path, int sync, double seconds, size_t body_len, int proc,
    long *count)
{
	struct store_opts opts;
	struct event ev;
	struct store_result res;
	struct store *st = NULL;
	char err[STORE_ERR_MAX], id[64], headers[128];
	char *body = NULL;
	double t0;
	long n = 0;
	int rc = -1;

	*count = 0;
	opts.path = path;
	opts.durable_as = store_durable_as(sync);
	opts.busy_timeout_ms = 5000;
	if (store_open(&opts, &st, err, sizeof(err)) != IH_OK) {
		fprintf(stderr, "store_ceiling: %s\n", err);
		goto out;
	}
	body = malloc(body_len + 1);
	if (body == NULL)
		goto out;
	snprintf(headers, sizeof(headers), "Stripe-Signature: t=0,v1=%064d\n",
	    0);
	memset(&ev, 0, sizeof(ev));
	ev.provider = "stripe";
	ev.event_type = "payment_intent.succeeded";
	ev.event_id = id;
	ev.payload = (const unsigned char *)body;
	ev.headers = headers;
	t0 = now_s();
	do {
		snprintf(id, sizeof(id), "evt_ceiling_%d_%ld", proc, n);
		ev.payload_len = make_body(body, body_len, id);
		if (store_record(st, NULL, &ev, clock_wall_ms(), &res, err,
		    sizeof(err)) != IH_OK) {
			fprintf(stderr, "store_ceiling: %s\n", err);
			goto out;
		}
		n++;
	} while (now_s() - t0 < seconds);
	*count = n;
	rc = 0;
out:
	free(body);
	store_close(st);
	return rc;
}

/* A Stripe-like id of 24 random letters and digits (xorshift). */
static void
random_id(char *buf, size_t len, uint64_t *seed)
{
	static const char al[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnop"
	    "qrstuvwxyz0123456789";
	uint64_t x = *seed;
	int i;

	memcpy(buf, "evt_", 4);
	for (i = 0; i < 24 && (size_t)i + 5 < len; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		buf[4 + i] = al[x % (sizeof(al) - 1)];
	}
	buf[4 + i] = '\0';
	*seed = x;
}

/* -F: n done events; 0, or -1 after printing the store's error. */
static int
fill(struct store *st, long n, size_t body_len)
{
	struct event ev;
	struct store_result res;
	struct store_job job;
	struct store_object o;
	struct store_txn *tx = NULL;
	char err[STORE_ERR_MAX], id[64], oid[64], headers[128];
	char *body = NULL;
	uint64_t seed = 0x9e3779b97f4a7c15ULL ^ (uint64_t)getpid();
	int64_t now = clock_wall_ms(), at;
	double t0 = now_s();
	long i;
	int rc = -1, verdict;

	body = malloc(body_len + 1);
	if (body == NULL)
		goto out;
	snprintf(headers, sizeof(headers), "Stripe-Signature: t=0,v1=%064d\n",
	    0);
	memset(&job, 0, sizeof(job));
	for (i = 0; i < n; i++) {
		if (tx == NULL && store_begin(st, STORE_RELAXED, &tx, err,
		    sizeof(err)) != IH_OK)
			goto fail;
		random_id(id, sizeof(id), &seed);
		random_id(oid + 1, sizeof(oid) - 1, &seed);
		memcpy(oid, "pi_", 3);	/* over "evt" of "evt_" */
		memset(&ev, 0, sizeof(ev));
		ev.provider = "stripe";
		ev.event_type = "invoice.paid";
		ev.event_id = id;
		ev.headers = headers;
		ev.payload = (const unsigned char *)body;
		ev.payload_len = make_body(body, body_len, id);
		at = now - (n - i) * 1000;
		if (store_record_claim(st, tx, &ev, at, "fill", 60000, &res,
		    &job, err, sizeof(err)) != IH_OK)
			goto fail;
		memset(&o, 0, sizeof(o));
		o.provider = "stripe";
		o.kind = "payment_intent";
		o.object_id = oid;
		o.status = "succeeded";
		o.json = "{\"object\":\"payment_intent\"}";
		o.json_len = strlen(o.json);
		o.source_ms = at;
		o.event_id = id;
		o.event_type = ev.event_type;
		if (!res.duplicate && store_object_apply(st, tx, &o, at + 4,
		    &verdict, err, sizeof(err)) != IH_OK)
			goto fail;
		if (!res.duplicate && store_complete(st, tx, &job, "fill",
		    at + 5, err, sizeof(err)) != IH_OK)
			goto fail;
		store_job_free(&job);
		if ((i + 1) % FILL_BATCH == 0 || i + 1 == n) {
			if (store_commit(tx, err, sizeof(err)) != IH_OK) {
				tx = NULL;
				goto fail;
			}
			tx = NULL;
		}
		if ((i + 1) % 100000 == 0)
			fprintf(stderr, "store_ceiling: %ld of %ld events, "
			    "%.0f s\n", i + 1, n, now_s() - t0);
	}
	printf("filled=%ld seconds=%.1f\n", n, now_s() - t0);
	rc = 0;
	goto out;
fail:
	fprintf(stderr, "store_ceiling: fill: %s\n", err);
	store_job_free(&job);
	store_rollback(tx);
out:
	free(body);
	return rc;
}

static void
usage(void)
{
	fprintf(stderr, "usage: store_ceiling [-c] [-F events] "
	    "[-s FULL|NORMAL|SHARED] [-t seconds] [-b bytes] [-P procs] "
	    "db\n");
	exit(2);
}

int
main(int argc, char *argv[])
{
	struct store_opts opts;
	struct store *st = NULL;
	char err[STORE_ERR_MAX];
	int pfd[2], c, sync = 2, status, failed = 0, create_only = 0;
	long seconds = 3, body_len = 2048, procs = 1, i, n, total = 0;
	long nfill = 0;
	double t0, el;
	pid_t pid;

	while ((c = getopt(argc, argv, "cF:s:t:b:P:")) != -1) {
		switch (c) {
		case 'c':
			create_only = 1;
			break;
		case 'F':
			if (parse_num(optarg, 1, FILL_MAX, &nfill) != 0)
				usage();
			break;
		case 's':
			if (strcasecmp(optarg, "FULL") == 0)
				sync = 2;
			else if (strcasecmp(optarg, "NORMAL") == 0)
				sync = 1;
			else if (strcasecmp(optarg, "SHARED") == 0)
				sync = 3;
			else
				usage();
			break;
		case 't':
			if (parse_num(optarg, 1, 3600, &seconds) != 0)
				usage();
			break;
		case 'b':
			if (parse_num(optarg, 128, CEIL_MAX_BODY, &body_len)
			    != 0)
				usage();
			break;
		case 'P':
			if (parse_num(optarg, 1, CEIL_MAX_PROCS, &procs) != 0)
				usage();
			break;
		default:
			usage();
		}
	}
	if (optind + 1 != argc)
		usage();

	/* Create and migrate once, so that the timed loops only record. */
	opts.path = argv[optind];
	opts.durable_as = store_durable_as(sync);
	opts.busy_timeout_ms = 5000;
	if (store_open(&opts, &st, err, sizeof(err)) != IH_OK) {
		fprintf(stderr, "store_ceiling: %s\n", err);
		return 1;
	}
	if (nfill > 0) {
		c = fill(st, nfill, (size_t)body_len);
		store_close(st);
		return c == 0 ? 0 : 1;
	}
	store_close(st);
	if (create_only)
		return 0;

	if (pipe(pfd) != 0) {
		perror("store_ceiling: pipe");
		return 1;
	}
	t0 = now_s();
	for (i = 0; i < procs; i++) {
		pid = fork();
		if (pid < 0) {
			perror("store_ceiling: fork");
			return 1;
		}
		if (pid == 0) {
			close(pfd[0]);
			if (run(argv[optind], sync, (double)seconds,
			    (size_t)body_len, (int)i, &n) != 0)
				_exit(1);
			if (write(pfd[1], &n, sizeof(n)) != (ssize_t)sizeof(n))
				_exit(1);
			_exit(0);
		}
	}
	close(pfd[1]);
	while (read(pfd[0], &n, sizeof(n)) == (ssize_t)sizeof(n))
		total += n;
	el = now_s() - t0;
	for (i = 0; i < procs; i++)
		if (wait(&status) < 0 || !WIFEXITED(status) ||
		    WEXITSTATUS(status) != 0)
			failed = 1;
	if (failed)
		return 1;
	printf("events=%ld seconds=%.3f events_per_s=%.0f\n", total, el,
	    (double)total / el);
	return 0;
}
