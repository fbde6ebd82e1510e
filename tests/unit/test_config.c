/* test_config.c -- layered settings and their validation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "config.h"
#include "config_file.h"
#include "config_vars.h"
#include "ih.h"
#include "log.h"
#include "provider.h"
#include "settings.h"

static int
load(char **env, const char *file, struct config *cfg, char *err,
    size_t errlen)
{
	struct config_vars ev, fv;
	struct config_source src[2];
	char path[] = "/tmp/ih-config-XXXXXX";
	int fd, rc;

	memset(&fv, 0, sizeof(fv));
	assert_int_equal(config_vars_from_env(&ev, env), IH_OK);
	if (file != NULL) {
		fd = mkstemp(path);
		assert_true(fd >= 0);
		assert_int_equal(write(fd, file, strlen(file)),
		    (ssize_t)strlen(file));
		close(fd);
		rc = config_vars_from_file(&fv, path, err, errlen);
		unlink(path);
		if (rc != IH_OK) {
			config_vars_free(&ev);
			return rc;
		}
	}
	src[0].get = config_vars_get;
	src[0].arg = &ev;
	src[1].get = config_vars_get;
	src[1].arg = &fv;
	rc = config_load(cfg, "stripe", "IDEMHOOK_STRIPE_SECRET", src, 2, err,
	    errlen);
	config_vars_free(&ev);
	config_vars_free(&fv);
	return rc;
}

/* Loads the one setting, which must be refused (IH_ECONFIG). */
static void
refused(const char *setting, char *err, size_t errlen)
{
	char *env[2];
	struct config cfg;

	env[0] = (char *)setting;
	env[1] = NULL;
	err[0] = '\0';
	assert_int_equal(load(env, NULL, &cfg, err, errlen), IH_ECONFIG);
}

static void
defaults(void **state)
{
	char *env[] = { "PATH=/bin", NULL };
	struct config cfg;
	char err[256];

	(void)state;
	assert_int_equal(load(env, NULL, &cfg, err, sizeof(err)), IH_OK);
	assert_string_equal(cfg.db_path, IH_DEFAULT_DB);
	assert_int_equal(cfg.tolerance_s, 300);
	assert_int_equal(cfg.synchronous, 3);
	/* Each provider has its own default body limit. */
	assert_int_equal(cfg.max_body, 4L * 1024 * 1024);
	assert_int_equal(config_default_max_body("github"), 25L * 1024 * 1024);
	assert_int_equal(config_default_max_body("other"),
	    CONFIG_DEFAULT_MAX_BODY);
	assert_null(cfg.allow_from);
	assert_int_equal(cfg.nsecrets, 0);
	assert_int_equal(cfg.mode, CONFIG_MODE_AFTER_RESPONSE);
	config_free(&cfg);
}

static void
env_beats_file_and_rotation(void **state)
{
	char *env[] = { "IDEMHOOK_DB=/env.db", "IDEMHOOK_STRIPE_SECRET=new",
	    NULL };
	const char *file = "# comment\n"
	    "IDEMHOOK_DB = /file.db\n"
	    "\n"
	    "IDEMHOOK_STRIPE_SECRET_2 =  old secret with spaces \r\n"
	    "IDEMHOOK_STRIPE_TOLERANCE=60\n"
	    "IDEMHOOK_SYNCHRONOUS=normal\n"
	    "IDEMHOOK_MODE=worker\n";
	struct config cfg;
	char err[256];

	(void)state;
	assert_int_equal(load(env, file, &cfg, err, sizeof(err)), IH_OK);
	assert_string_equal(cfg.db_path, "/env.db");
	assert_int_equal(cfg.nsecrets, 2);
	assert_string_equal(cfg.secrets[0], "new");
	assert_string_equal(cfg.secrets[1], "old secret with spaces");
	assert_int_equal(cfg.tolerance_s, 60);
	assert_int_equal(cfg.synchronous, 1);
	assert_int_equal(cfg.mode, CONFIG_MODE_WORKER);
	config_free(&cfg);
}

/* SHARED (one fdatasync for several processes' commits) is accepted. */
static void
synchronous_shared(void **state)
{
	char *env[] = { "IDEMHOOK_DB=/env.db", "IDEMHOOK_SYNCHRONOUS=shared",
	    NULL };
	struct config cfg;
	char err[256];

	(void)state;
	assert_int_equal(load(env, NULL, &cfg, err, sizeof(err)), IH_OK);
	assert_int_equal(cfg.synchronous, 3);
	config_free(&cfg);
}

static void
empty_env_defers_to_file(void **state)
{
	char *env[] = { "IDEMHOOK_STRIPE_SECRET=", NULL };
	struct config cfg;
	char err[256];

	(void)state;
	assert_int_equal(load(env, "IDEMHOOK_STRIPE_SECRET=from_file\n", &cfg,
	    err, sizeof(err)), IH_OK);
	assert_int_equal(cfg.nsecrets, 1);
	assert_string_equal(cfg.secrets[0], "from_file");
	config_free(&cfg);
}

static void
bad_values_refused(void **state)
{
	static const char *const bad[] = {
		"IDEMHOOK_TOLERANCE=0", "IDEMHOOK_TOLERANCE=-5",
		"IDEMHOOK_TOLERANCE=5s", "IDEMHOOK_MAX_BODY=x",
		"IDEMHOOK_SYNCHRONOUS=OFF", "IDEMHOOK_MODE=later",
		"IDEMHOOK_BUSY_TIMEOUT_MS=99999999999999999999",
	};
	char err[256];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		refused(bad[i], err, sizeof(err));
		assert_true(strlen(err) > 0);
	}
}

static void
bad_file_refused(void **state)
{
	char *env[] = { NULL };
	struct config cfg;
	char err[256];

	(void)state;
	assert_int_equal(load(env, "IDEMHOOK_DB\n", &cfg, err, sizeof(err)),
	    IH_EINVAL);
	assert_non_null(strstr(err, "line 1"));
	assert_int_equal(load(env, "\nOTHER=1\n", &cfg, err, sizeof(err)),
	    IH_EINVAL);
	assert_non_null(strstr(err, "line 2"));
}

/*
 * A value wrapped in matching quotes is the text inside; an unmatched or
 * ambiguous quote at its start refuses the file, naming the line and the
 * setting but never the value.
 */
static void
quoted_values(void **state)
{
	static const char *const bad[] = {
		"IDEMHOOK_STRIPE_SECRET='whsec_x\n",
		"IDEMHOOK_STRIPE_SECRET=\"whsec_x'\n",
		"IDEMHOOK_STRIPE_SECRET='\n",
		"IDEMHOOK_STRIPE_SECRET='whsec_'x'\n",
		"IDEMHOOK_STRIPE_SECRET=\"whsec_\"x\"\n",
		"IDEMHOOK_STRIPE_SECRET=\"whsec_\\x\"\n",
		"IDEMHOOK_STRIPE_ACTION='a.b' /bin/true\n",
	};
	char *env[] = { NULL };
	struct config cfg;
	char err[256];
	size_t i;

	(void)state;
	assert_int_equal(load(env, "IDEMHOOK_STRIPE_SECRET='whsec_a b'\n"
	    "IDEMHOOK_STRIPE_ACTION=\"payment_intent.succeeded /bin/x\"\n"
	    "IDEMHOOK_STRIPE_ACTION_2=* sh -c 'echo \"$X\"'\n"
	    "IDEMHOOK_STRIPE_SECRET_2=''\n"
	    "IDEMHOOK_STRIPE_SECRET_3='whsec_\\\"'\n", &cfg, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(cfg.nsecrets, 2);
	assert_string_equal(cfg.secrets[0], "whsec_a b");
	assert_string_equal(cfg.secrets[1], "whsec_\\\"");
	assert_int_equal(cfg.nactions, 2);
	assert_string_equal(cfg.action_pattern[0], "payment_intent.succeeded");
	assert_string_equal(cfg.action_command[0], "/bin/x");
	assert_string_equal(cfg.action_command[1], "sh -c 'echo \"$X\"'");
	config_free(&cfg);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(load(env, bad[i], &cfg, err, sizeof(err)),
		    IH_EINVAL);
		assert_non_null(strstr(err, "line 1 (IDEMHOOK_STRIPE_"));
		assert_null(strstr(err, "whsec"));
	}
}

static void
secret_never_in_error(void **state)
{
	char *env[] = { "IDEMHOOK_STRIPE_SECRET=whsec_topsecret",
	    "IDEMHOOK_TOLERANCE=x", NULL };
	struct config cfg;
	char err[256];

	(void)state;
	assert_int_equal(load(env, NULL, &cfg, err, sizeof(err)),
	    IH_ECONFIG);
	assert_null(strstr(err, "topsecret"));
}

static void
db_location_checked(void **state)
{
	static const char *const bad[] = {
		"IDEMHOOK_DB=events.db", "IDEMHOOK_DB=./data/events.db",
		"IDEMHOOK_DB=:memory:", "IDEMHOOK_DB=file:events.db",
		"IDEMHOOK_DB=mysql://u:secretpw@h/db",
		"IDEMHOOK_DB=postgresql:h/db?password=secretpw",
		"IDEMHOOK_DB=postgres:u:secretpw@h/db",
	};
	char err[512];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		refused(bad[i], err, sizeof(err));
		assert_non_null(strstr(err, "IDEMHOOK_DB="));
		assert_null(strstr(err, "secretpw"));
		if (strncasecmp(bad[i] + 12, "postgres", 8) == 0)
			assert_non_null(strstr(err, "a URI starting with "
			    "postgresql://"));
		else if (bad[i][12] != ':' && strchr(bad[i], ':') != NULL)
			assert_non_null(strstr(err, "unknown scheme"));
		else
			assert_non_null(strstr(err, "relative path"));
	}
	assert_int_equal(config_db_check("/abs/events.db", err, sizeof(err)),
	    IH_OK);
	/* PostgreSQL: any libpq URI, either scheme, any case. */
	assert_int_equal(config_db_check("postgresql://u:secretpw@h/db", err,
	    sizeof(err)), IH_OK);
	assert_int_equal(config_db_check("postgres://h/db?password=x", err,
	    sizeof(err)), IH_OK);
	assert_int_equal(config_db_check("POSTGRESQL://h/db", err,
	    sizeof(err)), IH_OK);
}

/* Rewrites path in place: same inode, and with equal lengths same size. */
static void
rewrite(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
	assert_int_equal(fclose(f), 0);
}

static void
file_reread_when_changed(void **state)
{
	char path[] = "/tmp/ih-config-XXXXXX";
	struct config_file cf;
	char err[256];
	int fd, reloaded;
	struct stat sb0, sb1;

	(void)state;
	memset(&cf, 0, sizeof(cf));
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	rewrite(path, "IDEMHOOK_STRIPE_SECRET=aaaa\n");
	assert_int_equal(config_file_refresh(&cf, path, 0, &reloaded, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(reloaded, 1);
	assert_string_equal(config_vars_get(&cf.vars,
	    "IDEMHOOK_STRIPE_SECRET"), "aaaa");

	/* Same size, same inode, within the same second: still seen. */
	assert_int_equal(stat(path, &sb0), 0);
	rewrite(path, "IDEMHOOK_STRIPE_SECRET=bbbb\n");
	assert_int_equal(stat(path, &sb1), 0);
	assert_int_equal(sb0.st_ino, sb1.st_ino);
	assert_int_equal(sb0.st_size, sb1.st_size);
	assert_int_equal(config_file_refresh(&cf, path, 0, &reloaded, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(reloaded, 1);
	assert_string_equal(config_vars_get(&cf.vars,
	    "IDEMHOOK_STRIPE_SECRET"), "bbbb");

	/* An old, unchanged file is not read again. */
	cf.racy = 0;
	assert_int_equal(config_file_refresh(&cf, path, 0, &reloaded, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(reloaded, 0);

	/* A broken file leaves no old secret in force. */
	rewrite(path, "IDEMHOOK_STRIPE_SECRET=cccc\nbroken line\n");
	assert_int_equal(config_file_refresh(&cf, path, 0, &reloaded, err,
	    sizeof(err)), IH_EINVAL);
	assert_null(config_vars_get(&cf.vars, "IDEMHOOK_STRIPE_SECRET"));
	assert_null(cf.path);

	/* Nor does a removed one. */
	rewrite(path, "IDEMHOOK_STRIPE_SECRET=dddd\n");
	assert_int_equal(config_file_refresh(&cf, path, 0, &reloaded, err,
	    sizeof(err)), IH_OK);
	cf.racy = 0;
	unlink(path);
	assert_int_equal(config_file_refresh(&cf, path, 0, &reloaded, err,
	    sizeof(err)), IH_ENOTFOUND);
	assert_null(config_vars_get(&cf.vars, "IDEMHOOK_STRIPE_SECRET"));

	/* No file named: nothing held. */
	assert_int_equal(config_file_refresh(&cf, NULL, 0, &reloaded, err,
	    sizeof(err)), IH_OK);
	config_file_free(&cf);
}

static void
request_named_file_must_be_protected(void **state)
{
	char path[] = "/tmp/ih-config-XXXXXX";
	struct config_file cf;
	char err[256];
	int fd;

	(void)state;
	memset(&cf, 0, sizeof(cf));
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	rewrite(path, "IDEMHOOK_STRIPE_ACTION=* touch /tmp/x\n");
	assert_int_equal(chmod(path, 0622), 0);
	assert_int_equal(config_file_refresh(&cf, path, CONFIG_FILE_REQUEST,
	    NULL, err, sizeof(err)), IH_EAUTH);
	assert_non_null(strstr(err, "writable only by its owner"));
	assert_null(config_vars_get(&cf.vars, "IDEMHOOK_STRIPE_ACTION"));
	/* The operator's own start-up setting is not held to this rule. */
	assert_int_equal(config_file_refresh(&cf, path, 0, NULL, err,
	    sizeof(err)), IH_OK);
	/* Named later by a request, the same file is checked again. */
	assert_int_equal(config_file_refresh(&cf, path, CONFIG_FILE_REQUEST,
	    NULL, err, sizeof(err)), IH_EAUTH);
	assert_int_equal(chmod(path, 0600), 0);
	assert_int_equal(config_file_refresh(&cf, path, CONFIG_FILE_REQUEST,
	    NULL, err, sizeof(err)), IH_OK);
	unlink(path);
	config_file_free(&cf);
}

static void
other_providers_secrets_dropped(void **state)
{
	char *env[] = { "IDEMHOOK_STRIPE_SECRET=s1",
	    "IDEMHOOK_STRIPE_SECRET_2=s2", "IDEMHOOK_STRIPE_SECRET_9=s9",
	    "IDEMHOOK_GITHUB_SECRET=g", "IDEMHOOK_ASAAS_TOKEN=t",
	    "IDEMHOOK_STRIPE_SECRETX=x", "IDEMHOOK_DB=/x.db", NULL };
	struct config_vars v;

	(void)state;
	assert_int_equal(config_vars_from_env(&v, env), IH_OK);
	config_vars_keep_secrets(&v, "IDEMHOOK_STRIPE_SECRET");
	assert_int_equal(v.n, 3);
	assert_string_equal(config_vars_get(&v, "IDEMHOOK_STRIPE_SECRET"),
	    "s1");
	assert_string_equal(config_vars_get(&v, "IDEMHOOK_STRIPE_SECRET_2"),
	    "s2");
	assert_null(config_vars_get(&v, "IDEMHOOK_STRIPE_SECRET_9"));
	assert_null(config_vars_get(&v, "IDEMHOOK_GITHUB_SECRET"));
	assert_null(config_vars_get(&v, "IDEMHOOK_ASAAS_TOKEN"));
	assert_null(config_vars_get(&v, "IDEMHOOK_STRIPE_SECRETX"));
	assert_string_equal(config_vars_get(&v, "IDEMHOOK_DB"), "/x.db");
	config_vars_keep_secrets(&v, NULL);
	assert_int_equal(v.n, 1);
	config_vars_free(&v);
}

static void
log_clean_neutralises(void **state)
{
	char out[LOG_CLEAN_SIZE];
	char big[LOG_VALUE_MAX * 2];

	(void)state;
	log_clean(out, "evt_1\nidemhook: forged line", (size_t)-1);
	assert_null(strchr(out, '\n'));
	assert_null(strchr(out, ' '));
	log_clean(out, NULL, 0);
	assert_string_equal(out, "-");
	memset(big, 'a', sizeof(big));
	log_clean(out, big, sizeof(big));
	assert_int_equal(strlen(out), LOG_VALUE_MAX + 3);
}

/*
 * Hundreds of lines (a hundred accounts' settings) are looked up through
 * the index: the last line of a name wins, an absent name is NULL, and
 * the index follows the lines when other providers' secrets are dropped.
 */
static void
vars_index(void **state)
{
	static char buf[400][64];
	char *env[401];
	struct config_vars v;
	char name[64];
	size_t i;

	(void)state;
	for (i = 0; i < 300; i++) {
		snprintf(buf[i], sizeof(buf[i]), "IDEMHOOK_STRIPE_SECRET@a%zu=s%zu",
		    i, i);
		env[i] = buf[i];
	}
	for (; i < 350; i++) {
		/* A name again, later: its last line wins. */
		snprintf(buf[i], sizeof(buf[i]), "IDEMHOOK_STRIPE_SECRET@a%zu=t%zu",
		    i - 300, i);
		env[i] = buf[i];
	}
	for (; i < 400; i++) {
		snprintf(buf[i], sizeof(buf[i]), "IDEMHOOK_GITHUB_SECRET@g%zu=x",
		    i);
		env[i] = buf[i];
	}
	env[400] = NULL;
	assert_int_equal(config_vars_from_env(&v, env), IH_OK);
	assert_string_equal(config_vars_get(&v, "IDEMHOOK_STRIPE_SECRET@a7"),
	    "t307");
	assert_string_equal(config_vars_get(&v, "IDEMHOOK_STRIPE_SECRET@a77"),
	    "s77");
	assert_null(config_vars_get(&v, "IDEMHOOK_STRIPE_SECRET@a300"));
	assert_non_null(config_vars_get(&v, "IDEMHOOK_GITHUB_SECRET@g399"));
	config_vars_keep_secrets(&v, "IDEMHOOK_STRIPE_SECRET");
	assert_null(config_vars_get(&v, "IDEMHOOK_GITHUB_SECRET@g399"));
	for (i = 50; i < 300; i++) {
		snprintf(name, sizeof(name), "IDEMHOOK_STRIPE_SECRET@a%zu", i);
		assert_non_null(config_vars_get(&v, name));
	}
	assert_string_equal(config_vars_get(&v, "IDEMHOOK_STRIPE_SECRET@a49"),
	    "t349");
	config_vars_free(&v);
}

/* A start-up count: its value, its default when unset, and never a bad one. */
static void
startup_counts(void **state)
{
	char *env[] = { "IDEMHOOK_THREADS=16", "IDEMHOOK_PG_WRITERS=0",
	    "IDEMHOOK_A=65", "IDEMHOOK_B=8x", "IDEMHOOK_C=", NULL };
	struct provider prov;
	struct settings s;

	(void)state;
	memset(&prov, 0, sizeof(prov));
	prov.name = "stripe";
	memset(&s, 0, sizeof(s));
	s.p = &prov;
	assert_int_equal(config_vars_from_env(&s.env, env), IH_OK);
	assert_int_equal(settings_startup_count(&s, "IDEMHOOK_THREADS", 64,
	    8), 16);
	assert_int_equal(settings_startup_count(&s, "IDEMHOOK_PG_WRITERS",
	    16, 4), 4);
	assert_int_equal(settings_startup_count(&s, "IDEMHOOK_A", 64, 8), 8);
	assert_int_equal(settings_startup_count(&s, "IDEMHOOK_A", 65, 8), 65);
	assert_int_equal(settings_startup_count(&s, "IDEMHOOK_B", 64, 8), 8);
	assert_int_equal(settings_startup_count(&s, "IDEMHOOK_C", 64, 8), 8);
	assert_int_equal(settings_startup_count(&s, "IDEMHOOK_D", 64, 3), 3);
	config_vars_free(&s.env);
}

/*
 * A request's settings are loaded once per account and file version:
 * the next request keeps or copies them, and a change of the file
 * takes effect at the next request all the same.
 */
static void
request_settings_cached(void **state)
{
	char path[] = "/tmp/ih-config-XXXXXX", named[64], err[256];
	char fp[4096];
	char *env[2], *params[] = { "IDEMHOOK_TOLERANCE=5", NULL };
	struct provider prov;
	struct settings s;
	struct config a, b;
	unsigned long first;
	int fd;

	(void)state;
	memset(&prov, 0, sizeof(prov));
	prov.name = "stripe";
	prov.secret_var = "IDEMHOOK_STRIPE_SECRET";
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	rewrite(path, "IDEMHOOK_STRIPE_SECRET=aaaa\nIDEMHOOK_DB=/x.db\n"
	    "IDEMHOOK_TOLERANCE=60\nIDEMHOOK_STRIPE_SECRET@acme=cccc\n");
	snprintf(named, sizeof(named), "IDEMHOOK_CONFIG=%s", path);
	env[0] = named;
	env[1] = NULL;
	assert_int_equal(settings_init(&s, &prov, env), IH_OK);
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	assert_int_equal(settings_request_account(&s, NULL, NULL, NULL, &a,
	    fp, sizeof(fp), err, sizeof(err)), IH_OK);
	assert_int_equal(a.tolerance_s, 60);
	assert_string_equal(a.secrets[0], "aaaa");
	/* A file just written is read again until its stamp is trusted. */
	s.file.racy = 0;
	assert_int_equal(settings_request_account(&s, NULL, NULL, NULL, &a,
	    fp, sizeof(fp), err, sizeof(err)), IH_OK);
	first = a.serial;
	assert_true(first != 0);
	/* Kept as it is; a request parameter not admitted changes nothing. */
	assert_int_equal(settings_request_account(&s, params, NULL, NULL, &a,
	    fp, sizeof(fp), err, sizeof(err)), IH_OK);
	assert_true(a.serial == first);
	assert_int_equal(a.tolerance_s, 60);
	/* Another holder gets its own copy. */
	assert_int_equal(settings_request_account(&s, NULL, NULL, NULL, &b,
	    fp, sizeof(fp), err, sizeof(err)), IH_OK);
	assert_true(b.serial == first);
	assert_true(b.secrets[0] != a.secrets[0]);
	assert_string_equal(b.secrets[0], "aaaa");
	assert_string_equal(b.db_path, "/x.db");
	/* Another account has settings of its own. */
	assert_int_equal(settings_request_account(&s, NULL, "acme", NULL, &b,
	    fp, sizeof(fp), err, sizeof(err)), IH_OK);
	assert_true(b.serial != first);
	assert_string_equal(b.secrets[0], "cccc");
	/* The file changed: the next request has the new settings. */
	rewrite(path, "IDEMHOOK_STRIPE_SECRET=bbbb\nIDEMHOOK_DB=/x.db\n"
	    "IDEMHOOK_TOLERANCE=90\n");
	assert_int_equal(settings_request_account(&s, NULL, NULL, NULL, &a,
	    fp, sizeof(fp), err, sizeof(err)), IH_OK);
	assert_true(a.serial != first);
	assert_int_equal(a.tolerance_s, 90);
	assert_string_equal(a.secrets[0], "bbbb");
	/* Broken: refused, nothing left in cfg, nothing cached served. */
	rewrite(path, "broken line\n");
	assert_int_equal(settings_request_account(&s, NULL, NULL, NULL, &a,
	    fp, sizeof(fp), err, sizeof(err)), IH_ECONFIG);
	assert_int_equal(a.nsecrets, 0);
	assert_null(a.db_path);
	unlink(path);
	config_free(&a);
	config_free(&b);
	settings_free(&s);
}

/*
 * The cache grows as accounts come (settings.c cache_grow()) and past
 * SETTINGS_CACHE_MAX gives up its oldest entry: each of 300 accounts
 * gets its own secret, a recent one is served from the cache (same
 * serial), the first, given up, is loaded again.
 */
static void
request_settings_cache_grows(void **state)
{
	char path[] = "/tmp/ih-config-XXXXXX", named[64], err[256];
	char fp[4096], acct[16], want[16];
	char *env[2];
	struct provider prov;
	struct settings s;
	struct config a;
	unsigned long first, last = 0;
	FILE *f;
	int fd, i;

	(void)state;
	memset(&prov, 0, sizeof(prov));
	prov.name = "stripe";
	prov.secret_var = "IDEMHOOK_STRIPE_SECRET";
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	fprintf(f, "IDEMHOOK_STRIPE_SECRET=aaaa\nIDEMHOOK_DB=/x.db\n");
	for (i = 0; i < 300; i++)
		fprintf(f, "IDEMHOOK_STRIPE_SECRET@a%d=s%d\n", i, i);
	assert_int_equal(fclose(f), 0);
	snprintf(named, sizeof(named), "IDEMHOOK_CONFIG=%s", path);
	env[0] = named;
	env[1] = NULL;
	assert_int_equal(settings_init(&s, &prov, env), IH_OK);
	s.file.racy = 0;
	memset(&a, 0, sizeof(a));
	for (i = 0; i < 300; i++) {
		snprintf(acct, sizeof(acct), "a%d", i);
		snprintf(want, sizeof(want), "s%d", i);
		assert_int_equal(settings_request_account(&s, NULL, acct, NULL,
		    &a, fp, sizeof(fp), err, sizeof(err)), IH_OK);
		assert_string_equal(a.secrets[0], want);
		s.file.racy = 0;
		if (i == 0)
			first = a.serial;
		last = a.serial;
	}
	assert_int_equal(s.ncache, SETTINGS_CACHE_MAX);
	assert_int_equal(settings_request_account(&s, NULL, "a299", NULL, &a,
	    fp, sizeof(fp), err, sizeof(err)), IH_OK);
	assert_true(a.serial == last);
	assert_int_equal(settings_request_account(&s, NULL, "a0", NULL, &a,
	    fp, sizeof(fp), err, sizeof(err)), IH_OK);
	assert_true(a.serial != first);
	assert_string_equal(a.secrets[0], "s0");
	unlink(path);
	config_free(&a);
	settings_free(&s);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(defaults),
		cmocka_unit_test(vars_index),
		cmocka_unit_test(env_beats_file_and_rotation),
		cmocka_unit_test(synchronous_shared),
		cmocka_unit_test(empty_env_defers_to_file),
		cmocka_unit_test(bad_values_refused),
		cmocka_unit_test(bad_file_refused),
		cmocka_unit_test(quoted_values),
		cmocka_unit_test(secret_never_in_error),
		cmocka_unit_test(db_location_checked),
		cmocka_unit_test(file_reread_when_changed),
		cmocka_unit_test(request_named_file_must_be_protected),
		cmocka_unit_test(other_providers_secrets_dropped),
		cmocka_unit_test(log_clean_neutralises),
		cmocka_unit_test(startup_counts),
		cmocka_unit_test(request_settings_cached),
		cmocka_unit_test(request_settings_cache_grows),
	};

	return cmocka_run_group_tests_name("config", tests, NULL, NULL);
}
