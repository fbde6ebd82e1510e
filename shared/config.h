/*
 * config.h -- settings for one provider's program, from layered sources.
 *
 * A setting is looked up by its environment name (IDEMHOOK_DB,
 * IDEMHOOK_STRIPE_SECRET, ...) in an ordered list of sources; the first
 * source that has it wins.  The programs use three: the request's own
 * parameters (Apache SetEnv, nginx fastcgi_param), the process environment
 * captured before the first FastCGI accept (lighttpd bin-environment,
 * FcgidInitialEnv), and the file named by IDEMHOOK_CONFIG, whose lines
 * read NAME=value with '#' comments.
 *
 * Per-provider settings are looked up as IDEMHOOK_<PROVIDER>_<KEY> first,
 * then as IDEMHOOK_<KEY>, so one file can serve every endpoint.
 *
 * Actions: IDEMHOOK_<PROVIDER>_ACTION and the same suffixed _2 to _8,
 * each "<type pattern> <shell command>", the pattern an fnmatch(3) glob
 * on the event type ("*", "payment_intent.*").  IDEMHOOK_ACTION* without
 * a provider applies to every provider that has none of its own.
 *
 * Secrets: the provider's secret variable (IDEMHOOK_STRIPE_SECRET) and
 * the same name suffixed _2, _3 and _4, for rotation.  Values are used
 * byte for byte; in the file, surrounding blanks are trimmed.  A struct
 * config owns copies of every string it holds; config_free() wipes the
 * secrets before freeing them.
 */
#ifndef IH_CONFIG_H
#define IH_CONFIG_H

#include <stddef.h>

#define CONFIG_MAX_SECRETS	4
#define CONFIG_VALUE_MAX	4096	/* longest accepted value */
#define CONFIG_FILE_MAX		(256 * 1024)	/* longest config file */

#ifndef IH_DEFAULT_DB
#define IH_DEFAULT_DB		"/var/lib/idemhook/idemhook.db"
#endif

#define CONFIG_DEFAULT_MAX_BODY		(32L * 1024 * 1024)
#define CONFIG_DEFAULT_TOLERANCE	300
#define CONFIG_DEFAULT_BUSY_MS		5000
#define CONFIG_DEFAULT_LEASE_S		300
#define CONFIG_DEFAULT_MAX_ATTEMPTS	8
#define CONFIG_DEFAULT_ACTION_TIMEOUT	60
#define CONFIG_DEFAULT_RETRY_BASE_MS	10000
#define CONFIG_DEFAULT_RETRY_MAX_S	3600
#define CONFIG_MAX_ACTIONS		8

enum config_mode {
	CONFIG_MODE_AFTER_RESPONSE = 0,	/* answer, then process here */
	CONFIG_MODE_WORKER,		/* only record; idemhook work runs */
	CONFIG_MODE_INLINE		/* process inside the record txn */
};

struct config {
	char	*db_path;
	int	 synchronous;		/* 2 FULL (default), 1 NORMAL */
	long	 busy_timeout_ms;
	long	 tolerance_s;		/* signed-timestamp window, > 0 */
	long	 max_body;		/* bytes */
	int	 mode;			/* enum config_mode */
	long	 lease_s;		/* processing lease */
	long	 max_attempts;		/* then dead */
	long	 action_timeout_s;
	long	 retry_base_ms;		/* first backoff step */
	long	 retry_max_s;		/* longest backoff step */
	size_t	 nactions;
	char	*action_pattern[CONFIG_MAX_ACTIONS];
	char	*action_command[CONFIG_MAX_ACTIONS];
	char	*log;			/* IDEMHOOK_LOG, or NULL */
	size_t	 nsecrets;
	char	*secrets[CONFIG_MAX_SECRETS];
	size_t	 secret_len[CONFIG_MAX_SECRETS];
};

/* A source of settings: returns the value of name, or NULL. */
struct config_source {
	const char	*(*get)(void *arg, const char *name);
	void		 *arg;
};

/* An owned list of NAME=value pairs: a file, or a captured environment. */
struct config_vars {
	size_t	  n;
	char	**names;
	char	**values;
};

/*
 * Copies every IDEMHOOK_* entry of env (an environ-style array) into v.
 * Returns IH_OK or IH_ENOMEM; on failure v is empty.
 */
int	config_vars_from_env(struct config_vars *v, char *const *env);

/*
 * Reads the file at path into v.  Returns IH_OK; IH_ENOTFOUND or IH_EIO
 * when it cannot be read; IH_EINVAL (with the line number in err) for a
 * line that is not NAME=value; IH_ETOOBIG past CONFIG_FILE_MAX.  On
 * failure v is empty.
 */
int	config_vars_from_file(struct config_vars *v, const char *path,
	    char *err, size_t errlen);

/* Returns the value of name in v, or NULL.  Usable as a source's get. */
const char *config_vars_get(void *v, const char *name);

void	config_vars_free(struct config_vars *v);

/*
 * Fills cfg for the provider named provider (lowercase, "stripe") whose
 * secret variable is secret_var, from the sources in order.  Missing
 * settings take the defaults above.  Returns IH_OK, IH_ENOMEM, or
 * IH_ECONFIG with the cause in err, e.g. a tolerance of 0 or a number
 * that does not parse.  No secret is ever copied into err.  A config with
 * no secret is valid here; the caller decides whether it may serve.
 */
int	config_load(struct config *cfg, const char *provider,
	    const char *secret_var, const struct config_source *src,
	    size_t nsrc, char *err, size_t errlen);

/*
 * Looks up name in the sources, in order; an empty value counts as
 * unset.  Returns NULL when no source has a non-empty value.
 */
const char *config_lookup(const struct config_source *src, size_t nsrc,
	    const char *name);

void	config_free(struct config *cfg);

#endif
