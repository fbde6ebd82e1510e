/*
 * ingest.h -- one delivery, from its request to a recorded outcome and
 * its answer.
 *
 * ingest_read() takes a request through every check that needs no
 * store: settings (settings.h), IDEMHOOK_LOG, the document-root rule,
 * the method, IDEMHOOK_ALLOW_FROM, a configured secret, the signature
 * header, the body under its limit, the provider's verify, the body's
 * digest, its identity (or quarantine), and the kept headers
 * (headers.h).  It ends either with an answer already decided in
 * in->out, or with in->ev ready to record: the batch (batch.h) records
 * it and fills in->out.  ingest_answer() then writes the answer and the
 * delivery's one log line.
 *
 * A struct ingest belongs to one request thread; it keeps its body
 * buffer, JSON parser and IDEMHOOK_LOG destination between requests.
 */
#ifndef IH_INGEST_H
#define IH_INGEST_H

#include <limits.h>
#include <semaphore.h>
#include <time.h>

#include "config.h"
#include "io.h"
#include "log.h"
#include "outcome.h"
#include "provider.h"
#include "request.h"
#include "respond.h"
#include "account.h"
#include "settings.h"
#include "store.h"
#include "verify.h"
#include "version.h"

#define INGEST_HEADERS_MAX	8192
/* How long a document-root verdict holds for the same paths. */
#define INGEST_DOCROOT_MS	1000
/* A sub-account id (Stripe's acct_...): longer or odder ones are not kept. */
#define INGEST_SOURCE_ACCOUNT_MAX	65
/* An order key made of an object (forward.h): kind, ":" and id. */
#define INGEST_ORDER_KEY_MAX	320

struct ingest {
	/* The thread's, kept between deliveries. */
	const struct provider	*p;
	/*
	 * Posted by the writer thread once the delivery it was handed is
	 * recorded (batch_queue.c): the thread's own, so that the writer
	 * wakes it without holding the queue's lock.
	 */
	sem_t			 recorded;
	int			 recorded_ok;	/* sem_init() done */
	struct settings		*settings;
	struct json		*json;
	struct request		 req;
	struct log_dest		 logd;		/* IDEMHOOK_LOG */
	char			 logd_err[256];	/* why it cannot be used */
	/*
	 * The document-root rule's last inputs and verdict: resolving the
	 * paths costs a readlink(2) per path component, so the same inputs
	 * are checked again only after INGEST_DOCROOT_MS.
	 */
	char			 dr_key[2 * PATH_MAX];
	char			 dr_err[STORE_ERR_MAX];
	int			 dr_bad;
	int64_t			 dr_at;	/* clock_mono_ns() of dr_key */
	/*
	 * The settings of this delivery, read by ingest_read(): those of
	 * the last one stay until then, so that unchanged ones are not
	 * copied again (settings_request()).
	 */
	struct config		 cfg;
	/* This delivery's, reset by ingest_begin(). */
	struct io		 io;
	int64_t			 t0;	/* clock_mono_ns() at the start */
	struct ident		 id;
	struct event	 ev;		/* borrows the fields below */
	/* The mapping's object, read on receipt, when found_ok. */
	struct object_found	 found;
	int			 found_ok;
	const char		*quarantine;	/* why, when kept unusable */
	/* The replay check's shared-action line, or "". */
	char			 same_action[REQUEST_HEADER_NAME_MAX + 1024];
	char			 headers[INGEST_HEADERS_MAX];
	char			 fingerprint[VERIFY_SHA256_HEX];
	char			 api_version[VERSION_MAX];	/* or "" */
	char			 source_account[INGEST_SOURCE_ACCOUNT_MAX];
	char			 file_path[PATH_MAX];
	char			 account[ACCOUNT_NAME_MAX + 1];
	/* An object's order key, for forwarding (forward.h), or "". */
	char			 order_key[INGEST_ORDER_KEY_MAX];
	struct outcome		 out;
	/*
	 * Lines of processing done inside the recording transaction, held
	 * until the request's own line is written (and dropped when that
	 * transaction fails), so that the log reads in the order of events.
	 */
	char			 deferred[2 * LOG_LINE_MAX];
	size_t			 deferred_len;
	struct log_sink		 defer;
	/* Claimed in the record, for processing after the answer. */
	struct store_job	 job;
	char			 owner[128];	/* job's lease holder */
	int			 later;		/* process after the answer */
	int			 inline_run;	/* run job before the answer */
	/* A refused signature to count in memory (PostgreSQL: sigfail.h). */
	int			 sigfail;
};

/* Prepares in for p's deliveries.  Returns IH_OK or IH_ENOMEM. */
int	ingest_init(struct ingest *in, const struct provider *p,
	    struct settings *s);
void	ingest_free(struct ingest *in);

/* Starts a delivery read through io. */
void	ingest_begin(struct ingest *in, const struct io *io);

/*
 * Runs the checks above.  Returns 1 when in->ev is ready to record, 0
 * when in->out holds the answer already.
 */
int	ingest_read(struct ingest *in);

/*
 * Writes in->out as the answer and logs the delivery's line.  Under CGI,
 * the rest of the body is read and dropped, as some servers need.
 */
void	ingest_answer(struct ingest *in);

/* The sink that holds lines for ingest_answer() to write after its own. */
const struct log_sink *ingest_deferred(struct ingest *in);
/* Writes the held lines to sink, each as its own line, and forgets them. */
void	ingest_write_deferred(struct ingest *in, const struct log_sink *sink);

/*
 * The job's payload and the request's body: ingest_job_borrow() points a
 * job without a payload at the body, which stays the request's;
 * ingest_job_drop() frees the job without freeing a borrowed body, which
 * the thread's next delivery reuses.
 */
void	ingest_job_borrow(struct ingest *in);
void	ingest_job_drop(struct ingest *in);

/* Ends the delivery: frees what ingest_begin() started. */
void	ingest_end(struct ingest *in);

#endif
