/*
 * reference.c -- the measured peer of make bench (issue 40): a minimal
 * Stripe receiver of idemhook's own design and nothing more.  Request
 * threads (REF_THREADS, as IDEMHOOK_THREADS' default) read and verify
 * each delivery's signature in parallel and queue it; one writer thread
 * inserts everything queued in one transaction (WAL, synchronous=FULL:
 * one fsync per batch), each event under a unique constraint with its
 * payload, then wakes the requests it carried to answer.  No answer is
 * written before the commit carrying its event is durable.
 *
 * It stores less than idemhook (no headers, attempts, objects, switch,
 * settings or log lines): what it measures is what the design allows for
 * what the provider waits for (verify, record, commit, answer).  Its
 * table is its own ("events", received_at in milliseconds, as make
 * bench counts idemhook's rows), in a store of its own.
 *
 * Settings, read at start (lighttpd's bin-environment): IDEMHOOK_DB, the
 * store's path; IDEMHOOK_STRIPE_SECRET, the signing secret.  Memory: one
 * body buffer per request thread, at most REF_BODY_MAX bytes.  Built
 * only by tests/bench/bench.mk; never part of a release.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sys/stat.h>

#include <fcgiapp.h>
#include <openssl/crypto.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <sqlite3.h>

#define REF_THREADS	8
#define REF_BODY_MAX	(1024 * 1024)
#define REF_TOLERANCE_S	300

enum ref_state { REF_QUEUED, REF_ACCEPTED, REF_DUPLICATE, REF_FAILED };

/* One delivery, on its request thread's stack while it waits. */
struct ref_job {
	const char	*body;
	size_t		 len;
	enum ref_state	 state;
	int		 done;
	struct ref_job	*next;
};

/* The process: set once in main(), then shared under mu. */
struct ref_ctx {
	const char	*secret;
	const char	*db;
	EVP_MAC		*hmac;		/* fetched once */
	pthread_mutex_t	 mu;
	pthread_cond_t	 queued;
	pthread_cond_t	 answered;
	struct ref_job	*head;
	struct ref_job	**tail;
};

/*
 * Checks a Stripe-Signature header (t=..., v1=...) over body: an HMAC
 * of "t.body" with the secret, compared in constant time, within the
 * tolerance.  Returns 1 when one v1 matches, else 0.
 */
static int
ref_verify(const struct ref_ctx *c, const char *hdr, const char *body,
    size_t n)
{
	static const char hexd[] = "0123456789abcdef";
	unsigned char mac[EVP_MAX_MD_SIZE];
	size_t maclen = 0;
	char hex[65], prefix[32], *end, sha[] = "SHA256";
	const char *p, *ts = NULL;
	OSSL_PARAM par[2];
	EVP_MAC_CTX *h = NULL;
	long long t;
	int ok = 0, plen, i;

	if (hdr == NULL || c->secret == NULL)
		goto out;
	for (p = hdr; p != NULL; p = strchr(p, ',')) {
		if (*p == ',')
			p++;
		if (strncmp(p, "t=", 2) == 0)
			ts = p + 2;
	}
	if (ts == NULL)
		goto out;
	errno = 0;
	t = strtoll(ts, &end, 10);
	if (errno != 0 || end == ts || (*end != ',' && *end != '\0') ||
	    llabs((long long)time(NULL) - t) > REF_TOLERANCE_S)
		goto out;
	plen = snprintf(prefix, sizeof(prefix), "%lld.", t);
	if (plen < 0 || (size_t)plen >= sizeof(prefix))
		goto out;
	par[0] = OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, sha,
	    0);
	par[1] = OSSL_PARAM_construct_end();
	h = EVP_MAC_CTX_new(c->hmac);
	if (h == NULL ||
	    EVP_MAC_init(h, (const unsigned char *)c->secret,
	    strlen(c->secret), par) != 1 ||
	    EVP_MAC_update(h, (const unsigned char *)prefix, (size_t)plen) !=
	    1 ||
	    EVP_MAC_update(h, (const unsigned char *)body, n) != 1 ||
	    EVP_MAC_final(h, mac, &maclen, sizeof(mac)) != 1 || maclen != 32)
		goto out;
	for (i = 0; i < 32; i++) {
		hex[2 * i] = hexd[mac[i] >> 4];
		hex[2 * i + 1] = hexd[mac[i] & 15];
	}
	hex[64] = '\0';
	for (p = hdr; p != NULL; p = strchr(p, ',')) {
		if (*p == ',')
			p++;
		if (strncmp(p, "v1=", 3) == 0 && strlen(p + 3) >= 64 &&
		    (p[67] == ',' || p[67] == '\0') &&
		    CRYPTO_memcmp(p + 3, hex, 64) == 0)
			ok = 1;
	}
out:
	EVP_MAC_CTX_free(h);
	return ok;
}

/* Opens the store and compiles the insert.  Returns 0 or -1. */
static int
ref_open(const struct ref_ctx *c, sqlite3 **pdb, sqlite3_stmt **pins)
{
	static const char schema[] =
	    "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"
	    "CREATE TABLE IF NOT EXISTS events(provider TEXT, event_id TEXT,"
	    " event_type TEXT, payload TEXT, received_at INTEGER,"
	    " status TEXT, UNIQUE(provider, event_id))";
	static const char ins[] =
	    "INSERT INTO events VALUES('stripe', json_extract(?1, '$.id'),"
	    " json_extract(?1, '$.type'), ?1,"
	    " CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER),"
	    " 'received') ON CONFLICT DO NOTHING RETURNING 1";
	char dir[4096], *slash;
	int n, rc = -1;

	*pdb = NULL;
	*pins = NULL;
	/* Its folder, as idemhook's receivers make it on first use. */
	n = snprintf(dir, sizeof(dir), "%s", c->db);
	slash = n > 0 && (size_t)n < sizeof(dir) ? strrchr(dir, '/') : NULL;
	if (slash != NULL && slash != dir) {
		*slash = '\0';
		(void)mkdir(dir, 0700);
	}
	if (sqlite3_open(c->db, pdb) != SQLITE_OK ||
	    sqlite3_busy_timeout(*pdb, 5000) != SQLITE_OK ||
	    sqlite3_exec(*pdb, schema, NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(*pdb, ins, -1, pins, NULL) != SQLITE_OK) {
		fprintf(stderr, "reference: store %s: %s\n", c->db,
		    *pdb != NULL ? sqlite3_errmsg(*pdb) : "no memory");
		goto out;
	}
	rc = 0;
out:
	return rc;
}

/* Inserts the batch b in one durable transaction and sets each state. */
static void
ref_record(sqlite3 *db, sqlite3_stmt *ins, struct ref_job *b)
{
	struct ref_job *j;
	int rc, ok;

	ok = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) ==
	    SQLITE_OK;
	for (j = b; ok && j != NULL; j = j->next) {
		sqlite3_bind_text(ins, 1, j->body, (int)j->len, SQLITE_STATIC);
		rc = sqlite3_step(ins);
		j->state = rc == SQLITE_ROW ? REF_ACCEPTED :
		    rc == SQLITE_DONE ? REF_DUPLICATE : REF_FAILED;
		while (rc == SQLITE_ROW)
			rc = sqlite3_step(ins);
		sqlite3_reset(ins);
	}
	if (!ok || sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
		for (j = b; j != NULL; j = j->next)
			j->state = REF_FAILED;
	}
}

static void *
ref_writer(void *arg)
{
	struct ref_ctx *c = arg;
	struct ref_job *b, *j, *next;
	sqlite3_stmt *ins = NULL;
	sqlite3 *db = NULL;
	int usable;

	usable = ref_open(c, &db, &ins) == 0;
	for (;;) {
		pthread_mutex_lock(&c->mu);
		while (c->head == NULL)
			pthread_cond_wait(&c->queued, &c->mu);
		b = c->head;
		c->head = NULL;
		c->tail = &c->head;
		pthread_mutex_unlock(&c->mu);
		if (usable)
			ref_record(db, ins, b);
		pthread_mutex_lock(&c->mu);
		for (j = b; j != NULL; j = next) {
			next = j->next;
			if (!usable)
				j->state = REF_FAILED;
			j->done = 1;
		}
		pthread_cond_broadcast(&c->answered);
		pthread_mutex_unlock(&c->mu);
	}
	return NULL;
}

static void
ref_answer(FCGX_Request *r, int code, const char *extra, const char *body)
{
	FCGX_FPrintF(r->out, "Status: %d\r\n%sContent-Type: application/json"
	    "\r\n\r\n%s\n", code, extra, body);
}

/* One delivery: read, verify, queue, wait for its commit, answer. */
static void
ref_serve(struct ref_ctx *c, FCGX_Request *r, char *body)
{
	const char *m, *cl, *sig;
	struct ref_job j;
	long long n;
	char *end;
	int got;

	m = FCGX_GetParam("REQUEST_METHOD", r->envp);
	cl = FCGX_GetParam("CONTENT_LENGTH", r->envp);
	if (m == NULL || strcmp(m, "POST") != 0) {
		ref_answer(r, 405, "", "{}");
		return;
	}
	errno = 0;
	n = cl != NULL ? strtoll(cl, &end, 10) : -1;
	if (cl == NULL || errno != 0 || end == cl || *end != '\0' || n < 0 ||
	    n > REF_BODY_MAX) {
		ref_answer(r, 413, "", "{}");
		return;
	}
	got = FCGX_GetStr(body, (int)n, r->in);
	sig = FCGX_GetParam("HTTP_STRIPE_SIGNATURE", r->envp);
	if (got != (int)n || !ref_verify(c, sig, body, (size_t)got)) {
		ref_answer(r, 401, "", "{}");
		return;
	}
	memset(&j, 0, sizeof(j));
	j.body = body;
	j.len = (size_t)got;
	pthread_mutex_lock(&c->mu);
	*c->tail = &j;
	c->tail = &j.next;
	pthread_cond_signal(&c->queued);
	while (!j.done)
		pthread_cond_wait(&c->answered, &c->mu);
	pthread_mutex_unlock(&c->mu);
	if (j.state == REF_ACCEPTED)
		ref_answer(r, 200, "", "{\"status\":\"accepted\"}");
	else if (j.state == REF_DUPLICATE)
		ref_answer(r, 200, "", "{\"status\":\"duplicate\"}");
	else
		ref_answer(r, 503, "Retry-After: 5\r\n", "{}");
}

static void *
ref_requests(void *arg)
{
	struct ref_ctx *c = arg;
	FCGX_Request r;
	char *body;

	body = malloc(REF_BODY_MAX + 1);
	if (body == NULL || FCGX_InitRequest(&r, 0, 0) != 0)
		goto out;
	while (FCGX_Accept_r(&r) >= 0) {
		ref_serve(c, &r, body);
		FCGX_Finish_r(&r);
	}
out:
	free(body);
	return NULL;
}

int
main(void)
{
	pthread_t w, th[REF_THREADS];
	struct ref_ctx c;
	sigset_t set;
	int sig, n = 0, rc = 1;

	memset(&c, 0, sizeof(c));
	c.secret = getenv("IDEMHOOK_STRIPE_SECRET");
	c.db = getenv("IDEMHOOK_DB");
	c.tail = &c.head;
	c.hmac = EVP_MAC_fetch(NULL, "HMAC", NULL);
	if (c.db == NULL || c.hmac == NULL || FCGX_IsCGI()) {
		fprintf(stderr, "reference: FastCGI only, with IDEMHOOK_DB\n");
		goto out;
	}
	/* Stopped by a signal, it returns from main(): a profiler's totals
	 * are written at exit. */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	pthread_mutex_init(&c.mu, NULL);
	pthread_cond_init(&c.queued, NULL);
	pthread_cond_init(&c.answered, NULL);
	if (FCGX_Init() != 0 ||
	    pthread_create(&w, NULL, ref_writer, &c) != 0)
		goto out;
	for (n = 0; n < REF_THREADS; n++)
		if (pthread_create(&th[n], NULL, ref_requests, &c) != 0)
			break;
	if (n > 0 && sigwait(&set, &sig) == 0)
		rc = 0;
out:
	return rc;
}
