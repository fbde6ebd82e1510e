/*
 * store_ceiling.c -- the storage ceiling: how many events per second one
 * process can record when each event gets its own durable transaction.
 *
 *	store_ceiling [-s FULL|NORMAL|SHARED] [-t seconds] [-b bytes]
 *	    [-P procs] db
 *	store_ceiling -c db		(create the store, record nothing)
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
 */
#include <sys/wait.h>

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

static void
usage(void)
{
	fprintf(stderr, "usage: store_ceiling [-c] [-s FULL|NORMAL|SHARED] "
	    "[-t seconds] [-b bytes] [-P procs] db\n");
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
	double t0, el;
	pid_t pid;

	while ((c = getopt(argc, argv, "cs:t:b:P:")) != -1) {
		switch (c) {
		case 'c':
			create_only = 1;
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
