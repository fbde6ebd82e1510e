/*
 * api_session.h -- one provider's API session, as idemhook catch-up and
 * idemhook health open it (struct catchup): the provider's settings, the
 * store, the HTTP client and IDEMHOOK_<P>_API_KEY; the calls with the
 * credential; and the recorder that takes what the API lists through the
 * receivers' own recording path (batch.h): the same row under
 * UNIQUE(provider, event_id), the same switch, objects and actions, in
 * the same mode.  Such an event carries the kept header line
 * "Idemhook-Source: api" instead of a signature: it was trusted because
 * it came over an authenticated TLS call, and is never fed to the HMAC
 * check.  Also the shapes every provider's API module fills: struct
 * health (a health check's findings) and struct api_provider (one entry
 * of the table, api_providers.h).
 *
 * The per-provider modules (api_stripe.c, api_github.c, api_asaas.c,
 * api_shopify.c) fill a struct catchup's counts, calling catchup_offer()
 * for each event the API lists and catchup_flush() at the end.  The API
 * key is read here, by the command only; it is a secret as
 * config_is_secret() says, so the receivers drop it, actions never get
 * it, and nothing prints it.  The session owns its HTTP client and
 * recording slots until catchup_close(); it borrows the command's store
 * and settings.
 *
 * Exit codes of catch-up and health: 0 nothing missing (health: no
 * problem), 1 a call or the store failed (the run is incomplete), 2 usage
 * or configuration (no key, a key the provider refuses), 3 something was
 * missing (catch-up: recorded, or listed with --dry-run; health: a
 * problem found).
 */
#ifndef IH_API_SESSION_H
#define IH_API_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "api_http.h"
#include "batch.h"
#include "idemhook.h"
#include "ih.h"
#include "provider.h"

#define CLI_EXIT_MISSING	3

struct catchup {
	struct cli		*c;
	const struct provider	*p;
	const struct config	*cfg;
	struct store		*st;		/* the command's, to look up */
	struct api_http		 http;
	const char		*key;	/* IDEMHOOK_<P>_API_KEY: never shown */
	char			 key_var[64];
	char			 base[API_HTTP_URL_MAX];
	int			 dry_run;
	int			 repair;
	int			 tty;		/* progress on stderr */
	int			 json;		/* stdout is one JSON array */
	int64_t			 from_s;	/* the window, Unix seconds */
	int64_t			 to_s;
	/* What the run found, for the summary. */
	long			 pages;
	long			 seen;		/* events the API listed */
	long			 missing;	/* of which not in the store */
	long			 recorded;
	long			 raced;	/* delivered while catching up */
	long			 failed;
	long			 asked;	/* redeliveries or resumes asked */
	long			 released;	/* held events made due */
	/* Listed in the window but past what a run collects (cu->err). */
	long			 unlooked;
	char			 note[512];	/* what could not be covered */
	char			 err[API_HTTP_ERR_MAX];
	int			 rc;	/* IH_OK, or why the run stopped */
	const char *const	*hdrs;	/* catchup_offer()'s, for identify */
	/* The recorder: the receivers' writer, without a thread. */
	struct batch_writer	 w;
	struct ingest		*ins[BATCH_MAX];
	size_t			 nins;
};

/*
 * Prepares cu for provider index pi, whose API is ap: its settings, the
 * store, the HTTP client, IDEMHOOK_<P>_API_KEY and IDEMHOOK_<P>_API_BASE
 * (default ap->def_base).  Returns IH_OK, IH_ENOTFOUND when no key is set
 * (nor ap->alt_cred: then cu->key is ""), IH_ECONFIG (printed) or
 * IH_ENOMEM.
 */
struct api_provider;
int	catchup_open(struct catchup *cu, struct cli *c, size_t pi,
	    const struct api_provider *ap);
void	catchup_close(struct catchup *cu);

/*
 * Sets *found to 1 when the store holds (provider, event_id).  Returns
 * IH_OK or IH_ESTORE (cu->err says why).
 */
int	catchup_have(struct catchup *cu, const char *event_id, int *found);

/*
 * One event the API listed, body being its JSON as the provider would
 * deliver it, and hdrs (NULL, or name, value, ..., NULL) the headers a
 * delivery would carry that its identify reads (Shopify's topic and
 * webhook id): named by the provider's identify, looked up in the store,
 * and queued for recording unless there or dry_run; the provider's kept
 * headers among hdrs are kept with it.  The event id goes to id (cut to
 * idlen).  Returns IH_OK; IH_EBODY (the event is skipped and counted as
 * failed); IH_ESTORE or IH_ENOMEM, which end the run.
 */
int	catchup_offer(struct catchup *cu, const char *body, size_t len,
	    const char *const *hdrs, char *id, size_t idlen);

/*
 * Records what catchup_offer() queued, then processes it as a plain CGI
 * receiver does after its answer.  Returns IH_OK or IH_ESTORE.
 */
int	catchup_flush(struct catchup *cu);

/*
 * Calls fn for each element of the array at array_path ("$.data") of a
 * JSON answer that is an object or an array, with its exact text; *more
 * becomes 1 when the boolean at more_path (or NULL) is true.  The answer
 * is parsed once, whatever its length (json_items()).  Stops at fn's
 * first error, which it returns; IH_EBODY when the answer is not a JSON
 * object; IH_ETOOBIG, said on stderr and with fn never called, when the
 * array holds more than CATCHUP_PAGE_MAX items (every provider's page
 * holds at most 250).
 */
#define CATCHUP_PAGE_MAX	1000
typedef int (*catchup_item_fn)(void *arg, const char *item, size_t len);
int	catchup_items(const char *body, size_t len, const char *array_path,
	    const char *more_path, catchup_item_fn fn, void *arg, int *more);

/*
 * Writes cu->base followed by the formatted path into url (len bytes).
 * Returns IH_OK, or IH_ETOOBIG with cu->err set.
 */
int	catchup_url(struct catchup *cu, char *url, size_t len,
	    const char *fmt, ...) IH_PRINTF(4, 5);

/* Rewrites the progress line on a terminal. */
void	catchup_progress(const struct catchup *cu);

/*
 * A GET or a call with a JSON body to base + path (path starts with '/')
 * with the provider's credential header.  Returns what api_http_call()
 * does; cu->err holds its message.
 */
int	catchup_call(struct catchup *cu, const char *method, const char *url,
	    const char *auth_name, const char *auth_value,
	    const char *const *headers, const char *body, struct api_resp *r);

/*
 * The message for an answer other than 2xx: a 401 or 403 names the key's
 * setting (IH_ECONFIG), anything else its status (IH_EIO).  Never
 * quotes the body, which may echo the key.
 */
int	catchup_refused(struct catchup *cu, const struct api_resp *r,
	    const char *what);

#define HEALTH_MAX	32
#define HEALTH_LINE_MAX	512

/* What health found: one line per check, each a problem or not. */
struct health {
	char	 line[HEALTH_MAX][HEALTH_LINE_MAX];
	int	 problem[HEALTH_MAX];
	size_t	 n;
	int	 problems;
};

/* Adds one finding (cut at HEALTH_LINE_MAX; dropped past HEALTH_MAX). */
void	health_add(struct health *h, int problem, const char *fmt, ...)
	    IH_PRINTF(3, 4);

/*
 * One provider's API in the table (api_providers.c): what catch-up and
 * health call, and what catchup_open() reads.
 */
struct api_provider {
	const char	*name;
	const char	*def_base;	/* IDEMHOOK_<P>_API_BASE's default */
	int		(*catchup)(struct catchup *cu);
	int		(*health)(struct catchup *cu, struct health *h);
	/*
	 * Or NULL: releases the held events the provider's API confirms
	 * (provider.h, hold_replays), as catch-up does, with nothing else;
	 * idemhook work calls it.  The codes of catch-up.
	 */
	int		(*release)(struct catchup *cu);
	const char	*no_api;	/* why there is none, or NULL */
	const char	*alt_cred;	/* a setting that may stand in for */
					/* the key (GitHub's App), or NULL */
};

#endif
