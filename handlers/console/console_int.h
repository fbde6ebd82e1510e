/*
 * console_int.h -- the console's internal contract (handlers/console/):
 * struct console (one per process: settings, store, output buffer),
 * struct page (one per request, on the router's stack) and struct
 * filters, and the functions one module of the console calls in
 * another.  console.c routes each request to one page module; the
 * pages write into c->out through console_frame.c and never send
 * anything themselves.  Nothing here is used outside console.fcgi.
 */
#ifndef IH_CONSOLE_INT_H
#define IH_CONSOLE_INT_H

#include <stddef.h>
#include <stdint.h>

#include <fcgiapp.h>

#include "config.h"
#include "console_auth.h"
#include "html.h"
#include "log.h"
#include "request.h"
#include "respond.h"
#include "settings.h"
#include "store_console.h"

#define POST_MAX		(64L * 1024)	/* a form's body */
#define FIELD_MAX		512
#define USER_MAX		128

struct console {
	struct config_vars	 env;
	int			 startup_settings;
	struct config_file	 file;
	struct settings_store	 store;
	struct request		 req;
	FCGX_Request		*fx;
	struct log_dest		 logd;
	struct console_cache	 cache;
	struct html		 out;
	char			 csp[512];
};

/* One request. */
struct page {
	struct console		*c;
	struct config		 cfg;
	struct respond_io	 rio;
	struct log_sink		 sink;
	const char		*base;		/* SCRIPT_NAME */
	const char		*path;		/* PATH_INFO, or "" */
	const char		*query;		/* QUERY_STRING, or "" */
	const char		*method;
	char			 user[USER_MAX];
	int			 readonly;
	long			 silence_s;
	unsigned char		 key[CONSOLE_KEY_LEN];
	char			 token[CONSOLE_TOKEN_LEN + 1];
	int64_t			 now_ms;
	int			 status;
	const char		*outcome;
	char			 location[2048];
	int			 ask_auth;	/* WWW-Authenticate */
	int			 tls_proxy;	/* TLS ends at a proxy */
	int			 hsts;		/* reached over TLS */
	long			 retry_after;	/* seconds, for a 429 */
};

/* The list's filters, as read from a query string or a form body. */
struct filters {
	char	provider[64];
	char	account[64];	/* "" for every account */
	char	status[32];
	char	type[FIELD_MAX];
	char	q[FIELD_MAX];
	char	since[64];
	char	until[64];
	char	before[32];
	int64_t	since_ms, until_ms, before_id;
};

/* console_frame.c */

/* The request's CGI parameter name (FastCGI or plain CGI), or NULL. */
const char *	console_param(const struct page *pg, const char *name);

/* A short page saying why, with the code the log line names. */
void	console_error_page(struct page *pg, int status, const char *code,
	    const char *text);

/*
 * The store failed at doing ("be read", "change"): logs err (the
 * store's reason) and answers 503 store_unavailable.
 */
void	console_store_error(struct page *pg, const char *err,
	    const char *doing);

/* Formats a time (Unix ms) or an age for the pages. */
void	console_fmt_age(int64_t ms, char *buf, size_t len);

void	console_fmt_time(int64_t ms, char *buf, size_t len);

/* Builds the one Content-Security-Policy, with the stylesheet's hash. */
void	console_make_csp(struct console *c);

/* Opens and closes the page's HTML in pg->c->out. */
void	console_page_end(struct page *pg);

void	console_page_start(struct page *pg, const char *title);

/* Widgets: each writes escaped HTML into h. */
void	console_put_event_link(struct html *h, const struct page *pg,
	    const char *provider, const char *event_id);

void	console_put_hidden(struct html *h, const char *name,
	    const char *value);

/*
 * Opens a form posting to pg->base followed by action ("/replay"), with
 * the CSRF token and the n hidden fields names[i] = vals[i]; the caller
 * writes the rest and closes it.
 */
void	console_put_post_form(struct html *h, const struct page *pg,
	    const char *action, const char *const *names,
	    const char *const *vals, size_t n);

void	console_put_select(struct html *h, const char *name, const char *cur,
	    const char *const *opts, size_t n);

void	console_put_text_input(struct html *h, const char *label,
	    const char *name, const char *value, const char *placeholder);

void	console_put_time(struct html *h, int64_t ms);

/*
 * Writes the answer: the status, the security headers every answer
 * carries (401s and refusals included), then the page.
 */
void	console_send_page(struct page *pg);

/* console_field.c */

/*
 * Reads field name of the urlencoded src into out (NUL-terminated).
 * Returns IH_OK, IH_ENOTFOUND (out empty), IH_EINVAL or IH_ETOOBIG.
 */
int	console_field(const char *src, size_t len, const char *name, char *out,
	    size_t cap);

/* console_filters.c */

/* The statuses an event can have, in the order the pages show them. */
#define CONSOLE_NSTATUS	7
extern const char *const console_statuses[CONSOLE_NSTATUS];

/* Appends the filters as a query string (without '?'), before excluded. */
void	console_put_filter_query(struct html *h, const struct filters *f);

/*
 * Opens the bulk replay form (POST M/bulk) with the CSRF token and the
 * filters as hidden fields: the events page's and the dry run's.
 */
void	console_put_bulk_form(struct html *h, const struct page *pg,
	    const struct filters *f);

/*
 * Reads the filters from the urlencoded src (a query or a form body).
 * Returns IH_OK, or IH_EINVAL with *why saying what is wrong.
 */
int	console_read_filters(const char *src, size_t len, struct filters *f,
	    const char **why);

/* console_account.c */

/*
 * The "account" field of the urlencoded src into out: "default" (dflt
 * set) or "" when absent or empty.  Returns IH_OK, or IH_EINVAL when it
 * is not an account name (account.h).
 */
int	console_account(const char *src, size_t len, int dflt, char *out,
	    size_t outlen);
/*
 * Appends "?account=NAME" (first) or "&amp;account=NAME" for an account
 * other than the default one, URL-encoded; nothing otherwise.
 */
void	console_put_account_query(struct html *h, const char *account,
	    int first);

/* The pages, called only by route() in console.c. */

/* page_overview.c */

void	console_page_overview(struct page *pg);
/* The overview's endpoints: health and refused signatures. */
void	console_overview_health(struct page *pg);

/* page_events.c */

void	console_page_events(struct page *pg);

/* page_event.c */

void	console_page_event(struct page *pg);

/* post_replay.c */

void	console_post_bulk(struct page *pg);

void	console_post_replay(struct page *pg);

/* page_signin.c */

/*
 * Signs the request in.  Returns 1 with pg->user set, or 0 with the
 * refusal written into the page.
 */
int	console_sign_in(struct page *pg, const struct config_source *src,
	    size_t nsrc);

#endif
