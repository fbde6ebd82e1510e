/* serve.c -- the accept loop: threads on FCGX_Accept_r, or one CGI request. */
#include <sys/socket.h>

#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <fcgiapp.h>

#include "batch.h"
#include "cgi_slot.h"
#include "clock.h"
#include "config.h"
#include "dispatch.h"
#include "harden.h"
#include "hub.h"
#include "ih.h"
#include "ingest.h"
#include "io.h"
#include "log.h"
#include "processing.h"
#include "provider.h"
#include "serve.h"
#include "settings.h"
#include "verify.h"
#include "store.h"

extern char **environ;

/* How often, at most, an accepted delivery asks for a drain of retries. */
#define SERVE_POLL_MS		1000

struct serve {
	const struct provider	*p;
	/* The request threads, and which have left their loop. */
	pthread_mutex_t		 mu;
	pthread_t		 threads[SERVE_THREADS_MAX];
	int			 exited[SERVE_THREADS_MAX];
	long			 nthreads;
	long			 want;		/* IDEMHOOK_THREADS */
	struct settings		 settings;
	struct processing	 proc;		/* FastCGI only */
	struct batch		 batch;		/* FastCGI only */
	struct batch_writer	 cgi;		/* plain CGI only */
	struct cgi_slot		 cslot;		/* plain CGI only */
	struct hub		 hub;		/* FastCGI, IDEMHOOK_HUB */
	int			 fcgi;
};

/* The request's body becomes the job's payload: no copy, no read-back. */
static void
job_take_body(struct ingest *in)
{
	/* What was read on receipt stays with the request. */
	in->job.ev.found = NULL;
	if (in->job.ev.rowid <= 0 || in->job.ev.payload != NULL)
		return;
	in->job.ev.payload = in->req.body;
	in->job.ev.payload_len = in->req.body_len;
	in->req.body = NULL;
	in->req.body_cap = 0;
	in->req.body_len = 0;
}

/*
 * Plain CGI, after the answer: detaches from the web server (io.h), so
 * that processing neither holds the answer nor is killed at the server's
 * timeout.  The store is closed across the fork and opened again in the
 * child.  Returns 1 when processing may go on here.
 */
static int
cgi_detach(struct serve *sv, struct ingest *in)
{
	char err[STORE_ERR_MAX];

	settings_store_close(&sv->cgi.slot);
	if (io_cgi_detach(sv->cgi.logd.fd) != IH_OK) {
		log_emit(log_dest_sink(&sv->cgi.logd, &log_stderr),
		    "provider=%s cannot detach from the web server: processing"
		    " before the request ends", sv->p->name);
		in->io.finish(&in->io);
	}
	if (settings_store(&sv->cgi.slot, &in->cfg, err, sizeof(err)) ==
	    IH_OK)
		return 1;
	/* A claimed job waits for its lease to expire. */
	log_emit(log_dest_sink(&sv->cgi.logd, &log_stderr),
	    "provider=%s processing stopped: %s", sv->p->name, err);
	return 0;
}

/*
 * Plain CGI, with no job of its own (its event was processed in the
 * recording transaction): is any event of the provider due?  Asked on
 * the still open store, so that a delivery that leaves nothing to do
 * neither forks nor opens the store again.  A failed look counts as
 * due: the drain then says what is wrong.
 */
static int
cgi_due(struct serve *sv)
{
	char err[STORE_ERR_MAX];
	int due = 1;

	if (sv->cgi.slot.st == NULL ||
	    store_due(sv->cgi.slot.st, sv->p->name, clock_wall_ms(), &due,
	    err, sizeof(err)) != IH_OK)
		return 1;
	return due;
}

/*
 * Plain CGI, before recording an event with actions after the answer:
 * opens the store (the writer keeps it) and takes a processing slot
 * (cgi_slot.h).  With one, the event is claimed
 * in its insert and processed here after the answer; without, it is
 * recorded unclaimed, due for a slot's holder.
 */
static void
cgi_slot_before(struct serve *sv, struct ingest *in)
{
	char err[STORE_ERR_MAX];
	int got;

	if (in->cfg.mode != CONFIG_MODE_AFTER_RESPONSE ||
	    !dispatch_has_actions(&in->cfg, in->ev.event_type))
		return;
	/* The store first: it makes its folder, where the slots are. */
	(void)log_dest_set(&sv->cgi.logd, in->cfg.log, err, sizeof(err));
	if (settings_store(&sv->cgi.slot, &in->cfg, err, sizeof(err)) !=
	    IH_OK)
		return;
	got = cgi_slot_take(&sv->cslot, in->cfg.db_path,
	    in->cfg.cgi_processors, 0, err, sizeof(err));
	sv->cgi.no_claim = got == CGI_SLOT_FULL;
	if (got == CGI_SLOT_NONE && err[0] != '\0')
		log_emit(log_dest_sink(&sv->cgi.logd, &log_stderr),
		    "provider=%s processing not bounded: %s", sv->p->name,
		    err);
}

/*
 * Plain CGI, after the answer: may this process drain?  It holds a slot,
 * or takes one now that its event is committed, or none exists (a
 * PostgreSQL store, an unusable slot file: said).  Without one, work
 * due is marked pending for a holder, and the event waits for it.
 */
static int
cgi_may_process(struct serve *sv, struct ingest *in)
{
	char err[256];
	int got;

	if (sv->cslot.held)
		return 1;
	if (in->job.ev.rowid <= 0 && !cgi_due(sv))
		return 0;
	got = cgi_slot_take(&sv->cslot, in->cfg.db_path,
	    in->cfg.cgi_processors, 1, err, sizeof(err));
	if (got == CGI_SLOT_NONE && err[0] != '\0')
		log_emit(log_dest_sink(&sv->cgi.logd, &log_stderr),
		    "provider=%s processing not bounded: %s", sv->p->name,
		    err);
	if (got == CGI_SLOT_FULL)
		log_emit(log_dest_sink(&sv->cgi.logd, &log_stderr),
		    "provider=%s all %ld processing slots taken "
		    "(IDEMHOOK_CGI_PROCESSORS): left to their holders",
		    sv->p->name, in->cfg.cgi_processors);
	return got != CGI_SLOT_FULL;
}

/*
 * Plain CGI, after the answer: the claimed job and every due event,
 * detached from the web server, then as long as the slot's gate says
 * that a delivery found every slot taken meanwhile, again.
 */
static void
cgi_process(struct serve *sv, struct ingest *in)
{
	struct dispatch d;
	char owner[128], err[STORE_ERR_MAX];
	int detached = 0;

	if (!cgi_may_process(sv, in))
		return;
	if (in->job.ev.rowid > 0)
		snprintf(owner, sizeof(owner), "%s", in->owner);
	else
		dispatch_owner(owner, sizeof(owner));
	for (;;) {
		if (in->job.ev.rowid > 0 || cgi_due(sv)) {
			if (!detached && !cgi_detach(sv, in))
				return;
			detached = 1;
			d.st = sv->cgi.slot.st;
			d.p = sv->p;
			d.cfg = &in->cfg;
			d.owner = owner;
			d.pause = NULL;
			d.log = log_dest_sink(&sv->cgi.logd, &log_stderr);
			processing_here(&d, &in->job, sv->cslot.held ?
			    PROCESSING_DRAIN_ALL : PROCESSING_DRAIN);
		}
		/* Closed first: the gate stays locked until the exit. */
		settings_store_close(&sv->cgi.slot);
		if (!cgi_slot_leave(&sv->cslot, in->cfg.db_path))
			return;
		if (settings_store(&sv->cgi.slot, &in->cfg, err,
		    sizeof(err)) != IH_OK) {
			log_emit(log_dest_sink(&sv->cgi.logd, &log_stderr),
			    "provider=%s processing stopped: %s", sv->p->name,
			    err);
			return;
		}
	}
}

/*
 * After the answer: the claimed job goes to the processing thread (or,
 * under CGI, runs here with due events), so that the provider has its
 * answer first.
 */
static void
after_answer(struct serve *sv, struct ingest *in)
{
	if (!sv->fcgi) {
		if (in->later || sv->cslot.held) {
			job_take_body(in);
			cgi_process(sv, in);
		}
		return;
	}
	if (!in->later) {
		if (in->out.name != NULL &&
		    strcmp(in->out.name, "accepted") == 0 &&
		    in->cfg.mode == CONFIG_MODE_AFTER_RESPONSE)
			processing_poll(&sv->proc, &in->cfg, SERVE_POLL_MS);
		return;
	}
	job_take_body(in);
	in->io.finish(&in->io);
	(void)processing_hand(&sv->proc, &in->cfg, &in->job,
	    in->owner[0] != '\0' ? in->owner : NULL);
}

/*
 * One delivery.  own is the request thread's writer (for inline actions,
 * which run here, holding up no other request), or under CGI the one.
 */
static void
serve_one(struct serve *sv, struct ingest *in, const struct io *io,
    struct batch_writer *own)
{
	ingest_begin(in, io);
	in->owner[0] = '\0';
	if (ingest_read(in)) {
		if (sv->fcgi)
			batch_submit(&sv->batch, in);
		else {
			cgi_slot_before(sv, in);
			batch_record(&sv->cgi, &in, 1);
		}
		batch_inline_run(own, in);
	} else if (sv->fcgi) {
		batch_leave(&sv->batch);
		if (in->sigfail)
			batch_sigfail(&sv->batch, &in->cfg, in->p->name);
	}
	ingest_answer(in);
	after_answer(sv, in);
	ingest_end(in);
}

static void	start_threads(struct serve *sv, int from_hub);

/*
 * With the hub on (hub.h), the next connection: from the web server, or
 * in the hub's own threads (from_hub) one another process passed.  A
 * connection passed on is closed here; one served here is handed to
 * libfcgi, which then reads it as if it had accepted it.  Returns
 * FCGX_Accept_r()'s answer, or -1 when the wait was interrupted (the
 * process is stopping).
 */
static int
hub_accept(struct serve *sv, FCGX_Request *fx, int from_hub)
{
	int conn, became;

	for (;;) {
		if (from_hub)
			conn = sv->hub.fd >= 0 ? hub_take(&sv->hub) : -1;
		else
			conn = accept(0, NULL, NULL);
		if (conn < 0) {
			if (!from_hub && errno == ECONNABORTED)
				continue;
			return -1;
		}
		if (!from_hub && hub_pass(&sv->hub, conn, &became)) {
			close(conn);
			continue;
		}
		if (!from_hub && became)
			start_threads(sv, 1);
		fx->ipcFd = conn;
		/* So that FCGX_Accept_r() keeps it instead of closing it. */
		fx->keepConnection = 1;
		/* A connection that fails its start is closed: the next. */
		if (FCGX_Accept_r(fx) == 0)
			return 0;
	}
}

/*
 * The accept loop of one request thread (of the hub's, from_hub).
 * Returns 1 when accepting failed (the process is stopping), 0 when the
 * thread could not start.
 */
static int
accept_loop(struct serve *sv, int from_hub)
{
	FCGX_Request fx;
	struct batch_writer own;
	struct ingest *in;
	struct io io;
	int rc;

	in = malloc(sizeof(*in));
	/* With the hub, libfcgi never accepts: -1 fails its own accept. */
	if (in == NULL || ingest_init(in, sv->p, &sv->settings) != IH_OK ||
	    FCGX_InitRequest(&fx, sv->hub.on ? -1 : 0, 0) != 0) {
		log_emit(NULL, "provider=%s request thread cannot start",
		    sv->p->name);
		if (in != NULL)
			ingest_free(in);
		free(in);
		return 0;
	}
	/* Opens its store only for an inline delivery. */
	batch_writer_init(&own, sv->p, NULL);
	own.side = 1;
	for (;;) {
		/*
		 * Every idle thread waits in accept(2) itself: Linux wakes one
		 * per connection.  SIGTERM or SIGUSR1 (libfcgi's handler sets
		 * its shutdown flag) makes it return -1.
		 */
		rc = sv->hub.on ? hub_accept(sv, &fx, from_hub) :
		    FCGX_Accept_r(&fx);
		if (rc < 0)
			break;
		/* Until it is recorded (batch_submit()) or refused. */
		batch_arrive(&sv->batch);
		io_fcgi(&io, &fx);
		serve_one(sv, in, &io, &own);
		/* Now, not at the next accept: another thread may take it. */
		io_fcgi_end(&fx);
	}
	FCGX_Free(&fx, 1);
	batch_writer_free(&own);
	ingest_free(in);
	free(in);
	return 1;
}

/* Thread i of the request threads (0 is the main thread). */
struct serve_arg {
	struct serve	*sv;
	long		 i;
	int		 from_hub;
};

static void *
request_thread(void *arg)
{
	struct serve_arg *a = arg;
	struct serve *sv = a->sv;
	long i = a->i;
	int from_hub = a->from_hub, stopping;

	free(a);
	stopping = accept_loop(sv, from_hub);
	pthread_mutex_lock(&sv->mu);
	sv->exited[i] = 1;
	pthread_mutex_unlock(&sv->mu);
	/* The main thread stops the others; it may be waiting in accept. */
	if (stopping)
		pthread_kill(sv->threads[0], SIGUSR1);
	return NULL;
}

/*
 * The process is stopping (its accept failed): interrupts the accept of
 * every request thread still in its loop, again until all have left it
 * (a signal that lands just before accept(2) is lost), then joins them.
 */
static void
stop_threads(struct serve *sv)
{
	struct timespec nap = { 0, 50 * 1000 * 1000 };
	long i, left, tries;

	for (tries = 0; tries < 100; tries++) {
		left = 0;
		pthread_mutex_lock(&sv->mu);
		for (i = 1; i < sv->nthreads; i++) {
			if (sv->exited[i])
				continue;
			left++;
			pthread_kill(sv->threads[i], SIGUSR1);
		}
		pthread_mutex_unlock(&sv->mu);
		if (left == 0)
			break;
		nanosleep(&nap, NULL);
	}
	for (i = 1; i < sv->nthreads; i++)
		if (sv->exited[i])
			pthread_join(sv->threads[i], NULL);
}

/* IDEMHOOK_THREADS from the start-up environment, or the default. */
static long
thread_count(struct serve *sv)
{
	return settings_startup_count(&sv->settings, "IDEMHOOK_THREADS",
	    SERVE_THREADS_MAX, SERVE_THREADS_DEFAULT);
}

/*
 * Two malloc arenas for the process's threads.  glibc gives each thread
 * an arena of its own, which keeps the high-water mark of what that
 * thread ever held: with 8 request threads, the writer and the
 * processing thread, stripe at 16 connections held 5.6 MiB private;
 * with two arenas 3.9-4.0 MiB (one: 3.7 MiB, but about 4% more CPU per
 * event, from threads waiting on its lock).  An operator's
 * MALLOC_ARENA_MAX is left to win.
 */
static void
few_arenas(void)
{
#ifdef M_ARENA_MAX
	if (getenv("MALLOC_ARENA_MAX") == NULL)
		(void)mallopt(M_ARENA_MAX, 2);
#endif
}

/*
 * The request threads besides the main one (from_hub 0), or the hub's
 * (1), up to IDEMHOOK_THREADS each.  Called by the main thread, or by
 * the request thread whose process has just become the hub.
 */
static void
start_threads(struct serve *sv, int from_hub)
{
	struct serve_arg *a;
	long i;

	pthread_mutex_lock(&sv->mu);
	for (i = from_hub ? 0 : 1; i < sv->want &&
	    sv->nthreads < SERVE_THREADS_MAX; i++) {
		a = malloc(sizeof(*a));
		if (a == NULL)
			break;
		a->sv = sv;
		a->i = sv->nthreads;
		a->from_hub = from_hub;
		if (pthread_create(&sv->threads[sv->nthreads], NULL,
		    request_thread, a) != 0) {
			free(a);
			break;
		}
		sv->nthreads++;
	}
	pthread_mutex_unlock(&sv->mu);
}

/*
 * The threads of a FastCGI program; returns when accepting fails.  The
 * writer and processing threads block the stop signals, so that they
 * land on a request thread, whose accept they interrupt.
 */
static int
serve_fcgi(struct serve *sv)
{
	sigset_t set, stops;

	if (FCGX_Init() != 0) {
		log_emit(NULL, "provider=%s cannot start FastCGI",
		    sv->p->name);
		return 1;
	}
	few_arenas();
	/* Only the writer's store times its queue with SIGALRM. */
	sigemptyset(&set);
	sigaddset(&set, SIGALRM);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	store_process_init();
	processing_init(&sv->proc, sv->p);
	if (batch_start(&sv->batch, sv->p, &sv->proc, &sv->settings) !=
	    IH_OK) {
		log_emit(NULL, "provider=%s cannot start its writer thread",
		    sv->p->name);
		processing_end(&sv->proc);
		return 1;
	}
	sv->want = thread_count(sv);
	/* The request threads take SIGTERM and SIGUSR1. */
	sigemptyset(&stops);
	sigaddset(&stops, SIGTERM);
	sigaddset(&stops, SIGUSR1);
	pthread_sigmask(SIG_UNBLOCK, &stops, NULL);
	sv->threads[0] = pthread_self();
	sv->nthreads = 1;
	start_threads(sv, 0);
	(void)accept_loop(sv, 0);
	stop_threads(sv);
	/* What is queued is recorded before the writer stops. */
	batch_end(&sv->batch);
	processing_end(&sv->proc);
	return 0;
}

/*
 * IDEMHOOK_HUB from the start-up environment: 1 on, 0 or unset off,
 * anything else said and off.  Only a FastCGI program on a UNIX socket
 * (mod_fcgid's) has a hub.
 */
static int
hub_wanted(const struct provider *p)
{
	const char *v = getenv("IDEMHOOK_HUB");

	if (v == NULL || strcmp(v, "0") == 0 || *v == '\0')
		return 0;
	if (strcmp(v, "1") != 0) {
		log_emit(NULL, "provider=%s IDEMHOOK_HUB=%.20s: not 0 or 1; "
		    "off", p->name, v);
		return 0;
	}
	return !FCGX_IsCGI() && !settings_fd_tcp(0, NULL, 0);
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
	pthread_mutex_init(&sv.mu, NULL);
	signal(SIGPIPE, SIG_IGN);
	/* Named from the whole start-up environment, before its scrub. */
	hub_init(&sv.hub, hub_wanted(p), environ);
	if (settings_init(&sv.settings, p, environ) != IH_OK) {
		log_emit(NULL, "provider=%s cannot start: out of memory",
		    p->name);
		goto out;
	}
	if (!FCGX_IsCGI()) {
		sv.fcgi = 1;
		if (settings_fd_tcp(0, err, sizeof(err)))
			log_emit(NULL, "provider=%s warning: listening on %s: "
			    "anyone who reaches it can send requests; no "
			    "secret is taken from a request here, but prefer "
			    "a UNIX socket (www-config/README.md, "
			    "Configuration)", p->name, err);
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
	cgi_slot_init(&sv.cslot);
	/* One request: OpenSSL's start-up trimmed to it (verify.h). */
	verify_one_shot();
	/* SQLite's memory count: a global lock on each of ~1,500 mallocs. */
	store_process_init();
	io_cgi(&io);
	serve_one(&sv, in, &io, &sv.cgi);
	batch_writer_free(&sv.cgi);
	rc = 0;
out:
	if (in != NULL)
		ingest_free(in);
	free(in);
	settings_free(&sv.settings);
	hub_free(&sv.hub);
	pthread_mutex_destroy(&sv.mu);
	return rc;
}
