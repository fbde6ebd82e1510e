/* settings.c -- sources in order, the settings file's cache, the store. */
#include <sys/socket.h>

#include <netinet/in.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "account.h"
#include "account_name.h"
#include "config.h"
#include "config_find.h"
#include "config_vars.h"
#include "harden.h"
#include "ih.h"
#include "log.h"
#include "provider.h"
#include "redact.h"
#include "settings.h"
#include "store.h"

const char *const settings_startup_only[] = {
	"IDEMHOOK_THREADS", "IDEMHOOK_PG_WRITERS", NULL
};

long
settings_startup_count(struct settings *s, const char *name, long max,
    long def)
{
	const char *v;
	char *end;
	long n;

	v = config_vars_get(&s->env, name);
	if (v == NULL || *v == '\0')
		return def;
	errno = 0;
	n = strtol(v, &end, 10);
	if (errno != 0 || *end != '\0' || n < 1 || n > max) {
		log_emit(NULL, "provider=%s %s=%.20s: not 1 to %ld; using %ld",
		    s->p->name, name, v, max, def);
		return def;
	}
	return n;
}

int
settings_fd_tcp(int fd, char *where, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	unsigned port;

	if (getsockname(fd, (struct sockaddr *)&ss, &sl) != 0 ||
	    (ss.ss_family != AF_INET && ss.ss_family != AF_INET6))
		return 0;
	port = ss.ss_family == AF_INET ?
	    ntohs(((struct sockaddr_in *)&ss)->sin_port) :
	    ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	if (where != NULL)
		snprintf(where, len, "TCP port %u", port);
	return 1;
}

int
settings_init(struct settings *s, const struct provider *p, char **env)
{
	int rc;

	memset(s, 0, sizeof(*s));
	s->p = p;
	pthread_mutex_init(&s->mu, NULL);
	rc = config_vars_from_env(&s->env, env);
	if (rc != IH_OK)
		return rc;
	/*
	 * The copy above is the one in use, and holds this provider's
	 * secrets only; the original block need not hold any.
	 */
	s->startup_settings = s->env.n > 0;
	s->tcp = settings_fd_tcp(0, NULL, 0);
	config_vars_keep_secrets(&s->env, p->secret_var);
	harden_scrub_environ(env);
	return IH_OK;
}

/* One entry of the settings cache (settings.h). */
struct settings_cached {
	char		*account;	/* NULL: an empty slot */
	char		*front;		/* front_key()'s */
	size_t		 front_len;
	struct config	 cfg;
};

/* The admitted request parameters of one request, joined. */
#define SETTINGS_FRONT_MAX	8192

static void
cached_free(struct settings_cached *c)
{
	free(c->account);
	/* The admitted parameters may hold secrets. */
	if (c->front != NULL)
		OPENSSL_cleanse(c->front, c->front_len);
	free(c->front);
	config_free(&c->cfg);
	memset(c, 0, sizeof(*c));
}

static void
cache_clear(struct settings *s)
{
	size_t i;

	for (i = 0; i < s->ncache; i++)
		cached_free(&s->cache[i]);
	free(s->cache);
	s->cache = NULL;
	s->ncache = 0;
	s->cache_cap = 0;
	s->evict = 0;
}

/*
 * Makes room for one more entry, the array doubling up to
 * SETTINGS_CACHE_MAX: all of it at once (120 KiB, which calloc zeroed
 * where it reused the heap's top) cost a plain CGI process, which keeps
 * one entry, 22 page faults (bench-cgi).  Returns 0, or -1 without
 * memory (the array is left as it was).
 */
static int
cache_grow(struct settings *s)
{
	struct settings_cached *grown;
	size_t cap;

	if (s->ncache < s->cache_cap || s->cache_cap == SETTINGS_CACHE_MAX)
		return 0;
	cap = s->cache_cap == 0 ? 4 : s->cache_cap * 2;
	if (cap > SETTINGS_CACHE_MAX)
		cap = SETTINGS_CACHE_MAX;
	grown = realloc(s->cache, cap * sizeof(*grown));
	if (grown == NULL)
		return -1;
	memset(grown + s->cache_cap, 0,
	    (cap - s->cache_cap) * sizeof(*grown));
	s->cache = grown;
	s->cache_cap = cap;
	return 0;
}

void
settings_free(struct settings *s)
{
	cache_clear(s);
	config_vars_free(&s->env);
	config_file_free(&s->file);
	free(s->said);
	pthread_mutex_destroy(&s->mu);
}

/* The request's parameters and whether they may give settings. */
struct params {
	const struct settings	*s;
	char			**envp;
};

/*
 * Whoever can reach the socket can send parameters, so none of them may
 * choose a command, a mode, the store or a limit: only IDEMHOOK_CONFIG,
 * which names the file of real settings (config_file_refresh() checks
 * who owns it), and the secrets when nothing came at start-up.  A secret
 * lets a sender sign events, never run one.
 */
static int
param_allowed(const struct settings *s, const char *name)
{
	if (strcmp(name, "IDEMHOOK_CONFIG") == 0)
		return 1;
	return !s->startup_settings && !s->tcp &&
	    config_is_secret_of(name, s->p->secret_var);
}

static const char *
param_setting(void *arg, const char *name)
{
	const struct params *pa = arg;

	if (pa->envp == NULL || !param_allowed(pa->s, name))
		return NULL;
	return config_env_get(pa->envp, name);
}

/*
 * The admitted request parameters, each "NAME=value" and a NUL, in
 * their order, into key: two requests with the same key get the same
 * value of every name from param_setting().  Returns the key's length,
 * or (size_t)-1 when it does not fit in cap (nothing is cached then).
 */
static size_t
front_key(const struct settings *s, char **envp, char *key, size_t cap)
{
	char name[256];
	size_t len = 0, n;

	for (; envp != NULL && *envp != NULL; envp++) {
		n = config_env_name_len(*envp);
		/* A longer name is never admitted. */
		if (n == 0 || n >= sizeof(name))
			continue;
		memcpy(name, *envp, n);
		name[n] = '\0';
		if (!param_allowed(s, name))
			continue;
		n = strlen(*envp) + 1;
		if (n > cap - len)
			return (size_t)-1;
		memcpy(key + len, *envp, n);
		len += n;
	}
	return len;
}

/*
 * The cached settings of account for key, or NULL.  A file read or
 * dropped since they were loaded empties the cache first.
 */
static struct settings_cached *
cache_find(struct settings *s, const char *account, const char *key,
    size_t len)
{
	struct settings_cached *c;
	size_t i;

	if (s->cache_gen != s->file.gen) {
		cache_clear(s);
		s->cache_gen = s->file.gen;
	}
	for (i = 0; i < s->ncache; i++) {
		c = &s->cache[i];
		if (c->account != NULL && c->front_len == len &&
		    strcmp(c->account, account) == 0 &&
		    memcmp(c->front, key, len) == 0)
			return c;
	}
	return NULL;
}

/*
 * Keeps a copy of cfg, just loaded for account and key, and tags both
 * with a new serial.  Past SETTINGS_CACHE_MAX entries the oldest goes;
 * without memory nothing is kept, and the next request loads again.
 */
static void
cache_add(struct settings *s, const char *account, const char *key,
    size_t len, struct config *cfg)
{
	struct settings_cached *c;

	if (cache_grow(s) != 0)
		return;
	if (s->ncache < SETTINGS_CACHE_MAX)
		c = &s->cache[s->ncache++];
	else {
		c = &s->cache[s->evict];
		s->evict = (s->evict + 1) % SETTINGS_CACHE_MAX;
		cached_free(c);
	}
	c->front = malloc(len + 1);
	if (c->front == NULL || config_copy(&c->cfg, cfg) != IH_OK) {
		cached_free(c);
		return;
	}
	memcpy(c->front, key, len);
	c->front_len = len;
	c->account = strdup(account);
	if (c->account == NULL) {
		cached_free(c);
		return;
	}
	cfg->serial = c->cfg.serial = ++s->serial;
}

/*
 * Logs, in one line, the names of the IDEMHOOK_* request parameters that
 * were set and are not taken, so that a SetEnv or fastcgi_param that no
 * longer works, or a probe of the socket, is seen.  Values are never
 * logged.  Other providers' secrets in a shared .htaccess are expected
 * and not reported while secrets are taken from requests at all.
 */
static void
log_ignored(const struct settings *s, char **envp,
    const struct log_sink *sink)
{
	char names[LOG_LINE_MAX / 2], clean[LOG_CLEAN_SIZE];
	const char *eq;
	char **e;
	size_t len = 0, nlen;
	int n, count = 0;

	names[0] = '\0';
	for (e = envp; e != NULL && *e != NULL; e++) {
		if (strncmp(*e, "IDEMHOOK_", 9) != 0)
			continue;
		eq = strchr(*e, '=');
		if (eq == NULL || eq[1] == '\0')
			continue;
		nlen = (size_t)(eq - *e);
		log_clean(clean, *e, nlen);
		if (strlen(clean) == nlen && param_allowed(s, clean))
			continue;
		if (strlen(clean) == nlen && !s->startup_settings &&
		    !s->tcp && config_is_secret(clean))
			continue;
		count++;
		n = snprintf(names + len, sizeof(names) - len, "%s%s",
		    len > 0 ? "," : "", clean);
		if (n < 0 || (size_t)n >= sizeof(names) - len)
			break;
		len += (size_t)n;
	}
	if (count > 0)
		log_emit(sink, "provider=%s ignored_request_settings=%s "
		    "(request parameters may set only IDEMHOOK_CONFIG%s; put "
		    "the rest in the IDEMHOOK_CONFIG file)", s->p->name, names,
		    s->startup_settings || s->tcp ? "" : " and secrets");
}

/* The value of name in v, or NULL when unset or empty. */
static const char *
var_set(struct config_vars *v, const char *name)
{
	const char *val = config_vars_get(v, name);

	return val != NULL && *val != '\0' ? val : NULL;
}

/*
 * The store named twice, differently, by the start-up environment and
 * the file: the environment would win, so the programs would use one
 * store and the idemhook command, which reads the file, the other.  An
 * event accepted into a store nobody looks at is lost in all but name,
 * so this is refused rather than resolved.  A front source (the
 * command's --db) that names the store settles it.
 */
static int
db_conflict(const struct config_source *front, struct config_vars *env,
    struct config_vars *file, char *err, size_t errlen)
{
	char se[REDACT_URI_MAX], sf[REDACT_URI_MAX];
	const char *e, *f;

	if (file == NULL || (front != NULL &&
	    config_lookup(front, 1, "IDEMHOOK_DB") != NULL))
		return IH_OK;
	e = var_set(env, "IDEMHOOK_DB");
	f = var_set(file, "IDEMHOOK_DB");
	if (e == NULL || f == NULL || strcmp(e, f) == 0)
		return IH_OK;
	snprintf(err, errlen, "IDEMHOOK_DB is %s in the start-up environment "
	    "but %s in the settings file: the programs would use the first "
	    "and the idemhook command the second; name the store in the "
	    "file only (remove IDEMHOOK_DB from the web server's "
	    "configuration)", ih_redact(e, se, sizeof(se)),
	    ih_redact(f, sf, sizeof(sf)));
	return IH_ECONFIG;
}

/*
 * The one order of the sources: front (or none), the start-up
 * environment, then the file's lines (or none).  Returns how many.
 */
static size_t
source_list(struct config_source src[3], const struct config_source *front,
    struct config_vars *env, struct config_vars *file)
{
	size_t n = 0;

	if (front != NULL)
		src[n++] = *front;
	src[n].get = config_vars_get;
	src[n++].arg = env;
	if (file != NULL) {
		src[n].get = config_vars_get;
		src[n++].arg = file;
	}
	return n;
}

int
settings_sources(struct config_file *cf,
    const struct config_source *param, struct config_vars *env,
    const char *secret_var, struct config_source src[3], size_t *nsrc,
    char *err, size_t errlen)
{
	const char *path;
	char found[4096];
	size_t n;
	int flags = 0, reloaded, rc;

	n = source_list(src, param, env, NULL);
	path = config_lookup(src, 1, "IDEMHOOK_CONFIG");
	if (path != NULL)
		flags = CONFIG_FILE_REQUEST;
	else
		path = config_lookup(src, n, "IDEMHOOK_CONFIG");
	/* suEXEC drops SetEnv: then the file's fixed places (config_find.h). */
	if (path == NULL && config_find_wanted(env)) {
		rc = config_find(found, sizeof(found), err, errlen);
		if (rc == IH_OK)
			path = found;
		else if (rc != IH_ENOTFOUND)
			return IH_ECONFIG;
	}
	rc = config_file_refresh(cf, path, flags, &reloaded, err, errlen);
	if (rc == IH_ENOMEM)
		return rc;
	if (rc != IH_OK)
		return IH_ECONFIG;
	/* Secrets of other programs in a shared file are not kept. */
	if (reloaded)
		config_vars_keep_secrets(&cf->vars, secret_var);
	*nsrc = source_list(src, param, env, &cf->vars);
	return IH_OK;
}

int
settings_load_account(struct config *cfg, const char *name,
    const char *secret_var, const char *account,
    const struct config_source *front, struct config_vars *env,
    struct config_vars *file, char *err, size_t errlen)
{
	struct config_source src[3], one;
	struct account_src as;
	size_t n;

	if (db_conflict(front, env, file, err, errlen) != IH_OK)
		return IH_ECONFIG;

	n = source_list(src, front, env, file);
	account_source(&as, &one, src, n, name, secret_var, account);
	return config_load(cfg, name, secret_var, &one, 1, err, errlen);
}

int
settings_load(struct config *cfg, const char *name, const char *secret_var,
    const struct config_source *front, struct config_vars *env,
    struct config_vars *file, char *err, size_t errlen)
{
	return settings_load_account(cfg, name, secret_var, NULL, front, env,
	    file, err, errlen);
}

/*
 * Says once which settings file a program uses when nobody named one:
 * the one found in a fixed place, or that one found there is not read
 * because the start-up environment configured the program.  A file
 * named by IDEMHOOK_CONFIG is the operator's choice and not logged.
 */
static void
log_source(struct settings *s, const struct config_source *param,
    const struct log_sink *sink)
{
	char found[4096], err[512];
	int rc;

	if (config_lookup(param, 1, "IDEMHOOK_CONFIG") != NULL ||
	    var_set(&s->env, "IDEMHOOK_CONFIG") != NULL)
		return;
	if (s->file.path != NULL) {
		if (s->said != NULL && strcmp(s->said, s->file.path) == 0)
			return;
		free(s->said);
		s->said = strdup(s->file.path);
		log_emit(sink, "provider=%s settings_file=%s (found in its "
		    "fixed place: nothing was set at start-up)", s->p->name,
		    s->file.path);
		return;
	}
	if (s->said_any || config_find_wanted(&s->env))
		return;
	s->said_any = 1;
	err[0] = '\0';
	rc = config_find(found, sizeof(found), err, sizeof(err));
	if (rc == IH_OK || rc == IH_ECONFIG)
		log_emit(sink, "provider=%s settings_file=none: %s is not "
		    "read, since the start-up environment sets IDEMHOOK_* "
		    "variables (name it with IDEMHOOK_CONFIG to use it)",
		    s->p->name, rc == IH_OK ? found : "the fixed place's file");
}

int
settings_request(struct settings *s, char **params,
    const struct log_sink *sink, struct config *cfg, char *file_path,
    size_t pathlen, char *err, size_t errlen)
{
	return settings_request_account(s, params, NULL, sink, cfg,
	    file_path, pathlen, err, errlen);
}

int
settings_request_account(struct settings *s, char **params,
    const char *account, const struct log_sink *sink, struct config *cfg,
    char *file_path, size_t pathlen, char *err, size_t errlen)
{
	struct config_source src[3];
	struct params pa = { s, params };
	struct config_source param = { param_setting, &pa };
	struct settings_cached *c = NULL;
	char key[SETTINGS_FRONT_MAX];
	const char *acct = account_or_default(account);
	size_t n = 0, klen;
	int rc;

	file_path[0] = '\0';
	if (params != NULL)
		log_ignored(s, params, sink);
	klen = front_key(s, params, key, sizeof(key));
	pthread_mutex_lock(&s->mu);
	/* Other providers' secrets in a shared file are not kept here. */
	rc = settings_sources(&s->file, &param, &s->env,
	    s->p->secret_var, src, &n, err, errlen);
	if (rc == IH_OK && klen != (size_t)-1)
		c = cache_find(s, acct, key, klen);
	if (rc == IH_OK && c != NULL) {
		/* What the last request of this thread loaded stays. */
		if (cfg->serial != c->cfg.serial) {
			config_free(cfg);
			rc = config_copy(cfg, &c->cfg);
		}
	} else if (rc == IH_OK) {
		config_free(cfg);
		rc = settings_load_account(cfg, s->p->name,
		    s->p->secret_var, account, &param, &s->env,
		    &s->file.vars, err, errlen);
		if (rc == IH_OK && klen != (size_t)-1)
			cache_add(s, acct, key, klen, cfg);
	}
	if (rc != IH_OK)
		config_free(cfg);
	if (rc == IH_OK)
		log_source(s, &param, sink);
	if (rc == IH_OK && s->file.path != NULL)
		snprintf(file_path, pathlen, "%s", s->file.path);
	pthread_mutex_unlock(&s->mu);
	if (klen != (size_t)-1)
		OPENSSL_cleanse(key, klen);
	return rc;
}

int
settings_route(struct settings *s, const char *value, char *out,
    size_t outlen)
{
	struct config_source src[3];
	size_t n;
	int rc;

	pthread_mutex_lock(&s->mu);
	n = source_list(src, NULL, &s->env, &s->file.vars);
	rc = account_route(s->p->name, value, src, n, out, outlen);
	pthread_mutex_unlock(&s->mu);
	return rc;
}

int
settings_store(struct settings_store *slot, const struct config *cfg,
    char *err, size_t errlen)
{
	struct store_opts opts;
	int rc;

	if (slot->st != NULL && strcmp(slot->path, cfg->db_path) == 0 &&
	    slot->sync == cfg->synchronous &&
	    slot->busy == cfg->busy_timeout_ms)
		return IH_OK;
	settings_store_close(slot);
	slot->path = strdup(cfg->db_path);
	if (slot->path == NULL)
		return IH_ENOMEM;
	opts.path = cfg->db_path;
	opts.durable_as = store_durable_as(cfg->synchronous);
	opts.busy_timeout_ms = cfg->busy_timeout_ms;
	rc = store_open(&opts, &slot->st, err, errlen);
	if (rc != IH_OK)
		return rc;
	slot->sync = cfg->synchronous;
	slot->busy = cfg->busy_timeout_ms;
	slot->opened = 1;
	return IH_OK;
}

void
settings_store_close(struct settings_store *slot)
{
	store_close(slot->st);
	slot->st = NULL;
	free(slot->path);
	slot->path = NULL;
}
