/*
 * serve.h -- the request loop every provider program runs.
 *
 * serve_main() reads the process environment once, then answers requests
 * until the web server stops it: as a persistent FastCGI program, keeping
 * the store's connection and statements open between requests, or as a
 * plain CGI program, answering one request and returning.
 *
 * Settings, for each request: the start-up environment, then the
 * IDEMHOOK_CONFIG file, read again whenever it changes.  A FastCGI
 * request parameter may set only IDEMHOOK_CONFIG, and the provider's
 * secrets when the process got no IDEMHOOK_* setting at start-up; any
 * other IDEMHOOK_* parameter is ignored and named in one log line.
 * Before anything else, core dumps are disabled (harden.h).
 *
 * For each request: read (request.c), verify (the provider), record
 * (store.c), answer (respond.c), log one line (log.c), then process the
 * event (dispatch.c) according to the configured mode.  A FastCGI program
 * processes after the answer in a thread of its own, with its own store
 * connection, so that a slow action never delays the next request's
 * answer; a plain CGI program processes after its answer, then exits.
 * Inline mode processes before the answer, holding no transaction while
 * the actions run.
 */
#ifndef IH_SERVE_H
#define IH_SERVE_H

#include "provider.h"

/* Returns the process exit status. */
int	serve_main(const struct provider *p);

#endif
