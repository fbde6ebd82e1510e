/*
 * settings.h -- where a program's settings come from, in one place: the
 * layering of their sources and the cache of the settings file, shared
 * by the receivers and the operator's command, and the store they name.
 *
 * Layering, first match wins: a front source (a receiver's admitted
 * request parameters, the command's --db), then the start-up
 * environment's IDEMHOOK_* variables, then the IDEMHOOK_CONFIG file.
 *
 * A receiver's request parameters may set only IDEMHOOK_CONFIG, and the
 * provider's secrets when the process got no IDEMHOOK_* setting at
 * start-up (Apache mod_fcgid on shared hosting, where SetEnv is the only
 * way to pass anything) and its FastCGI socket is not TCP (anyone who
 * reaches a TCP socket could send a secret and sign events with it);
 * any other IDEMHOOK_* parameter is ignored and named in one log line.
 * The file's fixed places (config_find.h) are read only when nothing at
 * all came at start-up; a file found there is named in the log, and so
 * is one left unread because the start-up environment configured the
 * program.  IDEMHOOK_DB set in both the
 * start-up environment and the file, to different stores, is refused
 * (IH_ECONFIG): the environment would win, and the idemhook command,
 * which reads the file, would use another store.  The file is read
 * again whenever it changes (one stat(2) per request otherwise).
 * struct settings is shared by the request threads of a process: its
 * calls take its lock.
 */
#ifndef IH_SETTINGS_H
#define IH_SETTINGS_H

#include <pthread.h>
#include <stddef.h>

#include "config.h"
#include "config_file.h"
#include "config_vars.h"
#include "log.h"

struct provider;
struct settings_cached;
struct store;

/* Settings loaded and kept at once: accounts and parameter sets. */
#define SETTINGS_CACHE_MAX	256

struct settings {
	const struct provider	*p;
	struct config_vars	 env;		/* IDEMHOOK_* at start-up */
	int			 startup_settings; /* any IDEMHOOK_* given */
	int			 tcp;	/* FastCGI socket on fd 0 is TCP */
	struct config_file	 file;		/* IDEMHOOK_CONFIG's lines */
	char			*said;	/* the file last logged, or NULL */
	int			 said_any;	/* a source was logged */
	/*
	 * Each account's loaded settings for one set of admitted request
	 * parameters, while the file holds the lines they came from
	 * (cache_gen is file.gen then): a request copies them instead of
	 * looking up some eighty names again.
	 */
	struct settings_cached	*cache;
	size_t			 ncache;
	size_t			 cache_cap;	/* entries allocated */
	size_t			 evict;		/* next slot to reuse */
	unsigned long		 cache_gen;
	unsigned long		 serial;	/* the last entry's */
	pthread_mutex_t		 mu;
};

/*
 * Takes the IDEMHOOK_* variables of env for p's program, keeps only p's
 * secrets among them, and wipes the secrets from env itself.  Returns
 * IH_OK or IH_ENOMEM; settings_free() is due either way.
 */
int	settings_init(struct settings *s, const struct provider *p,
	    char **env);
void	settings_free(struct settings *s);

/*
 * A count read once from the start-up environment only (name, e.g.
 * IDEMHOOK_THREADS): 1 to max, or def when unset.  A value out of range
 * or not a number logs one line naming it and gives def.
 */
long	settings_startup_count(struct settings *s, const char *name,
	    long max, long def);

/*
 * The names read from the start-up environment only, never from the
 * settings file (NULL-terminated): idemhook check reports one found in
 * the file, which the programs would not see.
 */
extern const char *const settings_startup_only[];

/*
 * Is fd a TCP (IPv4 or IPv6) socket?  Then its port, as "TCP port N",
 * goes to where (may be NULL).  Returns 1 or 0.
 */
int	settings_fd_tcp(int fd, char *where, size_t len);

/*
 * Fills cfg for one request whose parameters are params ("NAME=value",
 * NULL-terminated; NULL under plain CGI), logging ignored ones to sink.
 * cfg is zeroed or holds what an earlier call filled in, which is kept
 * when it is what this request's sources give, and otherwise replaced.
 * Every request checks the sources (the file's stamp, the admitted
 * parameters), and settings loaded once are copied while those are
 * unchanged: the file's new version takes effect at the next request.
 * The settings file's path goes to file_path ("" when none).  Returns
 * IH_OK, IH_ENOMEM or IH_ECONFIG with the cause in err (cfg empty).
 */
int	settings_request(struct settings *s, char **params,
	    const struct log_sink *sink, struct config *cfg, char *file_path,
	    size_t pathlen, char *err, size_t errlen);

/*
 * settings_request() for one account (account.h; NULL or "default": the
 * implicit one): its own settings, name@account, come first, and its
 * secrets are only its own.
 */
int	settings_request_account(struct settings *s, char **params,
	    const char *account, const struct log_sink *sink,
	    struct config *cfg, char *file_path, size_t pathlen, char *err,
	    size_t errlen);

/*
 * account_route() over the start-up environment and the settings file
 * as the last request read it: the account a routing header's value
 * names (IDEMHOOK_<PROVIDER>_ROUTE_<value>).
 */
int	settings_route(struct settings *s, const char *value, char *out,
	    size_t outlen);

/*
 * The layering itself: fills cfg for the provider (name, secret_var)
 * from front (may be NULL), then env, then file (may be NULL).
 * Returns what config_load() does.
 */
int	settings_load(struct config *cfg, const char *name,
	    const char *secret_var, const struct config_source *front,
	    struct config_vars *env, struct config_vars *file, char *err,
	    size_t errlen);
/* settings_load() for one account, as settings_request_account(). */
int	settings_load_account(struct config *cfg, const char *name,
	    const char *secret_var, const char *account,
	    const struct config_source *front, struct config_vars *env,
	    struct config_vars *file, char *err, size_t errlen);

/*
 * One open store, kept while the settings keep naming it: the request
 * path, the batch writer and the processing thread each hold one.
 */
struct settings_store {
	struct store	*st;
	char		*path;
	int		 sync;
	long		 busy;
	int		 opened;	/* set when a store was (re)opened */
};

/*
 * Opens the store cfg names into slot, unless the one open there
 * matches cfg, and then sets slot->opened (the caller logs the store it
 * now uses and clears it).  Returns what store_open() does.
 */
int	settings_store(struct settings_store *slot, const struct config *cfg,
	    char *err, size_t errlen);
void	settings_store_close(struct settings_store *slot);

/*
 * Fills src[0..2] with a program's settings sources, in the order above
 * (settings.c is the one place that builds that list): param (a
 * request's parameters), env (the start-up environment), then cf's
 * lines.  IDEMHOOK_CONFIG names cf's file: from param (the file is then
 * CONFIG_FILE_REQUEST), else from env, else, only when env sets nothing
 * (config_find_wanted()), config_find()'s fixed places (suEXEC drops
 * SetEnv); cf is refreshed from it, and when it was read again only
 * secret_var's secret is kept (NULL: none).  Sets *nsrc to 3 on
 * success.  Returns IH_OK, IH_ENOMEM, or IH_ECONFIG with the cause in
 * err.
 */
int	settings_sources(struct config_file *cf,
	    const struct config_source *param, struct config_vars *env,
	    const char *secret_var, struct config_source src[3], size_t *nsrc,
	    char *err, size_t errlen);

#endif
