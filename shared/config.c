/*
 * config.c -- a struct config from a list of sources: every value
 * looked up (provider's name first), checked and defaulted; the
 * forwarding settings through forward_settings.c.  The sources
 * themselves are config_vars.c (parsing), config_file.c (the file's
 * cache) and settings.c (their order); their lookup is config_source.c.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/crypto.h>

#include "action.h"
#include "allow.h"
#include "config.h"
#include "config_source.h"
#include "config_vars.h"
#include "forward_settings.h"
#include "ih.h"
#include "redact.h"
#include "version_list.h"

int
config_db_is_postgres(const char *db)
{
	return db != NULL && (strncasecmp(db, "postgresql://", 13) == 0 ||
	    strncasecmp(db, "postgres://", 11) == 0);
}

int
config_db_check(const char *db, char *err, size_t errlen)
{
	char shown[REDACT_URI_MAX];
	size_t n = 0;

	if (db != NULL && db[0] == '/')
		return IH_OK;
	ih_redact(db, shown, sizeof(shown));
	if (db != NULL && isalpha((unsigned char)db[0])) {
		n = 1;
		while (isalnum((unsigned char)db[n]) || db[n] == '+' ||
		    db[n] == '-' || db[n] == '.')
			n++;
		if (db[n] != ':')
			n = 0;
	}
	if (config_db_is_postgres(db))
		return IH_OK;
	if (n > 0 && ((n == 10 && strncasecmp(db, "postgresql", n) == 0) ||
	    (n == 8 && strncasecmp(db, "postgres", n) == 0)))
		snprintf(err, errlen, "IDEMHOOK_DB=%s: a PostgreSQL store is "
		    "a URI starting with postgresql:// (such as "
		    "postgresql://user@host/dbname?sslmode=verify-full)",
		    shown);
	else if (n > 0)
		snprintf(err, errlen, "IDEMHOOK_DB=%s: unknown scheme "
		    "\"%.*s\": set an absolute path to a SQLite file such as "
		    "%s, or a postgresql:// URI", shown, (int)(n < 32 ? n : 32),
		    db, IH_DEFAULT_DB);
	else
		snprintf(err, errlen, "IDEMHOOK_DB=%s is a relative path: each "
		    "program would resolve it against its own working "
		    "directory; set an absolute path such as %s", shown,
		    IH_DEFAULT_DB);
	return IH_ECONFIG;
}

/*
 * Writes a, b and c one after the other into name; 0 when they do not
 * fit.  Every request loads its settings through some fifty names:
 * snprintf() made them a tenth of a receiver's instructions per event.
 */
static int
name_join(char *name, size_t cap, const char *a, const char *b,
    const char *c)
{
	size_t la = strlen(a), lb = strlen(b), lc = strlen(c);

	if (la + lb + lc >= cap)
		return 0;
	memcpy(name, a, la);
	memcpy(name + la, b, lb);
	memcpy(name + la + lb, c, lc + 1);
	return 1;
}

/* Writes IDEMHOOK_<PROVIDER>_<key> into name; 0 when it does not fit. */
static int
provider_var(char *name, size_t cap, const char *provider, const char *key)
{
	size_t i;

	if (!name_join(name, cap, "IDEMHOOK_", provider, "_") ||
	    !name_join(name + strlen(name), cap - strlen(name), key, "", ""))
		return 0;
	for (i = 9; name[i] != '\0' && name[i] != '_'; i++)
		name[i] = (char)toupper((unsigned char)name[i]);
	return 1;
}

/* Looks up IDEMHOOK_<PROVIDER>_<key>, then IDEMHOOK_<key>. */
static const char *
lookup2(const struct config_source *src, size_t nsrc, const char *provider,
    const char *key)
{
	char name[128];
	const char *v;

	if (!provider_var(name, sizeof(name), provider, key))
		return NULL;
	v = config_lookup(src, nsrc, name);
	if (v != NULL)
		return v;
	if (!name_join(name, sizeof(name), "IDEMHOOK_", key, ""))
		return NULL;
	return config_lookup(src, nsrc, name);
}

/* The suffix of the nth (from 0) of a numbered setting: "", "_2", ... */
static const char *const nth_suffix[] = {
	"", "_2", "_3", "_4", "_5", "_6", "_7", "_8"
};
#define NTH_SUFFIXES	(sizeof(nth_suffix) / sizeof(nth_suffix[0]))
/* The build fails here when the settings outnumber the suffixes. */
typedef char nth_suffix_enough[NTH_SUFFIXES >= CONFIG_MAX_ACTIONS &&
    NTH_SUFFIXES >= CONFIG_MAX_SECRETS ? 1 : -1];

static int
parse_long(const char *s, long min, long max, long *out)
{
	char *end;
	long long v;

	if (s == NULL || *s == '\0')
		return IH_EINVAL;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < min || v > max)
		return IH_EINVAL;
	*out = (long)v;
	return IH_OK;
}

struct num_setting {
	const char	*key;
	long		 min, max, def;
	size_t		 off;
};

static const struct num_setting num_settings[] = {
	{ "TOLERANCE", 1, 86400, CONFIG_DEFAULT_TOLERANCE,
	    offsetof(struct config, tolerance_s) },
	{ "MAX_BODY", 1024, 1024L * 1024 * 1024, CONFIG_DEFAULT_MAX_BODY,
	    offsetof(struct config, max_body) },
	{ "BUSY_TIMEOUT_MS", 1, 600000, CONFIG_DEFAULT_BUSY_MS,
	    offsetof(struct config, busy_timeout_ms) },
	{ "LEASE", 1, 86400, CONFIG_DEFAULT_LEASE_S,
	    offsetof(struct config, lease_s) },
	{ "MAX_ATTEMPTS", 1, 1000, CONFIG_DEFAULT_MAX_ATTEMPTS,
	    offsetof(struct config, max_attempts) },
	{ "ACTION_TIMEOUT", 1, 86400, CONFIG_DEFAULT_ACTION_TIMEOUT,
	    offsetof(struct config, action_timeout_s) },
	{ "RETRY_BASE_MS", 1, 86400000, CONFIG_DEFAULT_RETRY_BASE_MS,
	    offsetof(struct config, retry_base_ms) },
	{ "RETRY_MAX", 1, 7 * 86400, CONFIG_DEFAULT_RETRY_MAX_S,
	    offsetof(struct config, retry_max_s) },
	{ "SILENCE_ALERT", 0, 365L * 86400, 0,
	    offsetof(struct config, silence_alert_s) },
	{ "CGI_PROCESSORS", 1, CONFIG_MAX_CGI_PROCESSORS,
	    CONFIG_DEFAULT_CGI_PROCESSORS,
	    offsetof(struct config, cgi_processors) },
};

long
config_default_max_body(const char *provider)
{
	/*
	 * What each provider sends, with room: GitHub caps payloads at
	 * 25 MB; Stripe and Shopify objects (invoices, orders with many
	 * lines) reach a few MB; Asaas sends small payment events; Standard
	 * Webhooks advises under 20 kB but senders vary.
	 */
	static const struct {
		const char	*provider;
		long		 max_body;
	} defs[] = {
		{ "stripe",	4L * 1024 * 1024 },
		{ "github",	25L * 1024 * 1024 },
		{ "shopify",	8L * 1024 * 1024 },
		{ "asaas",	1L * 1024 * 1024 },
		{ "standard",	4L * 1024 * 1024 },
	};
	size_t i;

	for (i = 0; provider != NULL && i < sizeof(defs) / sizeof(defs[0]);
	    i++)
		if (strcmp(provider, defs[i].provider) == 0)
			return defs[i].max_body;
	return CONFIG_DEFAULT_MAX_BODY;
}

/* Reads the ACTION, ACTION_2 .. ACTION_8 settings as pattern + command. */
static int
load_actions(struct config *cfg, const char *provider,
    const struct config_source *src, size_t nsrc, char *err, size_t errlen)
{
	char key[32];
	const char *v, *sp;
	size_t i, n;

	for (i = 0; i < CONFIG_MAX_ACTIONS; i++) {
		(void)name_join(key, sizeof(key), "ACTION", nth_suffix[i], "");
		v = lookup2(src, nsrc, provider, key);
		if (v == NULL || *v == '\0')
			continue;
		sp = strpbrk(v, " \t");
		if (sp == NULL || sp == v) {
			snprintf(err, errlen, "IDEMHOOK_%s must read "
			    "\"<type pattern> <command>\"", key);
			return IH_ECONFIG;
		}
		n = cfg->nactions;
		cfg->action_pattern[n] = strndup(v, (size_t)(sp - v));
		while (*sp == ' ' || *sp == '\t')
			sp++;
		cfg->action_command[n] = strdup(sp);
		cfg->nactions++;
		if (cfg->action_pattern[n] == NULL ||
		    cfg->action_command[n] == NULL)
			return IH_ENOMEM;
		if (*sp == '\0') {
			snprintf(err, errlen, "IDEMHOOK_%s has no command",
			    key);
			return IH_ECONFIG;
		}
	}
	return IH_OK;
}

/*
 * The pass-through list, and the lease against the action timeout: the
 * lease is renewed before each action, so one action and then the commit
 * that ends it (which may wait the busy timeout for the lock) must fit
 * in it, or two processes could run the event's actions at once.
 */
static int
load_action_env(struct config *cfg, const char *provider,
    const struct config_source *src, size_t nsrc, char *err, size_t errlen)
{
	const char *v;
	int rc;

	v = lookup2(src, nsrc, provider, "ACTION_PASSENV");
	if (v != NULL) {
		rc = action_passenv_check(v, err, errlen);
		if (rc != IH_OK)
			return rc;
		cfg->action_passenv = strdup(v);
		if (cfg->action_passenv == NULL)
			return IH_ENOMEM;
	}
	if (cfg->nactions > 0 && cfg->lease_s * 1000 <=
	    cfg->action_timeout_s * 1000 + cfg->busy_timeout_ms) {
		snprintf(err, errlen, "IDEMHOOK_LEASE (%ld s) must be longer "
		    "than IDEMHOOK_ACTION_TIMEOUT (%ld s) plus "
		    "IDEMHOOK_BUSY_TIMEOUT_MS (%ld ms): the lease is renewed "
		    "before each action, and one action and the commit after "
		    "it must end within it", cfg->lease_s,
		    cfg->action_timeout_s, cfg->busy_timeout_ms);
		return IH_ECONFIG;
	}
	return IH_OK;
}

/*
 * IDEMHOOK_<PROVIDER>_API_VERSIONS (the provider's own only) into
 * cfg->api_versions; unset leaves it NULL, which accepts every version.
 */
static int
load_versions(struct config *cfg, const char *provider,
    const struct config_source *src, size_t nsrc, char *err, size_t errlen)
{
	char name[128];
	const char *v;

	if (!provider_var(name, sizeof(name), provider, "API_VERSIONS"))
		return IH_ECONFIG;
	v = config_lookup(src, nsrc, name);
	if (v == NULL)
		return IH_OK;
	return version_list(name, v, &cfg->api_versions, err, errlen);
}

int
config_load(struct config *cfg, const char *provider, const char *secret_var,
    const struct config_source *src, size_t nsrc, char *err, size_t errlen)
{
	const char *v;
	char name[128];
	size_t i;
	int rc = IH_ECONFIG;

	memset(cfg, 0, sizeof(*cfg));
	for (i = 0; i < sizeof(num_settings) / sizeof(num_settings[0]); i++) {
		const struct num_setting *s = &num_settings[i];
		long *dst = (long *)(void *)((char *)cfg + s->off);

		v = lookup2(src, nsrc, provider, s->key);
		*dst = s->off == offsetof(struct config, max_body) ?
		    config_default_max_body(provider) : s->def;
		if (v != NULL && parse_long(v, s->min, s->max, dst) != IH_OK) {
			snprintf(err, errlen, "IDEMHOOK_%s must be a whole "
			    "number from %ld to %ld", s->key, s->min, s->max);
			goto out;
		}
	}

	/* SHARED: as durable as FULL, faster with several processes. */
	cfg->synchronous = 3;
	v = lookup2(src, nsrc, provider, "SYNCHRONOUS");
	if (v != NULL) {
		if (strcasecmp(v, "FULL") == 0)
			cfg->synchronous = 2;
		else if (strcasecmp(v, "NORMAL") == 0)
			cfg->synchronous = 1;
		else if (strcasecmp(v, "SHARED") == 0)
			cfg->synchronous = 3;
		else {
			snprintf(err, errlen, "IDEMHOOK_SYNCHRONOUS must be "
			    "FULL, NORMAL or SHARED");
			goto out;
		}
	}

	/* Checked whole here, so that a typo fails loudly at once. */
	v = lookup2(src, nsrc, provider, "ALLOW_FROM");
	if (v != NULL && *v != '\0') {
		int allowed;

		if (allow_check(v, NULL, &allowed, err, errlen) != IH_OK)
			goto out;
		cfg->allow_from = strdup(v);
		if (cfg->allow_from == NULL) {
			rc = IH_ENOMEM;
			goto out;
		}
	}

	cfg->mode = CONFIG_MODE_AFTER_RESPONSE;
	v = lookup2(src, nsrc, provider, "MODE");
	if (v != NULL) {
		if (strcmp(v, "after-response") == 0)
			cfg->mode = CONFIG_MODE_AFTER_RESPONSE;
		else if (strcmp(v, "worker") == 0)
			cfg->mode = CONFIG_MODE_WORKER;
		else if (strcmp(v, "inline") == 0)
			cfg->mode = CONFIG_MODE_INLINE;
		else {
			snprintf(err, errlen, "IDEMHOOK_MODE must be "
			    "after-response, worker or inline");
			goto out;
		}
	}

	rc = load_actions(cfg, provider, src, nsrc, err, errlen);
	if (rc == IH_OK)
		rc = forward_load(&cfg->forward, cfg->lease_s,
		    cfg->busy_timeout_ms, provider, src, nsrc, err, errlen);
	if (rc != IH_OK)
		goto out;
	rc = load_action_env(cfg, provider, src, nsrc, err, errlen);
	if (rc == IH_OK)
		rc = load_versions(cfg, provider, src, nsrc, err, errlen);
	if (rc != IH_OK)
		goto out;
	rc = IH_ECONFIG;

	v = config_lookup(src, nsrc, "IDEMHOOK_DB");
	if (v == NULL || *v == '\0')
		v = IH_DEFAULT_DB;
	if (config_db_check(v, err, errlen) != IH_OK)
		goto out;
	cfg->db_path = strdup(v);
	if (cfg->db_path == NULL) {
		rc = IH_ENOMEM;
		goto out;
	}

	v = config_lookup(src, nsrc, "IDEMHOOK_LOG");
	if (v != NULL) {
		cfg->log = strdup(v);
		if (cfg->log == NULL) {
			rc = IH_ENOMEM;
			goto out;
		}
	}

	v = lookup2(src, nsrc, provider, "ALERT_ACTION");
	if (v != NULL) {
		cfg->alert_action = strdup(v);
		if (cfg->alert_action == NULL) {
			rc = IH_ENOMEM;
			goto out;
		}
	}

	for (i = 0; secret_var != NULL && i < CONFIG_MAX_SECRETS; i++) {
		if (!name_join(name, sizeof(name), secret_var, nth_suffix[i],
		    ""))
			goto out;
		v = config_lookup(src, nsrc, name);
		if (v == NULL || *v == '\0')
			continue;
		if (strlen(v) > CONFIG_VALUE_MAX) {
			snprintf(err, errlen, "%s is longer than %d bytes",
			    name, CONFIG_VALUE_MAX);
			goto out;
		}
		cfg->secrets[cfg->nsecrets] = strdup(v);
		if (cfg->secrets[cfg->nsecrets] == NULL) {
			rc = IH_ENOMEM;
			goto out;
		}
		cfg->secret_len[cfg->nsecrets] = strlen(v);
		cfg->nsecrets++;
	}
	rc = IH_OK;
out:
	if (rc != IH_OK)
		config_free(cfg);
	return rc;
}

void
config_free(struct config *cfg)
{
	size_t i;

	for (i = 0; i < cfg->nsecrets; i++) {
		OPENSSL_cleanse(cfg->secrets[i], cfg->secret_len[i]);
		free(cfg->secrets[i]);
	}
	for (i = 0; i < cfg->nactions; i++) {
		free(cfg->action_pattern[i]);
		free(cfg->action_command[i]);
	}
	free(cfg->action_passenv);
	free(cfg->db_path);
	free(cfg->allow_from);
	free(cfg->log);
	free(cfg->alert_action);
	free(cfg->api_versions);
	forward_free(&cfg->forward);
	memset(cfg, 0, sizeof(*cfg));
}

/* Replaces *p, when set, with an owned copy; 0 when memory ran out. */
static int
dup_in_place(char **p)
{
	if (*p == NULL)
		return 1;
	*p = strdup(*p);
	return *p != NULL;
}

int
config_copy(struct config *dst, const struct config *src)
{
	size_t i;
	int ok = 1;

	*dst = *src;
	/* Each pointer becomes an owned copy or NULL: config_free() fits. */
	ok &= dup_in_place(&dst->db_path);
	ok &= dup_in_place(&dst->action_passenv);
	for (i = 0; i < dst->nactions; i++) {
		ok &= dup_in_place(&dst->action_pattern[i]);
		ok &= dup_in_place(&dst->action_command[i]);
	}
	ok &= dup_in_place(&dst->allow_from);
	ok &= dup_in_place(&dst->log);
	ok &= dup_in_place(&dst->alert_action);
	ok &= dup_in_place(&dst->api_versions);
	for (i = 0; i < src->nsecrets; i++) {
		dst->secrets[i] = malloc(src->secret_len[i] + 1);
		if (dst->secrets[i] == NULL) {
			dst->nsecrets = i;
			ok = 0;
			break;
		}
		memcpy(dst->secrets[i], src->secrets[i],
		    src->secret_len[i] + 1);
	}
	ok &= forward_copy(&dst->forward, &src->forward) == IH_OK;
	if (!ok) {
		config_free(dst);
		return IH_ENOMEM;
	}
	return IH_OK;
}
