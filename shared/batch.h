/*
 * batch.h -- recording deliveries, many per durable commit (group
 * commit), and the writer thread of a FastCGI program.
 *
 * The request threads read and verify in parallel (ingest.h), then each
 * queues its delivery with batch_submit() and waits.  A writer thread,
 * with a recording connection of its own, takes everything queued and
 * records it in one durable transaction, then wakes the requests it
 * carried: none is answered before the commit carrying its event is
 * durable, and what arrives meanwhile goes into the next commit.  A
 * SQLite store has one writer per process; a PostgreSQL store up to
 * IDEMHOOK_PG_WRITERS, whose transactions commit concurrently (struct
 * batch), the unique constraint deciding a duplicate between them.
 *
 * Inside the transaction a delivery that fails is undone alone and
 * answered 503; the others commit.  The run is first recorded with no
 * savepoint each (on SQLite a savepoint is two statements and a copy of
 * every page it writes again: a tenth of an event's instructions; on
 * PostgreSQL its inserts go in one pipeline); a failure (on PostgreSQL
 * a deferred write's, said by the commit) rolls it back and records it
 * again with one savepoint per delivery.  A failed commit of that
 * answers 503 to every delivery it carried.  Duplicates within
 * one batch are duplicates, as across batches: the unique constraint
 * sees the earlier insert of the same transaction.
 *
 * After-response mode: an event that no action matches is processed in
 * the recording transaction (dispatch_within(): the switch, undone alone
 * when it fails, and the move to done), so it costs no second
 * transaction; an event with actions is claimed in its insert when the
 * processing thread is idle, and handed to it after the answer
 * (in->later).  Inline mode records and claims one delivery at a time,
 * in the writer; its actions then run on the request's own thread
 * (batch_inline_run()), with a connection of that thread's, so a slow
 * action holds up only its own answer.  A plain CGI program calls
 * batch_record() and batch_inline_run() itself with its one delivery.
 */
#ifndef IH_BATCH_H
#define IH_BATCH_H

#include <pthread.h>
#include <stddef.h>

#include "ingest.h"
#include "log.h"
#include "processing.h"
#include "settings.h"
#include "sigfail_pend.h"

/* Most deliveries one transaction carries. */
#define BATCH_MAX	64

/*
 * The largest event processed inside its recording transaction.  The
 * switch runs in a savepoint, whose journal (kept in memory) would hold
 * a copy of the event's row as its status changes: a larger event is
 * processed after the answer instead, by the processing thread.
 */
#define BATCH_WITHIN_MAX	(1024 * 1024)

/*
 * The most events with one body held at once (provider.h, hold_replays):
 * past it a repeat is refused with 503 and stored nowhere, so that a
 * captured body replayed under ever new ids cannot fill the store.  A
 * real repeat so refused is shown failed by the provider, and catch-up
 * asks for it again once the held ones are released.
 */
#define BATCH_HELD_SAME_MAX	32

/* Whoever records: the writer thread, or a plain CGI program. */
struct batch_writer {
	const struct provider	*p;
	struct settings_store	 slot;
	struct log_dest		 logd;		/* IDEMHOOK_LOG */
	struct processing	*proc;		/* NULL under plain CGI */
	int			 side;	/* a request thread's, for inline */
	/* Plain CGI without a processing slot (cgi_slot.h): nothing is
	 * claimed, so that the event stays due for a slot's holder. */
	int			 no_claim;
	/* Forwarding's state without a processing thread (forward.h). */
	struct forward_pause	 pause;
	/*
	 * The lease holder's name, host:pid, made once, and the number
	 * that ends the name of each transaction's (writer_owner()).
	 */
	char			 owner_base[96];
	unsigned long		 owner_seq;
};

void	batch_writer_init(struct batch_writer *w, const struct provider *p,
	    struct processing *proc);
void	batch_writer_free(struct batch_writer *w);

/*
 * Records the n deliveries of ins (ready from ingest_read()) and fills
 * each one's out, and its job and later flag for processing after the
 * answer.  n is at most BATCH_MAX.
 */
void	batch_record(struct batch_writer *w, struct ingest **ins, size_t n);

/*
 * Inline mode, after batch_record() or batch_submit() and before the
 * answer: runs the actions of the event claimed for in (in->inline_run)
 * with w's connection, and sets in->out to what they came to.  Does
 * nothing for any other delivery.  w is the request thread's own (side
 * set: its connection leaves the process's writer queue alone), or
 * under plain CGI the program's one writer.
 */
void	batch_inline_run(struct batch_writer *w, struct ingest *in);

struct batch_node;

/*
 * Writer threads per process with a PostgreSQL store when
 * IDEMHOOK_PG_WRITERS is unset, and the most it may ask for.
 */
#define BATCH_PG_WRITERS_DEFAULT	4
#define BATCH_WRITERS_MAX		16

/* One writer thread, with its own connection (batch_queue.c). */
struct batch_slot {
	struct batch		*b;
	int			 i;
	struct batch_writer	 w;
	pthread_cond_t		 wake;		/* it waits for work */
	int			 idle;		/* waiting, not yet woken */
	int			 lent;	/* a request thread records with w */
	pthread_t		 thread;
};

/*
 * The writers of a FastCGI program.  Writer 0 records every delivery,
 * whatever its store.  Deliveries to a PostgreSQL store may also go to
 * writers 1 to nwriters - 1, each with a connection of its own, started
 * when the queue has such deliveries and every started writer is busy:
 * there concurrent commits share PostgreSQL's log flushes, where one
 * connection commits one transaction at a time.  A SQLite store keeps
 * one writer, whose commits another would only wait behind.
 */
struct batch {
	struct batch_slot	 slots[BATCH_WRITERS_MAX];
	int			 nwriters;	/* allowed */
	int			 start_failed;	/* no further writer tried */
	int			 nstarted;	/* threads running */
	pthread_mutex_t		 mu;
	struct batch_node	*head;
	struct batch_node	*tail;
	int			 stop;
	int			 inflight;	/* accepted, not yet recorded */
	/* Refused signatures for writer 0 to add (sigfail_pend.h). */
	struct sigfail_pend	 pend;
};

/*
 * Starts writer 0, which takes SIGALRM for the store's queue while it
 * works (every other thread must block it), and reads
 * IDEMHOOK_PG_WRITERS from the start-up settings s.  Returns IH_OK or
 * IH_ENOMEM.
 */
int	batch_start(struct batch *b, const struct provider *p,
	    struct processing *proc, struct settings *s);

/*
 * A request thread calls batch_arrive() for each request it accepts,
 * and batch_leave() for one that it will not submit (refused before
 * recording): batch_submit() ends the others' count, so that it knows
 * when its delivery is the process's only one still to record.
 */
void	batch_arrive(struct batch *b);
void	batch_leave(struct batch *b);

/*
 * Queues in's delivery and returns once in->out is decided.  The
 * process's only request in flight (mod_fcgid sends a process one at a
 * time) to a SQLite store, with nothing queued and writer 0 idle, is
 * recorded on the calling thread with writer 0's connection instead: a
 * hand-over would cost two thread switches for a batch of one.  The
 * store's queue times its wait with SIGALRM, so the calling thread
 * takes it while it records so (writer 0 only while it works).
 */
void	batch_submit(struct batch *b, struct ingest *in);

/*
 * Counts a refused signature of provider to the store cfg names (a
 * PostgreSQL one), in memory: writer 0 adds the counts to the store
 * later (sigfail_pend.h), so that the refusal costs no connection and
 * no transaction.
 */
void	batch_sigfail(struct batch *b, const struct config *cfg,
	    const char *provider);

/* Records what is queued, then stops the writers and frees b. */
void	batch_end(struct batch *b);

#endif
