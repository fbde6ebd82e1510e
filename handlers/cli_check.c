/*
 * cli_check.c -- idemhook check: audits what a deployment gets wrong
 * most often, and says for each problem how to fix it.
 *
 *   - each required provider has a secret (all providers, or --provider);
 *   - the settings parse;
 *   - the store is outside the web server's document root (--docroot,
 *     DOCUMENT_ROOT, and well-known web directories);
 *   - the store, its -wal and -shm files and the config file are not
 *     readable by group or others, and the store's directory not writable
 *     by them;
 *   - the store exists and is in WAL mode.
 */
#include <sys/stat.h>

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_admin.h"
#include "config_find.h"
#include "ih.h"
#include "providers.h"
#include "store.h"

#define CHECK_MAX_DOCROOTS	8

/* Directories that are, by convention, served by a web server. */
static const char *const web_dirs[] = {
	"/var/www", "/srv/www", "/usr/share/nginx/html", "/srv/http", NULL
};
/* Path components that mean a served directory wherever they are. */
static const char *const web_parts[] = { "public_html", "htdocs",
    "www-data", NULL };

struct check {
	int	problems;
	int	oks;
};

static void IH_PRINTF(2, 3)
problem(struct check *ck, const char *fmt, ...)
{
	va_list ap;

	ck->problems++;
	printf("PROBLEM: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

static void IH_PRINTF(2, 3)
ok(struct check *ck, const char *fmt, ...)
{
	va_list ap;

	ck->oks++;
	printf("ok: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

/* Whether path is dir or below it (both absolute, resolved). */
static int
is_under(const char *path, const char *dir)
{
	size_t len = strlen(dir);

	while (len > 1 && dir[len - 1] == '/')
		len--;
	if (strncmp(path, dir, len) != 0)
		return 0;
	return path[len] == '/' || path[len] == '\0' || len == 1;
}

/* Whether one of path's components is part. */
static int
has_part(const char *path, const char *part)
{
	size_t len = strlen(part);
	const char *p = path;

	for (;;) {
		p = strstr(p, part);
		if (p == NULL)
			return 0;
		if ((p == path || p[-1] == '/') &&
		    (p[len] == '/' || p[len] == '\0'))
			return 1;
		p += len;
	}
}

/*
 * Resolves path as far as it exists: the real path of the file, else of
 * its directory with the name appended.  Returns 0 or -1.
 */
static int
resolve(const char *path, char *out, size_t len)
{
	char dir[PATH_MAX], real[PATH_MAX];
	const char *slash;
	size_t n;

	if (realpath(path, real) != NULL)
		return snprintf(out, len, "%s", real) < (int)len ? 0 : -1;
	slash = strrchr(path, '/');
	if (slash == NULL)
		return -1;
	n = (size_t)(slash - path);
	if (n == 0)
		n = 1;
	if (n >= sizeof(dir))
		return -1;
	memcpy(dir, path, n);
	dir[n] = '\0';
	if (realpath(dir, real) == NULL)
		return snprintf(out, len, "%s", path) < (int)len ? 0 : -1;
	return snprintf(out, len, "%s/%s", strcmp(real, "/") == 0 ? "" : real,
	    slash + 1) < (int)len ? 0 : -1;
}

static void
check_docroot(struct check *ck, const char *db, const char **docroots,
    size_t ndocroots)
{
	char rdb[PATH_MAX], rdoc[PATH_MAX];
	size_t i;
	int bad = 0;

	if (db[0] != '/') {
		problem(ck, "IDEMHOOK_DB=%s is a relative path: each program "
		    "resolves it against its own working directory; set an "
		    "absolute path such as %s", db, IH_DEFAULT_DB);
		return;
	}
	if (resolve(db, rdb, sizeof(rdb)) != 0) {
		problem(ck, "cannot resolve the store path %s", db);
		return;
	}
	for (i = 0; i < ndocroots; i++) {
		if (realpath(docroots[i], rdoc) == NULL) {
			problem(ck, "document root %s: %s: give the directory "
			    "the web server serves", docroots[i],
			    strerror(errno));
			bad = 1;
			continue;
		}
		if (is_under(rdb, rdoc)) {
			problem(ck, "the store %s is inside the document root "
			    "%s, where the web server could serve it: move it "
			    "(e.g. to %s) and set IDEMHOOK_DB", rdb, rdoc,
			    IH_DEFAULT_DB);
			bad = 1;
		}
	}
	for (i = 0; web_dirs[i] != NULL; i++)
		if (is_under(rdb, web_dirs[i])) {
			problem(ck, "the store %s is under %s, a directory web "
			    "servers serve by default: move it (e.g. to %s) "
			    "and set IDEMHOOK_DB", rdb, web_dirs[i],
			    IH_DEFAULT_DB);
			bad = 1;
		}
	for (i = 0; web_parts[i] != NULL; i++)
		if (has_part(rdb, web_parts[i])) {
			problem(ck, "the store %s is under a %s directory, "
			    "which web servers serve: move it (e.g. to %s) "
			    "and set IDEMHOOK_DB", rdb, web_parts[i],
			    IH_DEFAULT_DB);
			bad = 1;
		}
	if (!bad)
		ok(ck, "store %s is outside the document root%s", rdb,
		    ndocroots > 0 ? "" : " (no --docroot or DOCUMENT_ROOT "
		    "given; well-known web directories checked)");
}

/*
 * The settings file, like the store, must not lie under a document root:
 * the receivers refuse to serve when it does (serve.c).
 */
static void
check_config_docroot(struct check *ck, const char *conf,
    const char **docroots, size_t ndocroots)
{
	char rconf[PATH_MAX], rdoc[PATH_MAX];
	size_t i;

	if (resolve(conf, rconf, sizeof(rconf)) != 0)
		return;
	for (i = 0; i < ndocroots; i++)
		if (realpath(docroots[i], rdoc) != NULL &&
		    is_under(rconf, rdoc)) {
			problem(ck, "the settings file %s is inside the "
			    "document root %s, where the web server could "
			    "serve it, and the receivers refuse to run: move "
			    "it (e.g. to ~/idemhook/idemhook.env)", rconf,
			    rdoc);
			return;
		}
	for (i = 0; web_parts[i] != NULL; i++)
		if (has_part(rconf, web_parts[i])) {
			problem(ck, "the settings file %s is under a %s "
			    "directory, which web servers serve: move it (e.g. "
			    "to ~/idemhook/idemhook.env)", rconf,
			    web_parts[i]);
			return;
		}
}

/* Checks that path (when it exists, or must) is owner-only. */
static int
check_mode(struct check *ck, const char *what, const char *path,
    int must_exist)
{
	struct stat sb;

	if (stat(path, &sb) != 0) {
		if (errno == ENOENT && !must_exist)
			return 0;
		problem(ck, "%s %s: %s%s", what, path, strerror(errno),
		    errno == ENOENT ? ": run idemhook init (as the user the "
		    "receivers run as)" : "");
		return -1;
	}
	if ((sb.st_mode & 077) != 0) {
		problem(ck, "%s %s has mode %04o: group or others can read "
		    "it; run chmod 600 %s", what, path,
		    (unsigned)(sb.st_mode & 07777), path);
		return -1;
	}
	ok(ck, "%s %s is owner-only (%04o)", what, path,
	    (unsigned)(sb.st_mode & 07777));
	return 0;
}

static void
check_dir(struct check *ck, const char *db)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(db, '/');
	struct stat sb;
	size_t n;

	if (slash == NULL)
		return;
	n = slash == db ? 1 : (size_t)(slash - db);
	if (n >= sizeof(dir))
		return;
	memcpy(dir, db, n);
	dir[n] = '\0';
	if (stat(dir, &sb) == 0 && (sb.st_mode & 022) != 0 &&
	    (sb.st_mode & S_ISVTX) == 0)
		problem(ck, "the store's directory %s has mode %04o: group or "
		    "others can replace the store; run chmod 700 %s", dir,
		    (unsigned)(sb.st_mode & 07777), dir);
}

/*
 * Says what the settings were read from, and as whom: the file (and how
 * it was chosen), and the names (never the values) of the IDEMHOOK_*
 * variables in the environment.  Root reads files that the programs'
 * user may not, so a check run as root is flagged.
 */
static void
check_sources(const struct cli *c)
{
	char name[256] = "?", home[PATH_MAX] = "~";
	size_t i;

	config_find_user((unsigned)geteuid(), name, sizeof(name), home,
	    sizeof(home));
	printf("settings: read as user %s (uid %u)\n", name,
	    (unsigned)geteuid());
	if (c->config_path != NULL)
		printf("settings: file %s (%s)\n", c->config_path,
		    c->config_from != NULL ? c->config_from : "?");
	else
		printf("settings: no file (IDEMHOOK_CONFIG unset; none at "
		    "%s/%s or %s)\n", home, CONFIG_FIND_USER,
		    CONFIG_FIND_SYSTEM);
	printf("settings: environment:");
	for (i = 0; i < c->env.n; i++)
		printf(" %s", c->env.names[i]);
	printf("%s\n", c->env.n == 0 ? " no IDEMHOOK_* variable" : "");
	if (geteuid() == 0)
		printf("note: run as root, which can read what the programs' "
		    "user may not: run check as that user too (runuser -u "
		    "www-data -- idemhook check)\n");
}

static void
check_usage(FILE *f)
{
	fprintf(f, "usage: idemhook check [--provider NAME]... "
	    "[--docroot DIR]...\n\n"
	    "Audits the configuration and prints one line per check:\n"
	    "  - each provider's secret is set (every provider, or only "
	    "those named\n    with --provider);\n"
	    "  - the store is outside the web server's document root "
	    "(--docroot,\n    $DOCUMENT_ROOT, and /var/www, /srv/www, "
	    "public_html, ...);\n"
	    "  - the store (and its -wal, -shm files) and the IDEMHOOK_CONFIG "
	    "file\n    are not readable by group or others;\n"
	    "  - the store exists and is in WAL mode.\n"
	    "Exit: 0 no problem; 1 problems found (each with its fix); 2 "
	    "usage.\n");
}

int
cli_check(struct cli *c, int argc, char **argv)
{
	struct check ck;
	const struct config *cfg;
	const char *docroots[CHECK_MAX_DOCROOTS], *only[CLI_MAX_PROVIDERS];
	const char *v, *conf, *db;
	char path[PATH_MAX], mode[32], err[STORE_ERR_MAX];
	struct store *st;
	size_t ndoc = 0, nonly = 0, j;
	int a, r, i, want;

	memset(&ck, 0, sizeof(ck));
	for (a = 1; a < argc; a++) {
		r = cli_opt(argc, argv, &a, "--provider", &v);
		if (r > 0) {
			if (cli_provider_index(v) < 0 ||
			    nonly >= CLI_MAX_PROVIDERS)
				return CLI_EXIT_USAGE;
			only[nonly++] = v;
			continue;
		}
		if (r == 0)
			r = cli_opt(argc, argv, &a, "--docroot", &v);
		if (r > 0) {
			if (ndoc >= CHECK_MAX_DOCROOTS - 1) {
				fprintf(stderr, "idemhook: check: at most %d "
				    "--docroot\n", CHECK_MAX_DOCROOTS - 1);
				return CLI_EXIT_USAGE;
			}
			docroots[ndoc++] = v;
			continue;
		}
		if (r < 0)
			return CLI_EXIT_USAGE;
		if (strcmp(argv[a], "--help") == 0) {
			check_usage(stdout);
			return CLI_EXIT_OK;
		}
		check_usage(stderr);
		return CLI_EXIT_USAGE;
	}
	v = getenv("DOCUMENT_ROOT");
	if (v != NULL && *v != '\0')
		docroots[ndoc++] = v;

	check_sources(c);

	for (i = 0; providers_all[i] != NULL; i++) {
		want = nonly == 0;
		for (j = 0; j < nonly; j++)
			if (strcmp(only[j], providers_all[i]->name) == 0)
				want = 1;
		if (!want)
			continue;
		if (cli_config(c, (size_t)i, &cfg) != IH_OK) {
			problem(&ck, "%s: the settings above do not parse; fix "
			    "them in the environment or the IDEMHOOK_CONFIG "
			    "file", providers_all[i]->name);
			continue;
		}
		if (cfg->nsecrets == 0)
			problem(&ck, "%s: no secret: set %s (environment or "
			    "IDEMHOOK_CONFIG file)%s", providers_all[i]->name,
			    providers_all[i]->secret_var, nonly == 0 ?
			    ", or name only the providers you serve with "
			    "--provider" : "");
		else
			ok(&ck, "%s: %zu secret(s) set", providers_all[i]->name,
			    cfg->nsecrets);
	}

	conf = c->config_path;
	if (conf != NULL && *conf != '\0') {
		check_mode(&ck, "config file", conf, 1);
		check_config_docroot(&ck, conf, docroots, ndoc);
	}

	if (cli_config(c, 0, &cfg) != IH_OK) {
		problem(&ck, "cannot read the store path: fix the settings "
		    "above");
		goto out;
	}
	db = cfg->db_path;
	check_docroot(&ck, db, docroots, ndoc);
	check_dir(&ck, db);
	if (check_mode(&ck, "store", db, 1) != 0 && access(db, F_OK) != 0)
		goto out;
	snprintf(path, sizeof(path), "%s-wal", db);
	check_mode(&ck, "store WAL", path, 0);
	snprintf(path, sizeof(path), "%s-shm", db);
	check_mode(&ck, "store shared memory", path, 0);
	if (cli_store(c, &st) != IH_OK) {
		problem(&ck, "cannot open the store %s (see above)", db);
		goto out;
	}
	if (store_journal_mode(st, mode, sizeof(mode), err, sizeof(err)) !=
	    IH_OK)
		problem(&ck, "%s", err);
	else if (strcmp(mode, "wal") != 0)
		problem(&ck, "the store is in journal mode %s, not WAL: the "
		    "file system may not support WAL (network file systems "
		    "do not); keep the store on a local disk", mode);
	else
		ok(&ck, "store is in WAL mode");
out:
	if (ck.problems > 0) {
		printf("%d problem(s) found\n", ck.problems);
		return CLI_EXIT_FAIL;
	}
	printf("no problems found (%d checks)\n", ck.oks);
	return CLI_EXIT_OK;
}
