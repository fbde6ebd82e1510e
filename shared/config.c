/* config.c -- layered settings: request, process environment, file. */
#include <sys/stat.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "action.h"
#include "allow.h"
#include "clock.h"
#include "config.h"
#include "config_find.h"
#include "ih.h"
#include "redact.h"
#include "store.h"

/* A file changed this recently may change again unseen in the same tick. */
#define CONFIG_RACY_NS	(2LL * 1000000000LL)

static int
vars_add(struct config_vars *v, const char *name, size_t nlen,
    const char *value, size_t vlen)
{
	char **nn = NULL, **nv = NULL;
	char *n = NULL, *val = NULL;
	int rc = IH_ENOMEM;

	n = strndup(name, nlen);
	val = strndup(value, vlen);
	if (n == NULL || val == NULL)
		goto out;
	nn = realloc(v->names, (v->n + 1) * sizeof(*nn));
	if (nn == NULL)
		goto out;
	v->names = nn;
	nv = realloc(v->values, (v->n + 1) * sizeof(*nv));
	if (nv == NULL)
		goto out;
	v->values = nv;
	v->names[v->n] = n;
	v->values[v->n] = val;
	v->n++;
	n = val = NULL;
	rc = IH_OK;
out:
	free(n);
	free(val);
	return rc;
}

void
config_vars_free(struct config_vars *v)
{
	size_t i;

	for (i = 0; i < v->n; i++) {
		free(v->names[i]);
		/* Values may be secrets; do not leave them in freed memory. */
		OPENSSL_cleanse(v->values[i], strlen(v->values[i]));
		free(v->values[i]);
	}
	free(v->names);
	free(v->values);
	memset(v, 0, sizeof(*v));
}

int
config_is_secret(const char *name)
{
	return strncmp(name, "IDEMHOOK_", 9) == 0 &&
	    (strstr(name + 9, "_SECRET") != NULL ||
	    strstr(name + 9, "_TOKEN") != NULL);
}

int
config_is_secret_of(const char *name, const char *secret_var)
{
	size_t n;

	if (secret_var == NULL)
		return 0;
	n = strlen(secret_var);
	if (strncmp(name, secret_var, n) != 0)
		return 0;
	name += n;
	return *name == '\0' || (name[0] == '_' && name[1] >= '2' &&
	    name[1] <= '0' + CONFIG_MAX_SECRETS && name[2] == '\0');
}

void
config_vars_keep_secrets(struct config_vars *v, const char *secret_var)
{
	size_t i, j = 0;

	for (i = 0; i < v->n; i++) {
		if (config_is_secret(v->names[i]) &&
		    !config_is_secret_of(v->names[i], secret_var)) {
			OPENSSL_cleanse(v->values[i], strlen(v->values[i]));
			free(v->values[i]);
			free(v->names[i]);
			continue;
		}
		v->names[j] = v->names[i];
		v->values[j] = v->values[i];
		j++;
	}
	v->n = j;
}

int
config_vars_from_env(struct config_vars *v, char *const *env)
{
	const char *eq;
	int rc = IH_OK;

	memset(v, 0, sizeof(*v));
	for (; env != NULL && *env != NULL; env++) {
		if (strncmp(*env, "IDEMHOOK_", 9) != 0)
			continue;
		eq = strchr(*env, '=');
		if (eq == NULL)
			continue;
		rc = vars_add(v, *env, (size_t)(eq - *env), eq + 1,
		    strlen(eq + 1));
		if (rc != IH_OK)
			goto out;
	}
out:
	if (rc != IH_OK)
		config_vars_free(v);
	return rc;
}

/* Trims blanks and a carriage return from both ends of [*s, *e). */
static void
trim(const char **s, const char **e)
{
	while (*s < *e && isspace((unsigned char)**s))
		(*s)++;
	while (*e > *s && isspace((unsigned char)(*e)[-1]))
		(*e)--;
}

/*
 * Parses the file open on fd (named path in messages) into v; the read
 * buffer is wiped before it is freed, since the lines hold secrets.
 */
static int
vars_from_fd(struct config_vars *v, int fd, const char *path, char *err,
    size_t errlen)
{
	char *buf = NULL;
	size_t len = 0, lineno = 0;
	ssize_t n;
	const char *p, *end, *nl, *eq, *ns, *ne, *vs, *ve;
	int rc = IH_EIO;

	memset(v, 0, sizeof(*v));
	buf = malloc(CONFIG_FILE_MAX + 1);
	if (buf == NULL) {
		rc = IH_ENOMEM;
		goto out;
	}
	while (len < CONFIG_FILE_MAX + 1) {
		n = read(fd, buf + len, CONFIG_FILE_MAX + 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			snprintf(err, errlen, "cannot read config %s: %s",
			    path, strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (len > CONFIG_FILE_MAX) {
		rc = IH_ETOOBIG;
		snprintf(err, errlen, "config %s is over %d bytes", path,
		    CONFIG_FILE_MAX);
		goto out;
	}
	for (p = buf, end = buf + len; p < end; p = nl + 1) {
		lineno++;
		nl = memchr(p, '\n', (size_t)(end - p));
		if (nl == NULL)
			nl = end;
		ns = p;
		ne = nl;
		trim(&ns, &ne);
		if (ns == ne || *ns == '#')
			continue;
		eq = memchr(ns, '=', (size_t)(ne - ns));
		if (eq == NULL) {
			rc = IH_EINVAL;
			snprintf(err, errlen, "config %s line %zu: expected "
			    "NAME=value", path, lineno);
			goto out;
		}
		vs = eq + 1;
		ve = ne;
		ne = eq;
		trim(&ns, &ne);
		trim(&vs, &ve);
		if (ns == ne || strncmp(ns, "IDEMHOOK_", 9) != 0 ||
		    (size_t)(ve - vs) > CONFIG_VALUE_MAX) {
			rc = IH_EINVAL;
			snprintf(err, errlen, "config %s line %zu: names start "
			    "with IDEMHOOK_ and values are at most %d bytes",
			    path, lineno, CONFIG_VALUE_MAX);
			goto out;
		}
		rc = vars_add(v, ns, (size_t)(ne - ns), vs, (size_t)(ve - vs));
		if (rc != IH_OK)
			goto out;
	}
	rc = IH_OK;
out:
	if (buf != NULL) {
		OPENSSL_cleanse(buf, CONFIG_FILE_MAX + 1);
		free(buf);
	}
	if (rc != IH_OK)
		config_vars_free(v);
	return rc;
}

/* Opens path for reading, reporting failure in err. */
static int
open_config(const char *path, int *fd, char *err, size_t errlen)
{
	*fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (*fd < 0) {
		snprintf(err, errlen, "cannot open config %s: %s", path,
		    strerror(errno));
		return errno == ENOENT ? IH_ENOTFOUND : IH_EIO;
	}
	return IH_OK;
}

int
config_vars_from_file(struct config_vars *v, const char *path, char *err,
    size_t errlen)
{
	int fd = -1, rc;

	memset(v, 0, sizeof(*v));
	rc = open_config(path, &fd, err, errlen);
	if (rc == IH_OK)
		rc = vars_from_fd(v, fd, path, err, errlen);
	if (fd >= 0)
		close(fd);
	return rc;
}

static void
stamp_of(const struct stat *sb, struct config_stamp *st)
{
	memset(st, 0, sizeof(*st));
	st->dev = sb->st_dev;
	st->ino = sb->st_ino;
	st->size = sb->st_size;
	st->mtim = sb->st_mtim;
	st->ctim = sb->st_ctim;
}

static int
stamp_equal(const struct config_stamp *a, const struct config_stamp *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	    a->mtim.tv_sec == b->mtim.tv_sec &&
	    a->mtim.tv_nsec == b->mtim.tv_nsec &&
	    a->ctim.tv_sec == b->ctim.tv_sec &&
	    a->ctim.tv_nsec == b->ctim.tv_nsec;
}

/*
 * Was the file changed so recently that a later edit could keep every
 * field of the stamp?  File times advance in clock ticks (or seconds on
 * some file systems), so a same-size rewrite within one tick is
 * invisible; such a stamp is not trusted and the file is read again.
 */
static int
stamp_racy(const struct config_stamp *st)
{
	long long t, m, c;

	/* A clock that cannot be read gives 0: the stamp is not trusted. */
	t = (long long)clock_wall_ns();
	m = (long long)st->mtim.tv_sec * 1000000000LL + st->mtim.tv_nsec;
	c = (long long)st->ctim.tv_sec * 1000000000LL + st->ctim.tv_nsec;
	return t - m < CONFIG_RACY_NS || t - c < CONFIG_RACY_NS;
}

/* The owner of the running program file, or (uid_t)-1. */
static uid_t
program_owner(void)
{
	struct stat sb;

	if (stat("/proc/self/exe", &sb) != 0)
		return (uid_t)-1;
	return sb.st_uid;
}

/* CONFIG_FILE_REQUEST's rule: see config.h. */
static int
check_owner(const struct stat *sb, const char *path, char *err,
    size_t errlen)
{
	if (S_ISREG(sb->st_mode) && (sb->st_mode & 022) == 0 &&
	    (sb->st_uid == 0 || sb->st_uid == geteuid() ||
	    sb->st_uid == program_owner()))
		return IH_OK;
	snprintf(err, errlen, "a config named by a request parameter must be "
	    "a file writable only by its owner (root, this program's user or "
	    "its owner): %s", path);
	return IH_EAUTH;
}

void
config_file_free(struct config_file *cf)
{
	config_vars_free(&cf->vars);
	free(cf->path);
	memset(cf, 0, sizeof(*cf));
}

int
config_file_refresh(struct config_file *cf, const char *path, int flags,
    int *reloaded, char *err, size_t errlen)
{
	struct config_stamp now;
	struct config_vars fresh;
	struct stat sb;
	char *copy = NULL;
	int fd = -1, rc;

	if (reloaded != NULL)
		*reloaded = 0;
	if (path == NULL || *path == '\0') {
		config_file_free(cf);
		return IH_OK;
	}
	if (cf->path != NULL && strcmp(cf->path, path) == 0 &&
	    cf->flags == flags && !cf->racy) {
		if (stat(path, &sb) != 0) {
			rc = errno == ENOENT ? IH_ENOTFOUND : IH_EIO;
			snprintf(err, errlen, "cannot open config %s: %s",
			    path, strerror(errno));
			goto out;
		}
		stamp_of(&sb, &now);
		if (stamp_equal(&now, &cf->stamp))
			return IH_OK;
	}
	/* The stamp comes from the descriptor that is read, before reading. */
	rc = open_config(path, &fd, err, errlen);
	if (rc != IH_OK)
		goto out;
	if (fstat(fd, &sb) != 0) {
		rc = IH_EIO;
		snprintf(err, errlen, "cannot stat config %s: %s", path,
		    strerror(errno));
		goto out;
	}
	if ((flags & CONFIG_FILE_REQUEST) != 0) {
		rc = check_owner(&sb, path, err, errlen);
		if (rc != IH_OK)
			goto out;
	}
	copy = strdup(path);
	if (copy == NULL) {
		rc = IH_ENOMEM;
		goto out;
	}
	rc = vars_from_fd(&fresh, fd, path, err, errlen);
	if (rc != IH_OK)
		goto out;
	config_file_free(cf);
	cf->vars = fresh;
	cf->path = copy;
	copy = NULL;
	cf->flags = flags;
	stamp_of(&sb, &cf->stamp);
	cf->racy = stamp_racy(&cf->stamp);
	if (reloaded != NULL)
		*reloaded = 1;
out:
	if (fd >= 0)
		close(fd);
	free(copy);
	/* Fail closed: old lines and their secrets do not outlive the file. */
	if (rc != IH_OK)
		config_file_free(cf);
	return rc;
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
	if (store_is_postgres(db))
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

const char *
config_vars_get(void *arg, const char *name)
{
	const struct config_vars *v = arg;
	size_t i;

	/* The last line wins, as in a shell environment file. */
	for (i = v->n; i > 0; i--)
		if (strcmp(v->names[i - 1], name) == 0)
			return v->values[i - 1];
	return NULL;
}

int
config_sources_refresh(struct config_file *cf,
    const struct config_source *param, struct config_vars *env,
    const char *secret_var, struct config_source src[3], size_t *nsrc,
    char *err, size_t errlen)
{
	const char *path;
	char found[4096];
	size_t n = 0;
	int flags = 0, reloaded, rc;

	src[n++] = *param;
	path = config_lookup(src, n, "IDEMHOOK_CONFIG");
	if (path != NULL)
		flags = CONFIG_FILE_REQUEST;
	src[n].get = config_vars_get;
	src[n++].arg = env;
	if (path == NULL)
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
	src[n].get = config_vars_get;
	src[n++].arg = &cf->vars;
	*nsrc = n;
	return IH_OK;
}

const char *
config_lookup(const struct config_source *src, size_t nsrc,
    const char *name)
{
	const char *v;
	size_t i;

	/*
	 * An empty value counts as unset, so that a web server config that
	 * always passes a variable (lighttpd's hooks files) can leave the
	 * value to the config file.
	 */
	for (i = 0; i < nsrc; i++) {
		v = src[i].get(src[i].arg, name);
		if (v != NULL && *v != '\0')
			return v;
	}
	return NULL;
}

/* Looks up IDEMHOOK_<PROVIDER>_<key>, then IDEMHOOK_<key>. */
static const char *
lookup2(const struct config_source *src, size_t nsrc, const char *provider,
    const char *key)
{
	char name[128];
	size_t i;
	int n;
	const char *v;

	n = snprintf(name, sizeof(name), "IDEMHOOK_%s_%s", provider, key);
	if (n < 0 || (size_t)n >= sizeof(name))
		return NULL;
	for (i = 9; name[i] != '\0' && name[i] != '_'; i++)
		name[i] = (char)toupper((unsigned char)name[i]);
	v = config_lookup(src, nsrc, name);
	if (v != NULL)
		return v;
	n = snprintf(name, sizeof(name), "IDEMHOOK_%s", key);
	if (n < 0 || (size_t)n >= sizeof(name))
		return NULL;
	return config_lookup(src, nsrc, name);
}

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
		if (i == 0)
			snprintf(key, sizeof(key), "ACTION");
		else
			snprintf(key, sizeof(key), "ACTION_%zu", i + 1);
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

int
config_load(struct config *cfg, const char *provider, const char *secret_var,
    const struct config_source *src, size_t nsrc, char *err, size_t errlen)
{
	const char *v;
	char name[128];
	size_t i;
	int n, rc = IH_ECONFIG;

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
	if (rc != IH_OK)
		goto out;
	rc = load_action_env(cfg, provider, src, nsrc, err, errlen);
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
		if (i == 0)
			n = snprintf(name, sizeof(name), "%s", secret_var);
		else
			n = snprintf(name, sizeof(name), "%s_%zu", secret_var,
			    i + 1);
		if (n < 0 || (size_t)n >= sizeof(name))
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
	memset(cfg, 0, sizeof(*cfg));
}
