/*
 * sigfail_pend.h -- refused signatures a FastCGI receiver with a
 * PostgreSQL store counts in memory, until its writer thread adds them
 * to the store (sigfails, store_health.h).
 *
 * A forged request must cost one HMAC and nothing of the store: no
 * connection, no transaction.  So a request thread only adds to these
 * counts (per store, provider and minute), and writer 0, which holds a
 * connection of its own, adds them to the store at most once per
 * SIGFAIL_FLUSH_MS per process, whatever the number of refusals (and
 * as the process stops).  The alarm (alert.h) and the console see them
 * then.  A SQLite store counts in the file beside it (sigfail.h), and
 * plain CGI keeps no count on PostgreSQL: its process ends with its
 * one request, and a connection per refusal is what this avoids.
 *
 * Not locked: the caller serializes (batch.h holds its mutex).  At most
 * SIGFAIL_PEND_MAX entries are kept; a refusal finding no room is only
 * counted in lost, which the flush logs.  Strings given are copied.
 */
#ifndef IH_SIGFAIL_PEND_H
#define IH_SIGFAIL_PEND_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "log.h"
#include "settings.h"

#define SIGFAIL_PEND_MAX	16
/* Longest a count waits in memory before the writer adds it. */
#define SIGFAIL_FLUSH_MS	20000

struct sigfail_pend_ent {
	char		*db;		/* the store location; NULL: free */
	int		 sync;
	long		 busy;
	char		 provider[16];
	int64_t		 minute;	/* Unix minute */
	long		 count;
};

struct sigfail_pend {
	struct sigfail_pend_ent	 e[SIGFAIL_PEND_MAX];
	int64_t			 first_ms;	/* oldest count; 0: none */
	long			 lost;
};

void	sigfail_pend_init(struct sigfail_pend *sp);
void	sigfail_pend_free(struct sigfail_pend *sp);

/* Counts one refusal of provider to the store cfg names, at now_ms. */
void	sigfail_pend_add(struct sigfail_pend *sp, const struct config *cfg,
	    const char *provider, int64_t now_ms);

/*
 * When the counts are due to be added (Unix ms), or 0 when there are
 * none.
 */
int64_t	sigfail_pend_due(const struct sigfail_pend *sp);

/*
 * Moves every count of sp into out (emptied first), leaving sp empty;
 * out then belongs to the caller, who flushes and frees it.
 */
void	sigfail_pend_take(struct sigfail_pend *sp, struct sigfail_pend *out);

/*
 * Adds the counts of sp to their stores through slot (opening the store
 * there if need be), then frees them.  A failure is logged to log (one
 * line) and the counts are dropped: the deliveries were refused all the
 * same.
 */
void	sigfail_pend_flush(struct sigfail_pend *sp,
	    struct settings_store *slot, const struct log_sink *log);

#endif
