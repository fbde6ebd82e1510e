/*
 * processing.h -- processing after the answer, in a FastCGI program's
 * thread of its own, with its own store connection, so that a slow
 * action never delays the next answer.
 *
 * The request threads hand it the job they claimed while recording (a
 * job and its settings, both moved), or only a note that events were
 * recorded for it to find.  It runs one batch at a time: the handed job,
 * then due events of the provider (retries whose time has come, leases
 * left by a crashed process, events recorded while it was busy) until
 * none is left or the drain limit is reached.  While it is busy, a hand
 * with a claimed job is queued (its lease is held: it must run), and a
 * hand without one adds to what it drains next.  A plain CGI program
 * runs the same batch itself after its answer (processing_here()).
 */
#ifndef IH_PROCESSING_H
#define IH_PROCESSING_H

#include <pthread.h>

#include "config.h"
#include "dispatch.h"
#include "forward.h"
#include "log.h"
#include "settings.h"
#include "store.h"

/* Other due events processed after each handed job. */
#define PROCESSING_DRAIN	4
/* processing_here()'s drain: every due event (a plain CGI slot holder). */
#define PROCESSING_DRAIN_ALL	(-1)

/* A handed job with its settings and lease holder, queued for the thread. */
struct processing_item {
	struct config		 cfg;
	struct store_job	 job;		/* claimed, or rowid 0 */
	char			 owner[128];
	struct processing_item	*next;
};

struct processing {
	pthread_mutex_t		 mu;
	pthread_cond_t		 cv;
	pthread_t		 thread;
	int			 started;	/* the thread exists */
	int			 busy;		/* a batch is handed or runs */
	long			 more;		/* events recorded while busy */
	int			 stop;
	int64_t			 last_ms;	/* the last hand, for polls */
	const struct provider	*p;
	/* Handed and not yet taken: claimed jobs are never dropped. */
	struct processing_item	*head;
	struct processing_item	*tail;
	/* Used by the thread only. */
	struct settings_store	 slot;
	struct log_dest		 logd;		/* IDEMHOOK_LOG */
	struct forward_pause	 pause;		/* writers' too (forward.h) */
};

void	processing_init(struct processing *w, const struct provider *p);
/* Lets the thread end its batch, then stops it and frees w. */
void	processing_end(struct processing *w);

/* Is the thread free to take a job now (claim one for it)? */
int	processing_idle(struct processing *w);

/*
 * Hands the thread job (rowid 0: none, only drain) with its settings,
 * both moved, and its lease holder (NULL: a new one for the drain),
 * starting the thread on first use.
 * Returns 0 when the thread cannot be started or the job cannot be
 * queued (out of memory); the job is then left to its lease.
 */
int	processing_hand(struct processing *w, struct config *cfg,
	    struct store_job *job, const char *owner);

/*
 * A hand with no job at most once per interval_ms, so that retries
 * whose time has come run without a cron job while events need no hand
 * of their own.  cfg is moved when handed.
 */
void	processing_poll(struct processing *w, struct config *cfg,
	    int64_t interval_ms);

/*
 * The batch itself: job (when claimed), then up to drain due events
 * (PROCESSING_DRAIN_ALL: until none is due); a failure of the store is
 * logged to d->log.
 */
void	processing_here(const struct dispatch *d, struct store_job *job,
	    long drain);

#endif
