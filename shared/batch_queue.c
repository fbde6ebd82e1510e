/* batch_queue.c -- the writer threads of a FastCGI program (batch.h). */
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "batch.h"
#include "clock.h"
#include "ih.h"
#include "ingest.h"
#include "log.h"
#include "provider.h"
#include "settings.h"
#include "sigfail_pend.h"
#include "store.h"

/*
 * One queued delivery, on its request thread's stack.  A commit wakes
 * the requests it carried and no other, each by its thread's semaphore
 * (in->recorded), posted after the queue's lock is released: a thread
 * woken while the writer holds the lock would only sleep again on it.
 * The writer touches no node once it has taken them from the queue.
 */
struct batch_node {
	struct ingest		*in;
	struct batch_node	*next;
	int			 pg;	/* to a PostgreSQL store */
};

static void	*writer_main(void *arg);

/* Can writer i take what heads the queue?  Called under b->mu. */
static int
takes(const struct batch *b, int i)
{
	return b->head != NULL && (i == 0 || b->head->pg);
}

/*
 * Under b->mu: starts writer i (the next one).  It inherits no stop
 * signal (those land on a request thread, whose accept they interrupt)
 * and no SIGALRM, which only writer 0's store may take.
 */
static int
start_writer(struct batch *b, int i)
{
	sigset_t set, old;
	int rc;

	sigemptyset(&set);
	sigaddset(&set, SIGALRM);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	rc = pthread_create(&b->slots[i].thread, NULL, writer_main,
	    &b->slots[i]);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0)
		return IH_ENOMEM;
	b->nstarted = i + 1;
	return IH_OK;
}

/*
 * Under b->mu: wakes an idle writer that can take what heads the queue,
 * or, for a PostgreSQL store when every started writer is busy, starts
 * one more (up to nwriters).  A busy writer takes the rest itself when
 * it is done.
 */
static void
kick(struct batch *b)
{
	int i;

	if (b->head == NULL || b->stop)
		return;
	for (i = 0; i < b->nstarted; i++) {
		if (!b->slots[i].idle || b->slots[i].lent || !takes(b, i))
			continue;
		b->slots[i].idle = 0;
		pthread_cond_signal(&b->slots[i].wake);
		return;
	}
	if (b->head->pg && b->nstarted < b->nwriters && !b->start_failed &&
	    start_writer(b, b->nstarted) != IH_OK) {
		log_emit(NULL, "provider=%s cannot start writer thread %d: "
		    "the others record", b->slots[0].w.p->name,
		    b->nstarted + 1);
		/* Said once: every later delivery would try and log again. */
		b->start_failed = 1;
	}
}

/* Writer 0 (or a thread it is lent to) takes SIGALRM or leaves it. */
static void
alarm_mask(const struct batch_slot *s, int how)
{
	sigset_t set;

	if (s->i != 0)
		return;
	sigemptyset(&set);
	sigaddset(&set, SIGALRM);
	pthread_sigmask(how, &set, NULL);
}

/*
 * Writer 0, under b->mu: waits to be woken, or, with refused signatures
 * counted, until they are due.
 */
static void
writer_wait(struct batch *b, struct batch_slot *s)
{
	struct timespec ts;
	int64_t due = s->i == 0 ? sigfail_pend_due(&b->pend) : 0;

	/* Idle, writer 0 leaves SIGALRM to a thread it lends itself to. */
	alarm_mask(s, SIG_BLOCK);
	if (due == 0)
		pthread_cond_wait(&s->wake, &b->mu);
	else {
		ts.tv_sec = (time_t)(due / 1000);
		ts.tv_nsec = (long)(due % 1000) * 1000000L;
		(void)pthread_cond_timedwait(&s->wake, &b->mu, &ts);
	}
	alarm_mask(s, SIG_UNBLOCK);
}

/*
 * Writer 0, under b->mu: adds the refused signatures counted to their
 * stores when they are due (or the process stops), with its own
 * connection, the lock released meanwhile.
 */
static void
writer_sigfails(struct batch *b, struct batch_slot *s)
{
	struct sigfail_pend out;
	int64_t due;

	if (s->i != 0)
		return;
	due = sigfail_pend_due(&b->pend);
	if (due == 0 || (!b->stop && clock_wall_ms() < due))
		return;
	sigfail_pend_take(&b->pend, &out);
	pthread_mutex_unlock(&b->mu);
	sigfail_pend_flush(&out, &s->w.slot, log_dest_sink(&s->w.logd,
	    &log_stderr));
	pthread_mutex_lock(&b->mu);
}

static void *
writer_main(void *arg)
{
	struct batch_slot *s = arg;
	struct batch *b = s->b;
	struct ingest *ins[BATCH_MAX];
	struct batch_node *node;
	sigset_t set;
	size_t i, n;

	/* The store's queue times its wait with SIGALRM, in writer 0. */
	if (s->i == 0) {
		sigemptyset(&set);
		sigaddset(&set, SIGALRM);
		pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	}
	pthread_mutex_lock(&b->mu);
	for (;;) {
		/* Lent, its connection is the borrower's alone. */
		while ((!takes(b, s->i) && !b->stop) || s->lent) {
			s->idle = 1;
			writer_wait(b, s);
			s->idle = 0;
			if (!s->lent)
				writer_sigfails(b, s);
		}
		if (!takes(b, s->i)) {
			writer_sigfails(b, s);
			break;
		}
		/*
		 * Everything queued that this writer may take, up to
		 * BATCH_MAX, goes in this commit.
		 */
		n = 0;
		for (node = b->head; node != NULL && n < BATCH_MAX &&
		    (s->i == 0 || node->pg); node = node->next)
			ins[n++] = node->in;
		b->head = node;
		if (node == NULL)
			b->tail = NULL;
		kick(b);
		pthread_mutex_unlock(&b->mu);
		batch_record(&s->w, ins, n);
		for (i = 0; i < n; i++)
			sem_post(&ins[i]->recorded);
		pthread_mutex_lock(&b->mu);
		/* Recorded: no longer counted by may_borrow(). */
		b->inflight -= (int)n;
		writer_sigfails(b, s);
	}
	pthread_mutex_unlock(&b->mu);
	return NULL;
}

/* IDEMHOOK_PG_WRITERS from the start-up environment, or the default. */
static int
writer_count(struct settings *s)
{
	return (int)settings_startup_count(s, "IDEMHOOK_PG_WRITERS",
	    BATCH_WRITERS_MAX, BATCH_PG_WRITERS_DEFAULT);
}

int
batch_start(struct batch *b, const struct provider *p,
    struct processing *proc, struct settings *s)
{
	int i, rc;

	memset(b, 0, sizeof(*b));
	sigfail_pend_init(&b->pend);
	b->nwriters = writer_count(s);
	pthread_mutex_init(&b->mu, NULL);
	for (i = 0; i < b->nwriters; i++) {
		b->slots[i].b = b;
		b->slots[i].i = i;
		batch_writer_init(&b->slots[i].w, p, proc);
		pthread_cond_init(&b->slots[i].wake, NULL);
	}
	pthread_mutex_lock(&b->mu);
	rc = start_writer(b, 0);
	pthread_mutex_unlock(&b->mu);
	return rc;
}

/*
 * Under b->mu: may node's request thread record it itself (batch.h)?
 * Nothing queued keeps the order; an idle writer 0 is not between two
 * batches; a PostgreSQL store keeps its writers (their connections).
 */
static int
may_borrow(const struct batch *b, const struct batch_node *node)
{
	const struct batch_slot *s = &b->slots[0];

	return b->inflight == 1 && !node->pg && b->head == NULL &&
	    b->nstarted > 0 && s->idle && !s->lent && !b->stop;
}

/*
 * Under b->mu (released meanwhile): records in with writer 0's
 * connection on this thread, then wakes writer 0 for what queued.
 */
static void
borrow(struct batch *b, struct ingest *in)
{
	struct batch_slot *s = &b->slots[0];

	s->lent = 1;
	pthread_mutex_unlock(&b->mu);
	alarm_mask(s, SIG_UNBLOCK);
	batch_record(&s->w, &in, 1);
	alarm_mask(s, SIG_BLOCK);
	pthread_mutex_lock(&b->mu);
	s->lent = 0;
	kick(b);
}

void
batch_submit(struct batch *b, struct ingest *in)
{
	struct batch_node node;

	node.in = in;
	node.next = NULL;
	node.pg = store_is_postgres(in->cfg.db_path);
	pthread_mutex_lock(&b->mu);
	if (may_borrow(b, &node)) {
		borrow(b, in);
		b->inflight--;
		pthread_mutex_unlock(&b->mu);
		return;
	}
	if (b->tail != NULL)
		b->tail->next = &node;
	else
		b->head = &node;
	b->tail = &node;
	kick(b);
	pthread_mutex_unlock(&b->mu);
	/* Posted once, when the commit carrying it is over (batch.h). */
	while (sem_wait(&in->recorded) != 0)
		;
}

void
batch_arrive(struct batch *b)
{
	pthread_mutex_lock(&b->mu);
	b->inflight++;
	pthread_mutex_unlock(&b->mu);
}

void
batch_leave(struct batch *b)
{
	pthread_mutex_lock(&b->mu);
	b->inflight--;
	pthread_mutex_unlock(&b->mu);
}

void
batch_sigfail(struct batch *b, const struct config *cfg,
    const char *provider)
{
	int first;

	pthread_mutex_lock(&b->mu);
	first = sigfail_pend_due(&b->pend) == 0;
	sigfail_pend_add(&b->pend, cfg, provider, clock_wall_ms());
	/* An idle writer 0 sets its timer for the new counts. */
	if (first && b->nstarted > 0)
		pthread_cond_signal(&b->slots[0].wake);
	pthread_mutex_unlock(&b->mu);
}

void
batch_end(struct batch *b)
{
	int i;

	pthread_mutex_lock(&b->mu);
	b->stop = 1;
	for (i = 0; i < b->nstarted; i++)
		pthread_cond_signal(&b->slots[i].wake);
	pthread_mutex_unlock(&b->mu);
	/* No writer starts once stop is set. */
	for (i = 0; i < b->nstarted; i++)
		pthread_join(b->slots[i].thread, NULL);
	for (i = 0; i < b->nwriters; i++) {
		batch_writer_free(&b->slots[i].w);
		pthread_cond_destroy(&b->slots[i].wake);
	}
	sigfail_pend_free(&b->pend);
	pthread_mutex_destroy(&b->mu);
}
