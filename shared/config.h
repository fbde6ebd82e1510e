/*
 * config.h -- settings for one provider's program, read from an ordered
 * list of sources (config_source.h) into a struct config.
 *
 * Per-provider settings are looked up as IDEMHOOK_<PROVIDER>_<KEY> first,
 * then as IDEMHOOK_<KEY>, so one file can serve every endpoint.
 *
 * Actions: IDEMHOOK_<PROVIDER>_ACTION and the same suffixed _2 to _8,
 * each "<type pattern> <shell command>", the pattern an fnmatch(3) glob
 * on the event type ("*", "payment_intent.*").  IDEMHOOK_ACTION* without
 * a provider applies to every provider that has none of its own.
 * IDEMHOOK_ACTION_PASSENV names the variables of the program's environment
 * that actions also get (action.h); IDEMHOOK_LEASE must be longer than
 * IDEMHOOK_ACTION_TIMEOUT when there are actions, because the lease is
 * renewed before each action and one action must end within it.
 * IDEMHOOK_CGI_PROCESSORS (1 to 64, default 2): under plain CGI, how many
 * programs of one store process events after their answers at a time
 * (cgi_slot.h); a value out of range or not a number is refused.
 *
 * Alerts: IDEMHOOK_<PROVIDER>_ALERT_ACTION or IDEMHOOK_ALERT_ACTION, a
 * shell command run like an action (alert.h) when an event goes dead or
 * the provider has been silent longer than IDEMHOOK_SILENCE_ALERT seconds
 * (0, the default: never), which idemhook work checks.
 *
 * Forwarding: IDEMHOOK_<PROVIDER>_FORWARD_URL, _FORWARD_SIGN,
 * _FORWARD_SECRET, _FORWARD_TIMEOUT, _FORWARD_CONCURRENCY and
 * _FORWARD_RATE, each also suffixed @account for
 * an account's own destination (forward.h): each event is delivered to
 * the application as an action.  forward_settings.h reads them into the
 * struct forward_settings that a struct config holds.
 *
 * Secrets: the provider's secret variable (IDEMHOOK_STRIPE_SECRET) and
 * the same name suffixed _2, _3 and _4, for rotation.  Values are used
 * byte for byte.  A struct config owns copies of every string it holds;
 * config_free() wipes every value (OPENSSL_cleanse) before freeing.
 *
 * The sources are read elsewhere: config_vars.h (the environment and the
 * file parsed into NAME=value pairs), config_file.h (the file's cache)
 * and settings.h (their order, the one place that builds the list);
 * config_source.h, which this includes, looks a name up in them.
 */
#ifndef IH_CONFIG_H
#define IH_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "config_source.h"
#include "config_vars.h"
#include "forward_settings.h"

#ifndef IH_DEFAULT_DB
#define IH_DEFAULT_DB		"/var/lib/idemhook/idemhook.db"
#endif

/* For a provider config_default_max_body() does not know. */
#define CONFIG_DEFAULT_MAX_BODY		(32L * 1024 * 1024)
#define CONFIG_DEFAULT_TOLERANCE	300
#define CONFIG_DEFAULT_BUSY_MS		5000
#define CONFIG_DEFAULT_LEASE_S		300
#define CONFIG_DEFAULT_MAX_ATTEMPTS	8
#define CONFIG_DEFAULT_ACTION_TIMEOUT	60
#define CONFIG_DEFAULT_RETRY_BASE_MS	10000
#define CONFIG_DEFAULT_RETRY_MAX_S	3600
#define CONFIG_MAX_ACTIONS		8
/* Plain CGI: detached processors per store at a time (cgi_slot.h). */
#define CONFIG_DEFAULT_CGI_PROCESSORS	2
#define CONFIG_MAX_CGI_PROCESSORS	64

enum config_mode {
	CONFIG_MODE_AFTER_RESPONSE = 0,	/* answer, then process here */
	CONFIG_MODE_WORKER,		/* only record; idemhook work runs */
	CONFIG_MODE_INLINE		/* process inside the record txn */
};

struct config {
	char	*db_path;
	int	 synchronous;		/* 3 SHARED (default), 2 FULL,
					   1 NORMAL (store_durable_as()) */
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
	char	*action_passenv;	/* names passed to actions, or NULL */
	char	*action_pattern[CONFIG_MAX_ACTIONS];
	char	*action_command[CONFIG_MAX_ACTIONS];
	char	*allow_from;		/* CIDR list (allow.h), or NULL */
	char	*log;			/* IDEMHOOK_LOG, or NULL */
	char	*alert_action;		/* IDEMHOOK_ALERT_ACTION, or NULL */
	char	*api_versions;		/* "v1,v2" (version.h), or NULL */
	long	 silence_alert_s;	/* IDEMHOOK_SILENCE_ALERT; 0 off */
	long	 cgi_processors;	/* IDEMHOOK_CGI_PROCESSORS */
	size_t	 nsecrets;
	char	*secrets[CONFIG_MAX_SECRETS];
	size_t	 secret_len[CONFIG_MAX_SECRETS];
	/* Forwarding to the application (forward.h). */
	struct forward_settings	 forward;
	/* The settings cache's entry this is a copy of (settings.h), or 0. */
	unsigned long	 serial;
};

/*
 * Checks a store location (IDEMHOOK_DB, --db).  Returns IH_OK for an
 * absolute file path (SQLite) or a postgresql:// or postgres:// URI
 * (PostgreSQL); IH_ECONFIG with the reason in err for a relative path or
 * an unknown scheme ("name:...").  err shows the value only through
 * ih_redact_uri(), never with its password.
 */
int	config_db_check(const char *db, char *err, size_t errlen);

/*
 * Which backend a store location names: 1 for a postgresql:// or
 * postgres:// URI (PostgreSQL), 0 for anything else (SQLite).  The store
 * picks its backend by it (store_is_postgres()).
 */
int	config_db_is_postgres(const char *db);

/*
 * The body limit when IDEMHOOK_<PROVIDER>_MAX_BODY and IDEMHOOK_MAX_BODY
 * are unset, in bytes: stripe 4 MiB, github 25 MiB (GitHub's cap),
 * shopify 8 MiB, asaas 1 MiB, standard 4 MiB, any other
 * CONFIG_DEFAULT_MAX_BODY.
 */
long	config_default_max_body(const char *provider);

/*
 * Fills cfg for the provider named provider (lowercase, "stripe") whose
 * secret variable is secret_var, from the sources in order.  Missing
 * settings take the defaults above.  Returns IH_OK, IH_ENOMEM, or
 * IH_ECONFIG with the cause in err, e.g. a tolerance of 0, a number
 * that does not parse or an IDEMHOOK_DB refused by config_db_check().
 * No secret is ever copied into err.  A config with no secret is valid
 * here; the caller decides whether it may serve.
 */
int	config_load(struct config *cfg, const char *provider,
	    const char *secret_var, const struct config_source *src,
	    size_t nsrc, char *err, size_t errlen);

void	config_free(struct config *cfg);

/*
 * Makes dst an owned deep copy of src (config_free() frees it apart).
 * A field added to struct config that points to memory needs its line
 * here and in config_free().  Returns IH_OK, or IH_ENOMEM with dst
 * empty.
 */
int	config_copy(struct config *dst, const struct config *src);

#endif
