/*
 * config_vars.c -- one source of settings read into NAME=value pairs:
 * the process environment's IDEMHOOK_* variables, or the settings file
 * parsed line by line; and which names hold secrets.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "account_name.h"
#include "config_vars.h"
#include "ih.h"

/* FNV-1a: the slot a name starts its search at. */
static size_t
name_hash(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s != '\0') {
		h ^= (unsigned char)*s++;
		h *= 16777619u;
	}
	return h;
}

/* Enters line i in the index: a later line of a name replaces it. */
static void
index_line(struct config_vars *v, size_t i)
{
	size_t h = name_hash(v->names[i]) & (v->nslot - 1);

	while (v->slot[h] != 0 &&
	    strcmp(v->names[v->slot[h] - 1], v->names[i]) != 0)
		h = (h + 1) & (v->nslot - 1);
	v->slot[h] = i + 1;
}

/*
 * Rebuilds the index of names, twice as many slots as lines at least,
 * the last line of a name winning as in a shell environment file.
 * Without memory the index is dropped, not trusted: lookups scan.
 */
static void
reindex(struct config_vars *v)
{
	size_t want = 16, i;

	free(v->slot);
	v->slot = NULL;
	v->nslot = 0;
	while (want < 2 * v->n)
		want *= 2;
	v->slot = calloc(want, sizeof(*v->slot));
	if (v->slot == NULL)
		return;
	v->nslot = want;
	for (i = 0; i < v->n; i++)
		index_line(v, i);
}

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
	/* A line joins the index; the table doubles only when half full. */
	if (v->slot != NULL && 2 * v->n <= v->nslot)
		index_line(v, v->n - 1);
	else
		reindex(v);
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
	free(v->slot);
	memset(v, 0, sizeof(*v));
}

int
config_is_secret(const char *name)
{
	return strncmp(name, "IDEMHOOK_", 9) == 0 &&
	    (strstr(name + 9, "_SECRET") != NULL ||
	    strstr(name + 9, "_TOKEN") != NULL ||
	    strstr(name + 9, "_API_KEY") != NULL);
}

int
config_is_console_secret(const char *name)
{
	return strcmp(name, "IDEMHOOK_CONSOLE_KEY") == 0 ||
	    strcmp(name, "IDEMHOOK_CONSOLE_PASSWORD_HASH") == 0;
}

int
config_is_secret_of(const char *name, const char *secret_var)
{
	size_t n;

	const char *at;

	if (secret_var == NULL)
		return 0;
	n = strlen(secret_var);
	if (strncmp(name, secret_var, n) != 0)
		return 0;
	name += n;
	/* An account's own secret: IDEMHOOK_STRIPE_SECRET_2@acme. */
	at = strchr(name, '@');
	if (at != NULL && !account_name_ok(at + 1))
		return 0;
	if (at == NULL)
		at = name + strlen(name);
	return at == name || (at - name == 2 && name[0] == '_' &&
	    name[1] >= '2' && name[1] <= '0' + CONFIG_MAX_SECRETS);
}

/*
 * Is name the re-signing secret of forwarding (forward.h) of the
 * provider whose secret is secret_var: IDEMHOOK_<PROVIDER>_FORWARD_SECRET
 * or an account's (_FORWARD_SECRET@acme), the provider's part read off
 * secret_var (IDEMHOOK_ASAAS_TOKEN)?
 */
static int
forward_secret_of(const char *name, const char *secret_var)
{
	const char *end;
	size_t n;

	if (secret_var == NULL || strncmp(secret_var, "IDEMHOOK_", 9) != 0)
		return 0;
	end = strchr(secret_var + 9, '_');
	if (end == NULL)
		return 0;
	n = (size_t)(end - secret_var) + 1;
	return strncmp(name, secret_var, n) == 0 &&
	    strncmp(name + n, "FORWARD_SECRET", 14) == 0 &&
	    (name[n + 14] == '\0' || name[n + 14] == '@');
}

void
config_vars_keep_secrets(struct config_vars *v, const char *secret_var)
{
	size_t i, j = 0;

	for (i = 0; i < v->n; i++) {
		if ((config_is_secret(v->names[i]) &&
		    !config_is_secret_of(v->names[i], secret_var) &&
		    !forward_secret_of(v->names[i], secret_var)) ||
		    (secret_var != NULL &&
		    config_is_console_secret(v->names[i]))) {
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
	reindex(v);
}

size_t
config_env_name_len(const char *entry)
{
	const char *eq;

	if (entry[0] != 'I' || strncmp(entry, "IDEMHOOK_", 9) != 0)
		return 0;
	eq = strchr(entry, '=');
	return eq != NULL ? (size_t)(eq - entry) : 0;
}

const char *
config_env_get(char *const *envp, const char *name)
{
	size_t len = strlen(name);

	for (; envp != NULL && *envp != NULL; envp++)
		if ((*envp)[0] == name[0] && strncmp(*envp, name, len) == 0 &&
		    (*envp)[len] == '=')
			return *envp + len + 1;
	return NULL;
}

int
config_vars_from_env(struct config_vars *v, char *const *env)
{
	size_t n;
	int rc = IH_OK;

	memset(v, 0, sizeof(*v));
	for (; env != NULL && *env != NULL; env++) {
		n = config_env_name_len(*env);
		if (n == 0)
			continue;
		rc = vars_add(v, *env, n, *env + n + 1, strlen(*env + n + 1));
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
 * A value wrapped in matching quotes is the text inside them, as in a
 * shell, systemd's EnvironmentFile and .env files: 'a b' and "a b" are
 * a b.  Nothing inside is special (no escapes, no expansion); a quote of
 * the wrapping kind inside, a backslash inside double quotes (which
 * those readers take as an escape), or an opening quote without its
 * closing one at the very end is refused, since the readers disagree on
 * what it means.  A value that does not start with a quote is kept byte
 * for byte, quotes included (an action's shell command).  Returns 0, or
 * -1 with the cause in why.
 */
static int
unquote(const char **s, const char **e, const char **why)
{
	const char *p;
	char q;

	if (*s == *e || (**s != '\'' && **s != '"'))
		return 0;
	q = **s;
	if (*e - *s < 2 || (*e)[-1] != q) {
		*why = "a value that starts with a quote must end with the "
		    "same quote, the whole value wrapped in it";
		return -1;
	}
	for (p = *s + 1; p < *e - 1; p++) {
		if (*p == q) {
			*why = q == '\'' ? "a single-quoted value cannot hold "
			    "a single quote (wrap it in double quotes)" :
			    "a double-quoted value cannot hold a double "
			    "quote (wrap it in single quotes)";
			return -1;
		}
		if (q == '"' && *p == '\\') {
			*why = "a double-quoted value cannot hold a backslash "
			    "(escapes are not read: wrap it in single quotes)";
			return -1;
		}
	}
	(*s)++;
	(*e)--;
	return 0;
}

int
config_vars_from_fd(struct config_vars *v, int fd, const char *path,
    char *err, size_t errlen)
{
	char *buf = NULL;
	size_t len = 0, lineno = 0;
	ssize_t n;
	const char *p, *end, *nl, *eq, *ns, *ne, *vs, *ve, *why;
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
		if (unquote(&vs, &ve, &why) != 0) {
			rc = IH_EINVAL;
			/* The name only: the value may be a secret. */
			snprintf(err, errlen, "config %s line %zu (%.*s): %s",
			    path, lineno, (int)(ne - ns), ns, why);
			goto out;
		}
		rc = vars_add(v, ns, (size_t)(ne - ns), vs, (size_t)(ve - vs));
		if (rc != IH_OK)
			goto out;
	}
	rc = IH_OK;
out:
	/*
	 * What was read, not the whole buffer: wiping 256 KiB of pages
	 * never touched cost a plain CGI delivery 64 page faults and 165 k
	 * instructions (bench-cgi).
	 */
	if (buf != NULL) {
		OPENSSL_cleanse(buf, len);
		free(buf);
	}
	if (rc != IH_OK)
		config_vars_free(v);
	return rc;
}

int
config_vars_open(const char *path, int *fd, char *err, size_t errlen)
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
	rc = config_vars_open(path, &fd, err, errlen);
	if (rc == IH_OK)
		rc = config_vars_from_fd(v, fd, path, err, errlen);
	if (fd >= 0)
		close(fd);
	return rc;
}

const char *
config_vars_get(void *arg, const char *name)
{
	const struct config_vars *v = arg;
	size_t i, h;

	if (v->slot != NULL) {
		h = name_hash(name) & (v->nslot - 1);
		for (; v->slot[h] != 0; h = (h + 1) & (v->nslot - 1))
			if (strcmp(v->names[v->slot[h] - 1], name) == 0)
				return v->values[v->slot[h] - 1];
		return NULL;
	}
	/* The last line wins, as in a shell environment file. */
	for (i = v->n; i > 0; i--)
		if (strcmp(v->names[i - 1], name) == 0)
			return v->values[i - 1];
	return NULL;
}
