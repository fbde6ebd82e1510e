/*
 * serve.h -- the accept loop every provider program runs.
 *
 * serve_main() reads the process environment once (settings.h), then
 * answers requests until the web server stops it: as a persistent
 * FastCGI program, or as a plain CGI program, answering one request and
 * returning.  Before anything else, core dumps are disabled (harden.h).
 *
 * For each request: read and verify it (ingest.h), record it (batch.h),
 * answer and log (ingest.h), then hand processing on (processing.h).
 *
 * A FastCGI program runs IDEMHOOK_THREADS request threads (default 8,
 * 1 to 64, read from the start-up environment only) on FCGX_Accept_r(),
 * which read and verify deliveries in parallel; one writer thread (on
 * PostgreSQL up to IDEMHOOK_PG_WRITERS, batch.h) records what they
 * queue, many deliveries per durable commit, and a processing thread
 * runs actions after the answers.  Each thread has its own store
 * connection; only the writers' record.  A
 * plain CGI program does all of it in its one thread.
 */
#ifndef IH_SERVE_H
#define IH_SERVE_H

#include "provider.h"

/* Request threads of a FastCGI program when IDEMHOOK_THREADS is unset. */
#define SERVE_THREADS_DEFAULT	8
#define SERVE_THREADS_MAX	64

/* Returns the process exit status. */
int	serve_main(const struct provider *p);

#endif
