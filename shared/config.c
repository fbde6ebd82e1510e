/* config.c -- layered settings: request, process environment, file. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "ih.h"

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
		explicit_bzero(v->values[i], strlen(v->values[i]));
		free(v->values[i]);
	}
	free(v->names);
	free(v->values);
	memset(v, 0, sizeof(*v));
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

int
config_vars_from_file(struct config_vars *v, const char *path, char *err,
    size_t errlen)
{
	FILE *f = NULL;
	char *buf = NULL;
	size_t len = 0, lineno = 0;
	const char *p, *end, *nl, *eq, *ns, *ne, *vs, *ve;
	int rc = IH_EIO;

	memset(v, 0, sizeof(*v));
	f = fopen(path, "r");
	if (f == NULL) {
		rc = errno == ENOENT ? IH_ENOTFOUND : IH_EIO;
		snprintf(err, errlen, "cannot open config %s: %s", path,
		    strerror(errno));
		goto out;
	}
	buf = malloc(CONFIG_FILE_MAX + 1);
	if (buf == NULL) {
		rc = IH_ENOMEM;
		goto out;
	}
	len = fread(buf, 1, CONFIG_FILE_MAX + 1, f);
	if (ferror(f)) {
		snprintf(err, errlen, "cannot read config %s", path);
		goto out;
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
		explicit_bzero(buf, len < CONFIG_FILE_MAX ? len :
		    CONFIG_FILE_MAX);
		free(buf);
	}
	if (f != NULL)
		fclose(f);
	if (rc != IH_OK)
		config_vars_free(v);
	return rc;
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
};

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
			snprintf(err, errlen, "IDEMHOOK_%s has no command", key);
			return IH_ECONFIG;
		}
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
		*dst = s->def;
		if (v != NULL && parse_long(v, s->min, s->max, dst) != IH_OK) {
			snprintf(err, errlen, "IDEMHOOK_%s must be a whole "
			    "number from %ld to %ld", s->key, s->min, s->max);
			goto out;
		}
	}

	cfg->synchronous = 2;
	v = lookup2(src, nsrc, provider, "SYNCHRONOUS");
	if (v != NULL) {
		if (strcasecmp(v, "FULL") == 0)
			cfg->synchronous = 2;
		else if (strcasecmp(v, "NORMAL") == 0)
			cfg->synchronous = 1;
		else {
			snprintf(err, errlen, "IDEMHOOK_SYNCHRONOUS must be "
			    "FULL or NORMAL");
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
	rc = IH_ECONFIG;

	v = config_lookup(src, nsrc, "IDEMHOOK_DB");
	if (v == NULL || *v == '\0')
		v = IH_DEFAULT_DB;
	cfg->db_path = strdup(v);
	if (cfg->db_path == NULL) {
		rc = IH_ENOMEM;
		goto out;
	}

	v = config_lookup(src, nsrc, "IDEMHOOK_LOG");
	if (v != NULL && (cfg->log = strdup(v)) == NULL) {
		rc = IH_ENOMEM;
		goto out;
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
		explicit_bzero(cfg->secrets[i], cfg->secret_len[i]);
		free(cfg->secrets[i]);
	}
	for (i = 0; i < cfg->nactions; i++) {
		free(cfg->action_pattern[i]);
		free(cfg->action_command[i]);
	}
	free(cfg->db_path);
	free(cfg->log);
	memset(cfg, 0, sizeof(*cfg));
}
