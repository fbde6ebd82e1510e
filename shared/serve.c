/* serve.c -- the accept loop: threads on FCGX_Accept_r, or one CGI request. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fcgiapp.h>

#include "batch.h"
#include "config.h"
#include "dispatch.h"
#include "harden.h"
#include "ih.h"
#include "ingest.h"
#include "io.h"
#include "log.h"
#include "processing.h"
#include "provider.h"
#include "serve.h"
#include "settings.h"
#include "store.h"

extern char **environ;

/* How often, at most, an accepted delivery asks for a drain of retries. */
#define SERVE_POLL_MS		1000

struct serve {
	const struct provider	*p;
	struct settings		 settings;
	struct processing	 proc;		/* FastCGI only */
	struct batch		 batch;		/* FastCGI only */
	struct batch_writer	 cgi;		/* plain CGI only */
	int			 fcgi;
};

/* The request's body becomes the job's payload: no copy, no read-back. */
static void
job_take_body(struct ingest *in)
{
	if (in->job.rowid <= 0 || in->job.payload != NULL)
		return;
	in->job.payload = in->req.body;
	in->job.payload_len = in->req.body_len;
	in->req.body = NULL;
	in->req.body_cap = 0;
	in->req.body_len = 0;
}

/*
 * After the answer: the claimed job goes to the processing thread (or,
 * under CGI, runs here with a few due events), so that the provider has
 * its answer first.
 */
static void
after_answer(struct serve *sv, struct ingest *in)
{
	struct dispatch d;
	char owner[128];

	if (!in->later) {
		if (sv->fcgi && in->out.name != NULL &&
		    strcmp(in->out.name, "accepted") == 0 &&
		    in->cfg.mode == CONFIG_MODE_AFTER_RESPONSE)
			processing_poll(&sv->proc, &in->cfg, SERVE_POLL_MS);
		return;
	}
	in->io.finish(&in->io);
	job_take_body(in);
	if (sv->fcgi) {
		(void)processing_hand(&sv->proc, &in->cfg, &in->job,
		    in->owner[0] != '\0' ? in->owner : NULL);
		return;
	}
	if (in->job.rowid > 0)
		snprintf(owner, sizeof(owner), "%s", in->owner);
	else
		dispatch_owner(owner, sizeof(owner));
	d.st = sv->cgi.slot.st;
	d.p = sv->p;
	d.cfg = &in->cfg;
	d.owner = owner;
	d.log = log_dest_sink(&sv->cgi.logd, &log_stderr);
	if (d.st != NULL)
		processing_here(&d, &in->job, PROCESSING_DRAIN);
}

static void
serve_one(struct serve *sv, struct ingest *in, const struct io *io)
{
	ingest_begin(in, io);
	in->owner[0] = '\0';
	if (ingest_read(in)) {
		if (sv->fcgi)
			batch_submit(&sv->batch, in);
		else
			batch_record(&sv->cgi, &in, 1);
	}
	ingest_answer(in);
	after_answer(sv, in);
	ingest_end(in);
}

static void *
request_thread(void *arg)
{
	struct serve *sv = arg;
	FCGX_Request fx;
	struct ingest *in;
	struct io io;
	int rc;

	in = malloc(sizeof(*in));
	if (in == NULL || ingest_init(in, sv->p, &sv->settings) != IH_OK ||
	    FCGX_InitRequest(&fx, 0, 0) != 0) {
		log_emit(NULL, "provider=%s request thread cannot start",
		    sv->p->name);
		if (in != NULL)
			ingest_free(in);
		free(in);
		return NULL;
	}
	for (;;) {
		/*
		 * Every idle thread waits in accept(2) itself: Linux wakes one
		 * per connection, and libfcgi serialises with its own lock.
		 */
		rc = FCGX_Accept_r(&fx);
		if (rc < 0)
			break;
		io_fcgi(&io, &fx);
		serve_one(sv, in, &io);
		/* Now, not at the next accept: another thread may take it. */
		FCGX_Finish_r(&fx);
	}
	FCGX_Free(&fx, 1);
	ingest_free(in);
	free(in);
	return NULL;
}

/* IDEMHOOK_THREADS from the start-up environment, or the default. */
static long
thread_count(const struct serve *sv)
{
	const char *v;
	char *end;
	long n;

	v = config_vars_get((void *)&sv->settings.env, "IDEMHOOK_THREADS");
	if (v == NULL || *v == '\0')
		return SERVE_THREADS_DEFAULT;
	errno = 0;
	n = strtol(v, &end, 10);
	if (errno != 0 || *end != '\0' || n < 1 || n > SERVE_THREADS_MAX) {
		log_emit(NULL, "provider=%s IDEMHOOK_THREADS=%.20s: not 1 to "
		    "%d; using %d", sv->p->name, v, SERVE_THREADS_MAX,
		    SERVE_THREADS_DEFAULT);
		return SERVE_THREADS_DEFAULT;
	}
	return n;
}

/* The threads of a FastCGI program; returns when accepting fails. */
static int
serve_fcgi(struct serve *sv)
{
	pthread_t threads[SERVE_THREADS_MAX];
	sigset_t set;
	long i, n, started = 0;

	if (FCGX_Init() != 0) {
		log_emit(NULL, "provider=%s cannot start FastCGI",
		    sv->p->name);
		return 1;
	}
	/* Only the writer's store times its queue with SIGALRM. */
	sigemptyset(&set);
	sigaddset(&set, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	processing_init(&sv->proc, sv->p);
	if (batch_start(&sv->batch, sv->p, &sv->proc) != IH_OK) {
		log_emit(NULL, "provider=%s cannot start its writer thread",
		    sv->p->name);
		processing_end(&sv->proc);
		return 1;
	}
	n = thread_count(sv);
	for (i = 1; i < n; i++) {
		if (pthread_create(&threads[started], NULL, request_thread,
		    sv) != 0)
			break;
		started++;
	}
	request_thread(sv);
	/*
	 * The listening socket is gone: the other threads fail their
	 * accept too.  What is queued is recorded before the writer stops.
	 */
	for (i = 0; i < started; i++)
		pthread_join(threads[i], NULL);
	batch_end(&sv->batch);
	processing_end(&sv->proc);
	return 0;
}

int
serve_main(const struct provider *p)
{
	struct serve sv;
	struct ingest *in = NULL;
	struct io io;
	char err[256];
	int rc = 1;

	/* Before any secret is in memory: no core file, no ptrace. */
	if (harden_process(err, sizeof(err)) != IH_OK)
		log_emit(NULL, "provider=%s cannot disable core dumps: %s",
		    p->name, err);
	memset(&sv, 0, sizeof(sv));
	sv.p = p;
	signal(SIGPIPE, SIG_IGN);
	if (settings_init(&sv.settings, p, environ) != IH_OK) {
		log_emit(NULL, "provider=%s cannot start: out of memory",
		    p->name);
		goto out;
	}
	if (!FCGX_IsCGI()) {
		sv.fcgi = 1;
		rc = serve_fcgi(&sv);
		goto out;
	}
	in = malloc(sizeof(*in));
	if (in == NULL || ingest_init(in, p, &sv.settings) != IH_OK) {
		log_emit(NULL, "provider=%s cannot start: out of memory",
		    p->name);
		goto out;
	}
	batch_writer_init(&sv.cgi, p, NULL);
	io_cgi(&io);
	serve_one(&sv, in, &io);
	batch_writer_free(&sv.cgi);
	rc = 0;
out:
	if (in != NULL)
		ingest_free(in);
	free(in);
	settings_free(&sv.settings);
	return rc;
}
