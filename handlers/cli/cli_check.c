/*
 * cli_check.c -- idemhook check: audits what a deployment gets wrong
 * most often, and says for each problem how to fix it.
 *
 *   - each required provider has a secret (all providers, or --provider);
 *   - the settings parse;
 *   - the store is outside the web server's document root (--docroot,
 *     DOCUMENT_ROOT, and well-known web directories);
 *   - the store, its -wal, -shm, -lock, -sync, -sigfail (bad
 *     signature counts) and -proc (plain CGI's slots) files are
 *     owner-only regular files (no symbolic link), owned by the
 *     programs' user (--user) or the invoking user,
 *     and the store's directory is writable by nobody else (sticky or
 *     not);
 *   - the settings file is readable by no other user: 0600 owned by the
 *     programs' user, or 0640 owned by root with their group, as the
 *     README installs it; and the programs' user can read it;
 *   - the store exists and is in WAL mode, with the schema objects
 *     this build creates and no others (a planted trigger is reported);
 *   - each forwarding destination's limits are the store's (which the
 *     last process to claim wrote: another with other settings differs).
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_args.h"
#include "cli_check.h"
#include "cli_check_actions.h"
#include "cli_check_build.h"
#include "cli_check_accounts.h"
#include "cli_check_files.h"
#include "cli_check_held.h"
#include "cli_check_sources.h"
#include "cli_check_store.h"
#include "cli_text.h"
#include "check_programs.h"
#include "config_find.h"
#include "console_auth.h"
#include "docroot.h"
#include "forward.h"
#include "ih.h"
#include "providers.h"
#include "redact.h"
#include "settings.h"
#include "store.h"

#define CHECK_MAX_DOCROOTS	8
#define CHECK_MAX_GROUPS	64

/* Directories that are, by convention, served by a web server. */
static const char *const web_dirs[] = {
	"/var/www", "/srv/www", "/usr/share/nginx/html", "/srv/http", NULL
};
/* Path components that mean a served directory wherever they are. */
static const char *const web_parts[] = { "public_html", "htdocs",
    "www-data", NULL };

struct check {
	int	 problems;
	int	 oks;
	/* Who may own the store: the invoking user, and the programs'. */
	uid_t	 self;
	int	 has_user;
	uid_t	 uid;		/* --user */
	const char *user;
	int	 ngroups;
	gid_t	 groups[CHECK_MAX_GROUPS];	/* --user's groups */
};

static void IH_PRINTF(2, 3)
problem(struct check *ck, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cli_check_vsay(0, &ck->problems, &ck->oks, fmt, ap);
	va_end(ap);
}

static void IH_PRINTF(2, 3)
ok(struct check *ck, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cli_check_vsay(1, &ck->problems, &ck->oks, fmt, ap);
	va_end(ap);
}

/* The name of uid, or its number, in buf. */
static const char *
user_name(uid_t uid, char *buf, size_t len)
{
	struct passwd *pw = getpwuid(uid);

	if (pw != NULL)
		snprintf(buf, len, "%s", pw->pw_name);
	else
		snprintf(buf, len, "%lu", (unsigned long)uid);
	return buf;
}

/* Whether uid may own the store: the invoking user or --user. */
static int
owner_ok(const struct check *ck, uid_t uid)
{
	return uid == ck->self || (ck->has_user && uid == ck->uid);
}

/* Whether --user can read a file of sb's owner, group and mode. */
static int
user_reads(const struct check *ck, const struct stat *sb)
{
	int i;

	if (ck->uid == 0 || sb->st_uid == ck->uid)
		return ck->uid == 0 || (sb->st_mode & S_IRUSR) != 0;
	for (i = 0; i < ck->ngroups; i++)
		if (ck->groups[i] == sb->st_gid)
			return (sb->st_mode & S_IRGRP) != 0;
	return (sb->st_mode & S_IROTH) != 0;
}

/* Resolves --user NAME into ck.  Returns 0, or -1 (printed). */
static int
check_user(struct check *ck, const char *name)
{
	struct passwd *pw = getpwnam(name);
	int n = CHECK_MAX_GROUPS;

	if (pw == NULL) {
		cli_errorf("check: --user %s: no such user", name);
		return -1;
	}
	ck->has_user = 1;
	ck->user = name;
	ck->uid = pw->pw_uid;
	if (getgrouplist(name, pw->pw_gid, ck->groups, &n) < 0)
		n = CHECK_MAX_GROUPS;
	ck->ngroups = n;
	return 0;
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

static void
check_docroot(struct check *ck, const char *db, const char **docroots,
    size_t ndocroots)
{
	char rdb[PATH_MAX], rdoc[PATH_MAX], shown[REDACT_URI_MAX];
	size_t i;
	int bad = 0;

	/* config_load() refuses anything but an absolute path. */
	if (docroot_resolve(db, rdb, sizeof(rdb)) != 0) {
		problem(ck, "cannot resolve the store path %s",
		    ih_redact(db, shown, sizeof(shown)));
		return;
	}
	/* Every line below shows the store's location redacted. */
	ih_redact(rdb, shown, sizeof(shown));
	for (i = 0; i < ndocroots; i++) {
		if (realpath(docroots[i], rdoc) == NULL) {
			problem(ck, "document root %s: %s: give the directory "
			    "the web server serves", docroots[i],
			    strerror(errno));
			bad = 1;
			continue;
		}
		if (docroot_contains(rdoc, rdb)) {
			problem(ck, "the store %s is inside the document root "
			    "%s, where the web server could serve it: move it "
			    "(e.g. to %s) and set IDEMHOOK_DB", shown, rdoc,
			    check_store_advice());
			bad = 1;
		}
	}
	for (i = 0; web_dirs[i] != NULL; i++)
		if (docroot_contains(web_dirs[i], rdb)) {
			problem(ck, "the store %s is under %s, a directory web "
			    "servers serve by default: move it (e.g. to %s) "
			    "and set IDEMHOOK_DB", shown, web_dirs[i],
			    check_store_advice());
			bad = 1;
		}
	for (i = 0; web_parts[i] != NULL; i++)
		if (has_part(rdb, web_parts[i])) {
			problem(ck, "the store %s is under a %s directory, "
			    "which web servers serve: move it (e.g. to %s) "
			    "and set IDEMHOOK_DB", shown, web_parts[i],
			    check_store_advice());
			bad = 1;
		}
	if (!bad)
		ok(ck, "store %s is outside the document root%s", shown,
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

	if (docroot_resolve(conf, rconf, sizeof(rconf)) != 0)
		return;
	for (i = 0; i < ndocroots; i++)
		if (realpath(docroots[i], rdoc) != NULL &&
		    docroot_contains(rdoc, rconf)) {
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

/*
 * Checks the store file at path (when it exists, or must): a regular
 * file, not a symbolic link, owner-only, owned by the invoking user or
 * --user.  Returns 0, or -1 when there is a problem (printed).
 */
static int
check_mode(struct check *ck, const char *what, const char *path,
    int must_exist)
{
	char who[64];
	struct stat sb;
	int bad = 0;

	if (lstat(path, &sb) != 0) {
		if (errno == ENOENT && !must_exist)
			return 0;
		problem(ck, "%s %s: %s%s", what, path, strerror(errno),
		    errno == ENOENT ? ": run idemhook init (as the user the "
		    "receivers run as)" : "");
		return -1;
	}
	if (S_ISLNK(sb.st_mode)) {
		problem(ck, "%s %s is a symbolic link: the programs refuse "
		    "to open it; remove it and let them create the file "
		    "(whoever made it can write the store's directory: see its "
		    "mode)",
		    what, path);
		return -1;
	}
	if (!S_ISREG(sb.st_mode)) {
		problem(ck, "%s %s is not a regular file: remove it", what,
		    path);
		return -1;
	}
	if ((sb.st_mode & 077) != 0) {
		problem(ck, "%s %s has mode %04o: group or others can read "
		    "it; run chmod 600 %s", what, path,
		    (unsigned)(sb.st_mode & 07777), path);
		bad = 1;
	}
	if (!owner_ok(ck, sb.st_uid)) {
		problem(ck, "%s %s belongs to %s, neither the user the "
		    "programs run as (--user%s%s) nor the one running this "
		    "check: chown it to the programs' user", what, path,
		    user_name(sb.st_uid, who, sizeof(who)),
		    ck->has_user ? " " : ", not given",
		    ck->has_user ? ck->user : "");
		bad = 1;
	}
	if (bad)
		return -1;
	ok(ck, "%s %s is owner-only (%04o), owned by %s", what, path,
	    (unsigned)(sb.st_mode & 07777),
	    user_name(sb.st_uid, who, sizeof(who)));
	return 0;
}

/*
 * Checks the settings file: no other user may read it (0600 owned by the
 * programs' user, or 0640 owned by root with the programs' group, as the
 * README installs it), nobody but its owner write it, its owner is root,
 * the invoking user or --user, and --user can read it.
 */
static void
check_config(struct check *ck, const char *path)
{
	char who[64];
	struct stat sb;
	int bad = 0;

	if (stat(path, &sb) != 0) {
		problem(ck, "config file %s: %s", path, strerror(errno));
		return;
	}
	if ((sb.st_mode & 007) != 0 || (sb.st_mode & 020) != 0) {
		problem(ck, "config file %s has mode %04o: %s can %s it; run "
		    "chmod 640 %s (owner root, group the programs' user's) or "
		    "chmod 600 %s (owned by the programs' user)", path,
		    (unsigned)(sb.st_mode & 07777),
		    (sb.st_mode & 007) != 0 ? "every user" : "its group",
		    (sb.st_mode & 007) != 0 ? "read" : "change", path, path);
		bad = 1;
	}
	if (sb.st_uid != 0 && !owner_ok(ck, sb.st_uid)) {
		problem(ck, "config file %s belongs to %s, who can change its "
		    "secrets and actions: chown it to root (or to the "
		    "programs' user)", path,
		    user_name(sb.st_uid, who, sizeof(who)));
		bad = 1;
	}
	if (ck->has_user && !user_reads(ck, &sb)) {
		problem(ck, "config file %s cannot be read by %s, the user the "
		    "programs run as: chgrp it to that user's group (mode "
		    "0640) or chown it to that user (mode 0600)", path,
		    ck->user);
		bad = 1;
	}
	if (!bad)
		ok(ck, "config file %s is readable by no other user (%04o, "
		    "owned by %s)", path, (unsigned)(sb.st_mode & 07777),
		    user_name(sb.st_uid, who, sizeof(who)));
}

/*
 * Checks the store's directory: nobody but its owner may write it, even
 * with the sticky bit (another user could create the -wal, -shm or
 * -lock file, or the store itself, first), and its owner is the invoking
 * user or --user.
 */
static void
check_dir(struct check *ck, const char *db)
{
	char dir[PATH_MAX], who[64];
	const char *slash = strrchr(db, '/');
	struct stat sb;
	size_t n;
	int bad = 0;

	if (slash == NULL)
		return;
	n = slash == db ? 1 : (size_t)(slash - db);
	if (n >= sizeof(dir))
		return;
	memcpy(dir, db, n);
	dir[n] = '\0';
	if (stat(dir, &sb) != 0)
		return;
	if ((sb.st_mode & 022) != 0) {
		problem(ck, "the store's directory %s has mode %04o: %s can "
		    "create or replace the store and its -wal, -shm and -lock "
		    "files%s; give the store a directory of its own: run chmod "
		    "700 %s", dir, (unsigned)(sb.st_mode & 07777),
		    (sb.st_mode & 002) != 0 ? "every user" : "its group",
		    (sb.st_mode & S_ISVTX) != 0 ? " (the sticky bit does not "
		    "prevent that)" : "", dir);
		bad = 1;
	}
	if (!owner_ok(ck, sb.st_uid)) {
		problem(ck, "the store's directory %s belongs to %s, neither "
		    "the user the programs run as (--user%s%s) nor the one "
		    "running this check: chown it to the programs' user", dir,
		    user_name(sb.st_uid, who, sizeof(who)),
		    ck->has_user ? " " : ", not given",
		    ck->has_user ? ck->user : "");
		bad = 1;
	}
	if (!bad)
		ok(ck, "the store's directory %s is writable only by its "
		    "owner %s", dir, user_name(sb.st_uid, who, sizeof(who)));
}

/*
 * A start-up setting written in the settings file is never read there:
 * the programs take it from their start-up environment only.
 */
static void
check_startup_only(struct check *ck, struct cli *c)
{
	size_t i;

	for (i = 0; settings_startup_only[i] != NULL; i++)
		if (config_vars_get(&c->file, settings_startup_only[i]) !=
		    NULL)
			problem(ck, "%s in %s is not read: the programs take "
			    "it from their start-up environment only "
			    "(lighttpd bin-environment, FcgidInitialEnv, "
			    "the spawn-fcgi unit); move it there",
			    settings_startup_only[i], c->config_path);
}

/* A destination the loader took (it refuses a malformed one). */
static void
check_forward(struct check *ck, const char *provider,
    const struct config_forward *fw)
{
	char shown[REDACT_URI_MAX], rate[48];

	snprintf(rate, sizeof(rate), "no rate limit");
	if (fw->rate_ms > 0)
		snprintf(rate, sizeof(rate), "at most %g a second", fw->rate);
	ok(ck, "%s: %s%s%sforwards each event to %s (signed %s, %ld s "
	    "timeout, at most %ld in flight, %s)", provider,
	    fw->account != NULL ? "account " : "",
	    fw->account != NULL ? fw->account : "", fw->account != NULL ?
	    " " : "", ih_redact(fw->url, shown, sizeof(shown)),
	    fw->sign == FORWARD_SIGN_STANDARD ? "Standard Webhooks" :
	    fw->sign == FORWARD_SIGN_AS_RECEIVED ? "as received" :
	    "with the provider's scheme", fw->timeout_s, fw->concurrency,
	    rate);
}

static void
check_usage(FILE *f)
{
	fprintf(f, "usage: idemhook check [--provider NAME]... "
	    "[--docroot DIR]... [--user USER]\n\n"
	    "Audits the configuration and prints one line per check:\n"
	    "  - each provider's secret is set (every provider, or only "
	    "those named\n    with --provider), and its lease is longer than "
	    "its action timeout;\n"
	    "  - the store is outside the web server's document root "
	    "(--docroot,\n    $DOCUMENT_ROOT, and /var/www, /srv/www, "
	    "public_html, ...);\n"
	    "  - the store and its -wal, -shm, -lock, -sync, -sigfail and "
	    "-proc files\n    are owner-only files, not symbolic links, owned "
	    "by USER (the user the\n    programs run as) or by the user "
	    "running the check; their directory\n    is writable by nobody "
	    "else;\n"
	    "  - the IDEMHOOK_CONFIG file is readable by no other user: 0640 "
	    "owned by\n    root with USER's group, or 0600 owned by USER; "
	    "and USER can read it;\n"
	    "  - the store exists and is in WAL mode, with the schema objects "
	    "this build\n    creates and no others.\n"
	    "Exit: 0 no problem; 1 problems found (each with its fix); 2 "
	    "usage.\n");
}

/* One finding of the store's backend audit (store_audit()). */
static int
check_audit(void *arg, const struct store_audit *a)
{
	struct check *ck = arg;

	if (strcmp(a->name, "journal_mode") == 0 && a->ok)
		ok(ck, "store is in WAL mode");
	else if (strcmp(a->name, "journal_mode") == 0)
		problem(ck, "the store is in journal mode %s, not WAL: %s",
		    a->value, a->advice);
	else if (strcmp(a->name, "schema") == 0 && !a->ok)
		problem(ck, "the store's schema differs from this build's: "
		    "%s; %s", a->value, a->advice);
	else if (a->ok)
		ok(ck, "store %s: %s", a->name, check_audit_value(a));
	else
		problem(ck, "store %s is %s: %s", a->name, a->value,
		    a->advice);
	return IH_OK;
}

int
cli_check(struct cli *c, int argc, char **argv)
{
	struct check ck;
	const struct config *cfg;
	const char *docroots[CHECK_MAX_DOCROOTS], *only[CLI_MAX_PROVIDERS];
	const char *v, *conf, *db;
	char path[PATH_MAX], err[STORE_ERR_MAX], owner[64];
	char shown[REDACT_URI_MAX];
	struct store *st;
	size_t ndoc = 0, nonly = 0, j;
	int a, r, i, want, before, checked[CLI_MAX_PROVIDERS];
	long slot;

	memset(&ck, 0, sizeof(ck));
	memset(checked, 0, sizeof(checked));
	ck.self = geteuid();
	for (a = 1; a < argc; a++) {
		r = cli_opt(argc, argv, &a, "--provider", &v);
		if (r > 0) {
			if (cli_provider_index(v) < 0 ||
			    nonly >= CLI_MAX_PROVIDERS)
				return CLI_EXIT_USAGE;
			only[nonly++] = v;
			continue;
		}
		if (r == 0) {
			r = cli_opt(argc, argv, &a, "--user", &v);
			if (r > 0 && check_user(&ck, v) != 0)
				return CLI_EXIT_USAGE;
			if (r > 0)
				continue;
		}
		if (r == 0)
			r = cli_opt(argc, argv, &a, "--docroot", &v);
		if (r > 0) {
			if (ndoc >= CHECK_MAX_DOCROOTS - 1) {
				cli_errorf("check: at most %d --docroot",
				    CHECK_MAX_DOCROOTS - 1);
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
	if (!ck.has_user && check_programs_user(c->config_path, owner,
	    sizeof(owner)) != NULL && check_user(&ck, owner) != 0)
		return CLI_EXIT_USAGE;
	cli_check_sources(c);
	cli_check_build(c, &ck.problems, &ck.oks);
	check_startup_only(&ck, c);
	cli_check_console(c, &ck.problems, &ck.oks);
	cli_check_files(c, ck.has_user, ck.uid, docroots, ndoc, &ck.problems,
	    &ck.oks);
	ck.problems += check_programs(c);

	for (i = 0; providers_all[i] != NULL; i++) {
		want = nonly == 0;
		for (j = 0; j < nonly; j++)
			if (strcmp(only[j], providers_all[i]->name) == 0)
				want = 1;
		if (!want)
			continue;
		if (i < CLI_MAX_PROVIDERS)
			checked[i] = 1;
		if (cli_config(c, (size_t)i, &cfg) != IH_OK) {
			problem(&ck, "%s: the settings above do not parse; fix "
			    "them in the environment or the IDEMHOOK_CONFIG "
			    "file", providers_all[i]->name);
			continue;
		}
		if (cfg->nsecrets == 0)
			problem(&ck, "%s: no secret: set %s (environment or "
			    "IDEMHOOK_CONFIG file; one set only in the web "
			    "server's configuration is not visible here)%s",
			    providers_all[i]->name,
			    providers_all[i]->secret_var, nonly == 0 ?
			    ", or name only the providers you serve with "
			    "--provider" : "");
		else
			ok(&ck, "%s: %zu secret(s) set", providers_all[i]->name,
			    cfg->nsecrets);
		if (cfg->nsecrets > 0 || nonly > 0)
			cli_check_actions(providers_all[i]->name, cfg,
			    &ck.problems, &ck.oks);
		if (strcmp(providers_all[i]->name, "github") == 0)
			cli_check_held_notes(c, cfg->nsecrets > 0);
		/* The settings loader refuses a shorter lease (see above). */
		if (cfg->nactions > 0)
			ok(&ck, "%s: IDEMHOOK_LEASE %ld s leaves room for "
			    "the commit after IDEMHOOK_ACTION_TIMEOUT %ld s",
			    providers_all[i]->name, cfg->lease_s,
			    cfg->action_timeout_s);
		/* The loader refused a malformed destination (forward.h). */
		if (cfg->forward.dest.url != NULL)
			check_forward(&ck, providers_all[i]->name,
			    &cfg->forward.dest);
		for (j = 0; j < cfg->forward.nacct; j++)
			check_forward(&ck, providers_all[i]->name,
			    &cfg->forward.acct[j]);
	}

	cli_check_accounts(c, &ck.problems, &ck.oks);

	conf = c->config_path;
	if (conf != NULL && *conf != '\0') {
		check_config(&ck, conf);
		check_config_docroot(&ck, conf, docroots, ndoc);
	}

	if (cli_config(c, 0, &cfg) != IH_OK) {
		problem(&ck, "cannot read the store path: fix the settings "
		    "above");
		goto out;
	}
	db = cfg->db_path;
	if (store_is_postgres(db))
		/* A server's store: no file here to check. */
		goto open;
	cli_check_fs(db, &ck.problems, &ck.oks);
	before = ck.problems;	/* A store to move is not to be made. */
	check_docroot(&ck, db, docroots, ndoc);
	check_dir(&ck, db);
	if (ck.problems == before && check_mode(&ck, "store", db, 1) != 0 &&
	    access(db, F_OK) != 0)
		goto out;
	snprintf(path, sizeof(path), "%s-wal", db);
	check_mode(&ck, "store WAL", path, 0);
	snprintf(path, sizeof(path), "%s-shm", db);
	check_mode(&ck, "store shared memory", path, 0);
	snprintf(path, sizeof(path), "%s-lock", db);
	check_mode(&ck, "store lock", path, 0);
	snprintf(path, sizeof(path), "%s-sync", db);
	check_mode(&ck, "store sync mark", path, 0);
	snprintf(path, sizeof(path), "%s-sigfail", db);
	check_mode(&ck, "store bad-signature counts", path, 0);
	/* Plain CGI's processing slots (cgi_slot.h): the gate, then each. */
	for (slot = 0; slot <= cfg->cgi_processors; slot++) {
		if (slot == 0)
			snprintf(path, sizeof(path), "%s-proc", db);
		else
			snprintf(path, sizeof(path), "%s-proc%ld", db, slot);
		check_mode(&ck, "store processing slot", path, 0);
	}
	if (ck.problems > before) {
		/* Opening would trust what the checks above refused. */
		problem(&ck, "the store was not opened: fix the problems "
		    "above first");
		goto out;
	}
open:
	if (cli_store(c, &st) != IH_OK) {
		problem(&ck, "cannot open the store %s (see above)",
		    ih_redact(db, shown, sizeof(shown)));
		goto out;
	}
	if (store_audit(st, check_audit, &ck, err, sizeof(err)) != IH_OK)
		problem(&ck, "%s", err);
	cli_check_store(c, st, &ck.problems, &ck.oks);
	cli_check_held_store(c, st, &ck.problems, &ck.oks);
	cli_check_dests(c, st, checked, &ck.problems, &ck.oks);
out:
	if (ck.problems > 0) {
		printf("%d problem(s) found\n", ck.problems);
		return CLI_EXIT_FAIL;
	}
	printf("no problems found (%d checks)\n", ck.oks);
	return CLI_EXIT_OK;
}
