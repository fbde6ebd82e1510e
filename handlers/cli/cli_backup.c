/*
 * cli_backup.c -- idemhook backup [--keep N] [--json] [DEST] and
 * idemhook restore [--json] SRC.
 *
 * backup writes a consistent copy of the live store (store_backup():
 * one WAL snapshot through SQLite's backup API, checked, fsynced, renamed
 * into place, 0600) to DEST: a file, or a folder (an existing one, one
 * ending in '/', or IDEMHOOK_BACKUP_DIR when DEST is omitted), which gets
 * idemhook-<UTC time>.db; --keep N then removes all but the N newest such
 * files there.  restore puts a copy back (store_restore()): refused while
 * a receiver or a worker holds the store, the replaced store kept aside.
 *
 * On PostgreSQL neither pretends: each prints the pg_dump or pg_restore
 * command to run and exits 2 when the server answered, 1 when it could
 * not be reached.
 */
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli_args.h"
#include "cli_backup.h"
#include "cli_text.h"
#include "clock.h"
#include "config.h"
#include "ih.h"
#include "redact.h"
#include "store.h"
#include "store_backup.h"

#define BACKUP_PREFIX	"idemhook-"
#define BACKUP_SUFFIX	".db"
/* idemhook-20240501T120000Z.db */
#define BACKUP_NAME_LEN	(sizeof(BACKUP_PREFIX) - 1 + 16 + \
	sizeof(BACKUP_SUFFIX) - 1)
#define BACKUP_KEEP_MAX	10000
#define BACKUP_PATH	4096

/* Whether name is one of ours: idemhook-YYYYmmddTHHMMSSZ.db. */
static int
backup_name(const char *name, struct tm *tm)
{
	const char *s = name + sizeof(BACKUP_PREFIX) - 1;
	size_t i;

	if (strlen(name) != BACKUP_NAME_LEN ||
	    strncmp(name, BACKUP_PREFIX, sizeof(BACKUP_PREFIX) - 1) != 0 ||
	    strcmp(s + 16, BACKUP_SUFFIX) != 0 || s[8] != 'T' || s[15] != 'Z')
		return 0;
	for (i = 0; i < 15; i++)
		if (i != 8 && (s[i] < '0' || s[i] > '9'))
			return 0;
	if (tm != NULL) {
		memset(tm, 0, sizeof(*tm));
		tm->tm_year = (s[0] - '0') * 1000 + (s[1] - '0') * 100 +
		    (s[2] - '0') * 10 + (s[3] - '0') - 1900;
		tm->tm_mon = (s[4] - '0') * 10 + (s[5] - '0') - 1;
		tm->tm_mday = (s[6] - '0') * 10 + (s[7] - '0');
		tm->tm_hour = (s[9] - '0') * 10 + (s[10] - '0');
		tm->tm_min = (s[11] - '0') * 10 + (s[12] - '0');
		tm->tm_sec = (s[13] - '0') * 10 + (s[14] - '0');
	}
	return 1;
}

static int
name_cmp(const void *a, const void *b)
{
	/* Newest first: the names sort by time. */
	return strcmp(*(char *const *)b, *(char *const *)a);
}

/*
 * Calls fn for each of our backup files in dir, newest first.  Returns
 * IH_OK, IH_ENOMEM, IH_EIO (errno set) or what fn returned.
 */
static int
each_backup(const char *dir, int (*fn)(void *, const char *, size_t),
    void *arg)
{
	struct dirent *de;
	DIR *d;
	char **names = NULL, **more;
	size_t n = 0, cap = 0, i;
	int rc = IH_OK;

	d = opendir(dir);
	if (d == NULL)
		return IH_EIO;
	for (;;) {
		de = readdir(d);
		if (de == NULL)
			break;
		if (!backup_name(de->d_name, NULL))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			more = realloc(names, cap * sizeof(*names));
			if (more == NULL) {
				rc = IH_ENOMEM;
				goto out;
			}
			names = more;
		}
		names[n] = strdup(de->d_name);
		if (names[n] == NULL) {
			rc = IH_ENOMEM;
			goto out;
		}
		n++;
	}
	if (n > 0)
		qsort(names, n, sizeof(*names), name_cmp);
	for (i = 0; i < n && rc == IH_OK; i++)
		rc = fn(arg, names[i], i);
out:
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	closedir(d);
	return rc;
}

struct newest {
	char	*name;
	size_t	 len;
	int64_t	 when_ms;
	int	 found;
};

static int
take_newest(void *arg, const char *name, size_t i)
{
	struct newest *nw = arg;
	struct tm tm;

	if (i > 0)
		return IH_OK;
	backup_name(name, &tm);
	snprintf(nw->name, nw->len, "%s", name);
	nw->when_ms = (int64_t)timegm(&tm) * 1000;
	nw->found = 1;
	return IH_OK;
}

int
cli_backup_newest(const char *dir, char *name, size_t len, int64_t *when_ms)
{
	struct newest nw = { name, len, 0, 0 };
	int rc;

	rc = each_backup(dir, take_newest, &nw);
	if (rc != IH_OK)
		return rc;
	if (!nw.found)
		return IH_ENOTFOUND;
	*when_ms = nw.when_ms;
	return IH_OK;
}

struct rotate {
	const char	*dir;
	long		 keep;
	long		 removed;
	int		 json;
};

static int
drop_old(void *arg, const char *name, size_t i)
{
	struct rotate *ro = arg;
	char path[BACKUP_PATH];

	if ((long)i < ro->keep)
		return IH_OK;
	snprintf(path, sizeof(path), "%s/%s", ro->dir, name);
	if (unlink(path) != 0) {
		cli_errorf("backup: cannot remove the old backup %s: %s", path,
		    strerror(errno));
		return IH_OK;
	}
	if (ro->json)
		printf("%s", ro->removed > 0 ? "," : "");
	if (ro->json)
		cli_put_json(stdout, name);
	else
		cli_printf(stdout, "removed the old backup %s\n", name);
	ro->removed++;
	return IH_OK;
}

/*
 * The location as a command line may show it: ih_redact() masks a
 * password as ***, which a tool would take literally, so the mask is
 * dropped with its separator and the tool reads PGPASSFILE instead.
 */
static void
drop_password(char *s)
{
	static const char *const masks[] = { ":" REDACT_MASK "@",
	    "&password=" REDACT_MASK, "password=" REDACT_MASK "&",
	    "?password=" REDACT_MASK };
	static const char *const keep[] = { "@", "", "", "" };
	char *at;
	size_t i, ml, kl;

	for (i = 0; i < sizeof(masks) / sizeof(masks[0]); i++) {
		at = strstr(s, masks[i]);
		if (at == NULL)
			continue;
		ml = strlen(masks[i]);
		kl = strlen(keep[i]);
		memcpy(at, keep[i], kl);
		memmove(at + kl, at + ml, strlen(at + ml) + 1);
	}
}

/* A single-quoted shell word for s. */
static void
put_shell(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; *s != '\0'; s++) {
		if (*s == '\'')
			fputs("'\\''", f);
		else
			fputc(*s, f);
	}
	fputc('\'', f);
}

/*
 * PostgreSQL: the command to run instead, then whether the server
 * answers.  Returns 2 when it does (this command does nothing there), 1
 * when it cannot be reached.
 */
static int
pg_advice(struct cli *c, const char *db, int restore, const char *file)
{
	struct store *st;
	struct stat sb;
	char shown[REDACT_URI_MAX], dump[BACKUP_PATH];
	size_t n = strlen(file);

	/* A folder gets a file in it. */
	if (!restore && ((n > 0 && file[n - 1] == '/') ||
	    (stat(file, &sb) == 0 && S_ISDIR(sb.st_mode)))) {
		snprintf(dump, sizeof(dump), "%s%sidemhook.dump", file,
		    n > 0 && file[n - 1] == '/' ? "" : "/");
		file = dump;
	}
	ih_redact(db, shown, sizeof(shown));
	drop_password(shown);
	fprintf(stderr, "idemhook: %s: the store is PostgreSQL, which idemhook "
	    "does not copy itself; run (the password from PGPASSFILE or "
	    "~/.pgpass, never on the command line):\n  ",
	    restore ? "restore" : "backup");
	if (restore) {
		fputs("pg_restore --clean --if-exists --no-owner --dbname=",
		    stderr);
		put_shell(stderr, shown);
		fputc(' ', stderr);
		put_shell(stderr, file);
	} else {
		fputs("pg_dump --format=custom --file=", stderr);
		put_shell(stderr, file);
		fputc(' ', stderr);
		put_shell(stderr, shown);
	}
	fputc('\n', stderr);
	if (cli_store(c, &st) != IH_OK) {
		cli_errorf("%s: the PostgreSQL server could not be reached "
		    "(above): no copy can be made or restored now",
		    restore ? "restore" : "backup");
		return CLI_EXIT_FAIL;
	}
	cli_errorf("%s: the PostgreSQL server answered; nothing was done",
	    restore ? "restore" : "backup");
	return CLI_EXIT_USAGE;
}

struct progress {
	int	 tty;
	int64_t	 t0;
};

static int
show_progress(void *arg, int64_t done, int64_t total)
{
	struct progress *pr = arg;

	if (pr->tty && total > 0) {
		fprintf(stderr, "\rbackup: %3d%% (%lld of %lld pages, "
		    "%.1f s)%s",
		    (int)(done * 100 / total), (long long)done,
		    (long long)total, clock_ms_since(pr->t0) / 1e3,
		    done == total ? ", checking the copy" : " ");
		fflush(stderr);
	}
	return IH_OK;
}

static void
put_info(const struct store_backup_info *in, int json)
{
	if (json) {
		printf("\"bytes\":%lld,\"pages\":%lld,\"schema_version\":%d,"
		    "\"integrity\":", (long long)in->bytes,
		    (long long)in->pages, in->schema_version);
		cli_put_json(stdout, in->integrity);
		printf(",\"events\":%lld,\"attempts\":%lld,\"effects\":%lld,"
		    "\"objects\":%lld,\"object_events\":%lld",
		    (long long)in->events, (long long)in->attempts,
		    (long long)in->effects, (long long)in->objects,
		    (long long)in->object_events);
		return;
	}
	printf("  %lld events, %lld attempts, %lld effects, %lld objects "
	    "(%lld history rows)\n  %lld bytes, schema version %d, "
	    "integrity check: ", (long long)in->events,
	    (long long)in->attempts, (long long)in->effects,
	    (long long)in->objects, (long long)in->object_events,
	    (long long)in->bytes, in->schema_version);
	cli_put_clean(stdout, in->integrity);
	putchar('\n');
}

static void
backup_usage(FILE *f)
{
	fprintf(f, "usage: idemhook backup [--keep N] [--json] [DEST]\n\n"
	    "Writes a consistent copy of the live SQLite store while the "
	    "receivers keep\nrecording: one snapshot, checked "
	    "(integrity_check, schema version, row\ncounts), fsynced, then "
	    "renamed to DEST, mode 0600.\n"
	    "  DEST       a file (replaced), or a folder (an existing one, or "
	    "one ending\n             in /, created 0700), which gets "
	    "idemhook-<UTC time>.db;\n             default: the folder "
	    "IDEMHOOK_BACKUP_DIR\n"
	    "  --keep N   in a folder: keep the N newest idemhook-*.db, "
	    "remove the others\n"
	    "  --json     one JSON object (no progress line)\n"
	    "On a terminal it shows progress.  On PostgreSQL it prints the "
	    "pg_dump command\nto run instead.\n"
	    "Exit: 0 written; 1 failed (DEST untouched), or PostgreSQL "
	    "unreachable;\n2 usage, or PostgreSQL (which answered).\n");
}

/*
 * Where the copy goes: dest itself, or dir/idemhook-<time>.db when dest
 * is a folder (created 0700 when from the setting or ending in '/').
 * *dir is set to the folder in that case, else to "".
 */
static int
backup_target(const char *dest, int from_setting, char *path, size_t len,
    char *dir, size_t dirlen)
{
	struct stat sb;
	size_t n = strlen(dest);
	char stamp[32];
	time_t now = time(NULL);
	struct tm tm;

	dir[0] = '\0';
	if ((from_setting || (n > 0 && dest[n - 1] == '/')) &&
	    mkdir(dest, 0700) != 0 && errno != EEXIST) {
		cli_errorf("backup: cannot create the folder %s: %s", dest,
		    strerror(errno));
		return CLI_EXIT_FAIL;
	}
	if (stat(dest, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
		snprintf(path, len, "%s", dest);
		return CLI_EXIT_OK;
	}
	snprintf(dir, dirlen, "%.*s", (int)(n > 1 && dest[n - 1] == '/' ?
	    n - 1 : n), dest);
	gmtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	if ((size_t)snprintf(path, len, "%s/" BACKUP_PREFIX "%s" BACKUP_SUFFIX,
	    dir, stamp) >= len) {
		cli_errorf("backup: the path is too long");
		return CLI_EXIT_USAGE;
	}
	return CLI_EXIT_OK;
}

/* Refuses a destination that is the store or one of its side files. */
static int
same_as_store(const char *db, const char *path)
{
	static const char *const sides[] = { "", "-wal", "-shm", "-lock",
	    "-sync" };
	struct stat a, b;
	char side[BACKUP_PATH + 8];
	size_t i;

	if (stat(path, &b) != 0)
		return 0;
	for (i = 0; i < sizeof(sides) / sizeof(sides[0]); i++) {
		snprintf(side, sizeof(side), "%s%s", db, sides[i]);
		if (stat(side, &a) == 0 && a.st_dev == b.st_dev &&
		    a.st_ino == b.st_ino)
			return 1;
	}
	return 0;
}

int
cli_backup(struct cli *c, int argc, char **argv)
{
	const struct config *cfg;
	struct store_backup_info info;
	struct progress pr;
	struct rotate ro;
	struct store *st;
	const char *dest = NULL, *v;
	char path[BACKUP_PATH], dir[BACKUP_PATH], err[STORE_ERR_MAX];
	char shown[REDACT_URI_MAX];
	long keep = -1;
	int a, r, json = 0, from_setting = 0, rc;

	for (a = 1; a < argc; a++) {
		r = cli_opt(argc, argv, &a, "--keep", &v);
		if (r > 0 &&
		    cli_parse_long(v, 1, BACKUP_KEEP_MAX, &keep) != 0) {
			cli_errorf("backup: --keep takes 1 to %d",
			    BACKUP_KEEP_MAX);
			return CLI_EXIT_USAGE;
		}
		if (r > 0)
			continue;
		if (r < 0)
			return CLI_EXIT_USAGE;
		if (strcmp(argv[a], "--json") == 0)
			json = 1;
		else if (strcmp(argv[a], "--help") == 0) {
			backup_usage(stdout);
			return CLI_EXIT_OK;
		} else if (argv[a][0] != '-' && dest == NULL)
			dest = argv[a];
		else {
			backup_usage(stderr);
			return CLI_EXIT_USAGE;
		}
	}
	if (dest == NULL) {
		dest = cli_setting(c, "IDEMHOOK_BACKUP_DIR");
		from_setting = 1;
	}
	if (dest == NULL || *dest == '\0' || (from_setting && *dest != '/')) {
		cli_errorf("backup: give DEST, or set IDEMHOOK_BACKUP_DIR to "
		    "an absolute folder");
		backup_usage(stderr);
		return CLI_EXIT_USAGE;
	}
	if (cli_config(c, 0, &cfg) != IH_OK)
		return CLI_EXIT_USAGE;
	if (store_is_postgres(cfg->db_path))
		return pg_advice(c, cfg->db_path, 0, dest);
	rc = backup_target(dest, from_setting, path, sizeof(path), dir,
	    sizeof(dir));
	if (rc != CLI_EXIT_OK)
		return rc;
	if (keep > 0 && dir[0] == '\0') {
		cli_errorf("backup: --keep needs DEST to be a folder");
		return CLI_EXIT_USAGE;
	}
	if (same_as_store(cfg->db_path, path) ||
	    strcmp(cfg->db_path, path) == 0) {
		cli_errorf("backup: %s is the store itself", path);
		return CLI_EXIT_USAGE;
	}
	/* Opening would create an empty store, and back that up. */
	if (access(cfg->db_path, F_OK) != 0) {
		cli_errorf("backup: no store at %s: %s", cfg->db_path,
		    strerror(errno));
		return CLI_EXIT_FAIL;
	}
	if (cli_store(c, &st) != IH_OK)
		return CLI_EXIT_FAIL;
	pr.tty = !json && isatty(STDERR_FILENO);
	pr.t0 = clock_mono_ns();
	rc = store_backup(st, path, show_progress, &pr, &info, err,
	    sizeof(err));
	if (pr.tty)
		fputc('\n', stderr);
	if (rc != IH_OK) {
		cli_errorf("backup: %s (nothing was written to %s)", err, path);
		return CLI_EXIT_FAIL;
	}
	ih_redact(cfg->db_path, shown, sizeof(shown));
	if (json) {
		printf("{\"store\":");
		cli_put_json(stdout, shown);
		printf(",\"path\":");
		cli_put_json(stdout, path);
		printf(",\"seconds\":%.3f,", clock_ms_since(pr.t0) / 1e3);
		put_info(&info, 1);
		printf(",\"removed\":[");
	} else {
		cli_printf(stdout, "backup of %s written to %s in %.1f s:\n",
		    shown, path, clock_ms_since(pr.t0) / 1e3);
		put_info(&info, 0);
	}
	memset(&ro, 0, sizeof(ro));
	ro.dir = dir;
	ro.keep = keep;
	ro.json = json;
	if (keep > 0 && each_backup(dir, drop_old, &ro) != IH_OK)
		cli_errorf("backup: cannot list %s to remove old backups: %s",
		    dir, strerror(errno));
	if (json)
		printf("]}\n");
	return CLI_EXIT_OK;
}

static void
restore_usage(FILE *f)
{
	fprintf(f, "usage: idemhook restore [--json] SRC\n\n"
	    "Puts the SQLite copy SRC (from idemhook backup) in place of the "
	    "store.\nRefused while a receiver or idemhook work holds the "
	    "store: stop the web\nserver (or its FastCGI programs) and the "
	    "workers first.  SRC is copied\nbeside the store and checked "
	    "(integrity_check, schema version) first; the\ncurrent store is "
	    "kept as <store>.before-restore-<UTC time>, its stale\n-wal and "
	    "-shm removed.  On PostgreSQL it prints the pg_restore command.\n"
	    "Exit: 0 restored; 1 refused or failed (the store untouched), or "
	    "PostgreSQL\nunreachable; 2 usage, or PostgreSQL (which "
	    "answered).\n");
}

int
cli_restore(struct cli *c, int argc, char **argv)
{
	const struct config *cfg;
	struct store_restore rs;
	struct store_opts o;
	struct store *st;
	const char *src = NULL;
	char err[STORE_ERR_MAX], qc[256], shown[REDACT_URI_MAX];
	int a, json = 0, rc;

	for (a = 1; a < argc; a++) {
		if (strcmp(argv[a], "--json") == 0)
			json = 1;
		else if (strcmp(argv[a], "--help") == 0) {
			restore_usage(stdout);
			return CLI_EXIT_OK;
		} else if (strcmp(argv[a], "--") == 0 && a + 1 < argc &&
		    src == NULL)
			src = argv[++a];
		else if (argv[a][0] != '-' && src == NULL)
			src = argv[a];
		else {
			restore_usage(stderr);
			return CLI_EXIT_USAGE;
		}
	}
	if (src == NULL) {
		restore_usage(stderr);
		return CLI_EXIT_USAGE;
	}
	if (cli_config(c, 0, &cfg) != IH_OK)
		return CLI_EXIT_USAGE;
	if (store_is_postgres(cfg->db_path))
		return pg_advice(c, cfg->db_path, 1, src);
	o.path = cfg->db_path;
	o.durable_as = store_durable_as(cfg->synchronous);
	o.busy_timeout_ms = cfg->busy_timeout_ms;
	/* No cli_store() before: this process must not hold the store. */
	rc = store_restore(&o, src, &rs, err, sizeof(err));
	if (rc != IH_OK) {
		cli_errorf("restore %s: %s; nothing was changed", rs.in_use ?
		    "refused" : "failed", err);
		return CLI_EXIT_FAIL;
	}
	/* Opening migrates an older copy and switches it to WAL. */
	if (cli_store(c, &st) != IH_OK)
		return CLI_EXIT_FAIL;
	if (store_quick_check(st, qc, sizeof(qc), err, sizeof(err)) != IH_OK)
		snprintf(qc, sizeof(qc), "%s", err);
	ih_redact(cfg->db_path, shown, sizeof(shown));
	if (json) {
		printf("{\"store\":");
		cli_put_json(stdout, shown);
		printf(",\"from\":");
		cli_put_json(stdout, src);
		printf(",\"kept_as\":");
		cli_put_json(stdout, rs.aside[0] != '\0' ? rs.aside : NULL);
		printf(",\"kept_wal\":%s,", rs.aside_wal ? "true" : "false");
		put_info(&rs.info, 1);
		printf(",\"quick_check\":");
		cli_put_json(stdout, qc);
		printf("}\n");
	} else {
		cli_printf(stdout, "restored %s from %s:\n", shown, src);
		put_info(&rs.info, 0);
		if (rs.aside[0] != '\0')
			cli_printf(stdout, "the store it replaced is kept as "
			    "%s%s\n", rs.aside, rs.aside_wal ? " (with its "
			    "-wal, which could not be checkpointed)" : "");
		cli_printf(stdout, "quick check of the restored store: %s\n"
		    "next: start the receivers and workers again, then run "
		    "idemhook check\n", qc);
	}
	return strcmp(qc, "ok") == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
}
