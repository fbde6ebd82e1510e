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

#include <errno.h>
#include <libgen.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli_args.h"
#include "cli_backup.h"
#include "cli_backups.h"
#include "cli_owner.h"
#include "cli_text.h"
#include "clock.h"
#include "config.h"
#include "ih.h"
#include "redact.h"
#include "store.h"
#include "store_backup.h"

#define BACKUP_KEEP_MAX	10000
#define BACKUP_PATH	4096

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
	    "  --keep N   in a folder: keep the N newest idemhook-*.db (by "
	    "the earlier of\n             name and mtime; never the one just "
	    "written), remove the others\n"
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
	if ((size_t)snprintf(path, len, "%s/" CLI_BACKUP_PREFIX "%s"
	    CLI_BACKUP_SUFFIX, dir, stamp) >= len) {
		cli_errorf("backup: the path is too long");
		return CLI_EXIT_USAGE;
	}
	return CLI_EXIT_OK;
}

/* The last part of path. */
static const char *
base_of(const char *path)
{
	const char *s = strrchr(path, '/');

	return s != NULL ? s + 1 : path;
}

/*
 * As root: when another user owns the folder the copy goes to (dest, or
 * the one that holds or will hold it), the rest of the command runs as
 * that user (cli_owner.h).  Returns -1 to carry on, or the exit status.
 */
static int
backup_as_owner(const char *dest)
{
	char buf[BACKUP_PATH], *dir = buf;
	struct stat sb;
	size_t n = strlen(dest);
	uid_t uid;
	gid_t gid;
	int status;

	if (geteuid() != 0 || n >= sizeof(buf))
		return -1;
	memcpy(buf, dest, n + 1);
	while (n > 1 && buf[n - 1] == '/')
		buf[--n] = '\0';
	if (stat(buf, &sb) != 0 || !S_ISDIR(sb.st_mode))
		dir = dirname(buf);
	if (cli_owner_of(dir, NULL, &uid, &gid) != 0)
		return -1;
	switch (cli_owner_become(uid, gid, "backup", &status)) {
	case CLI_OWNER_PARENT:
		return status;
	case CLI_OWNER_FAIL:
		return CLI_EXIT_FAIL;
	default:
		return -1;
	}
}

/*
 * As root: the rest of restore runs as the owner of the store (or of its
 * folder), whose folder it works in; the copy is opened here first, as
 * root, when no other user can write its folder (cli_owner_open()), so
 * that a copy only root may read can be restored.  Returns -1 to carry on,
 * with *fd the copy or -1, or the exit status to return.
 */
static int
restore_as_owner(const char *db, const char *src, int *fd)
{
	char buf[BACKUP_PATH], err[512];
	uid_t uid;
	gid_t gid;
	int status, rc = -1;

	*fd = -1;
	if (geteuid() != 0 || snprintf(buf, sizeof(buf), "%s", db) >=
	    (int)sizeof(buf) || cli_owner_of(dirname(buf), db, &uid,
	    &gid) != 0 || uid == 0)
		return -1;
	if (cli_owner_open(src, fd, err, sizeof(err)) != 0) {
		cli_errorf("restore refused: %s; nothing was changed", err);
		return CLI_EXIT_FAIL;
	}
	switch (cli_owner_become(uid, gid, "restore", &status)) {
	case CLI_OWNER_PARENT:
		rc = status;
		break;
	case CLI_OWNER_FAIL:
		rc = CLI_EXIT_FAIL;
		break;
	default:
		return -1;
	}
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
	return rc;
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
	rc = backup_as_owner(dest);
	if (rc >= 0)
		return rc;
	if (access(cfg->db_path, R_OK) != 0 && errno == EACCES) {
		cli_errorf("backup: user %u cannot read the store %s (root "
		    "writes a copy as the owner of the folder it goes to: "
		    "choose a folder of root's or of the store's owner)",
		    (unsigned)getuid(), cfg->db_path);
		return CLI_EXIT_FAIL;
	}
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
	if (keep > 0 && cli_backups_rotate(dir, keep, base_of(path), json) !=
	    IH_OK)
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
	    "(integrity_check, schema version, no schema\nobject this build "
	    "does not create) first; the current store is kept as\n"
	    "<store>.before-restore-<UTC time>, its stale -wal and -shm "
	    "removed.  As root,\nit runs as the store's owner.  On "
	    "PostgreSQL it prints the pg_restore command.\n"
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
	int a, json = 0, rc, fd;

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
	rc = restore_as_owner(cfg->db_path, src, &fd);
	if (rc >= 0)
		return rc;
	/* No cli_store() before: this process must not hold the store. */
	rc = store_restore(&o, src, fd, &rs, err, sizeof(err));
	if (fd >= 0)
		close(fd);
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
