/*
 * cli_check_store.c -- idemhook check: the store's filesystem, its quick
 * integrity check, and the age of the last backup (cli_check_store.h).
 */
#include <sys/stat.h>
#include <sys/vfs.h>

#include <errno.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cli_args.h"
#include "cli_backups.h"
#include "cli_check_store.h"
#include "cli_text.h"
#include "clock.h"
#include "forward.h"
#include "ih.h"
#include "providers.h"
#include "store.h"
#include "store_backup.h"
#include "store_dest.h"

#define CHECK_STORE_LINE	2048
#define BACKUP_MAX_AGE		"36h"

/*
 * Filesystems (statfs f_type) where a SQLite store in WAL mode does not
 * belong: the network ones share no memory between hosts, and FUSE
 * (sshfs, s3fs, rclone, bindfs, glusterfs, virtiofs) passes every lock
 * and sync through a user-space daemon, often to a network.
 */
static const struct {
	unsigned long	 magic;
	const char	*name;
} remote_fs[] = {
	{ 0x65735546UL, "FUSE" },
	{ 0x00006969UL, "NFS" },
	{ 0x0000517bUL, "SMB" },
	{ 0xff534d42UL, "CIFS" },
	{ 0xfe534d42UL, "SMB2" },
	{ 0x00c36400UL, "Ceph" },
	{ 0x5346414fUL, "AFS" },
	{ 0x6b414653UL, "AFS" },
	{ 0x73757245UL, "Coda" },
	{ 0x01021997UL, "9P" },
	{ 0x0000564cUL, "NCP" },
	{ 0x01161970UL, "GFS2" },
	{ 0x7461636fUL, "OCFS2" },
	{ 0x0bd00bd0UL, "Lustre" },
	{ 0x47504653UL, "GPFS" },
	{ 0x786f4256UL, "VirtualBox shared folder" },
};

void
cli_check_say(int good, int *problems, int *oks, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cli_check_vsay(good, problems, oks, fmt, ap);
	va_end(ap);
}

void
cli_check_vsay(int good, int *problems, int *oks, const char *fmt,
    va_list ap)
{
	char buf[CHECK_STORE_LINE];
	int n;

	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(buf))
		n = sizeof(buf) - 1;
	fputs(good ? "ok: " : "PROBLEM: ", stdout);
	cli_put_text(stdout, buf, (size_t)n, 0);
	putchar('\n');
	if (good)
		(*oks)++;
	else
		(*problems)++;
}

void
cli_check_fs(const char *db, int *problems, int *oks)
{
	struct statfs sf;
	char dir[4096];
	size_t i;
	unsigned long type;
	int n;

	if (store_is_postgres(db))
		return;
	n = snprintf(dir, sizeof(dir), "%s", db);
	if (n < 0 || (size_t)n >= sizeof(dir))
		return;
	/* The folder: it exists before the store does. */
	if (statfs(dirname(dir), &sf) != 0) {
		cli_check_say(0, problems, oks,
		    "cannot read the filesystem of the "
		    "store's folder %s: %s", dir, strerror(errno));
		return;
	}
	type = (unsigned long)(unsigned int)sf.f_type;
	for (i = 0; i < sizeof(remote_fs) / sizeof(remote_fs[0]); i++)
		if (remote_fs[i].magic == type) {
			cli_check_say(0, problems, oks,
			    "the store's folder %s is on a "
			    "%s filesystem (type 0x%lx): WAL needs the shared "
			    "memory of one host, and a durable commit there "
			    "can cost a large fraction of a second; keep the "
			    "store on a local disk", dir, remote_fs[i].name,
			    type);
			return;
		}
	cli_check_say(1, problems, oks,
	    "the store's folder is on a local filesystem "
	    "(type 0x%lx)", type);
}

static int
first_row(void *arg, const struct store_row *row)
{
	*(int64_t *)arg = row->received_at;
	return IH_OK;
}

/*
 * No backup in dir yet: a problem once the store holds an event older
 * than the largest age (the nightly backup should have copied it), else
 * a note (a new installation whose first backup is still to run).
 */
static void
no_backup(struct store *st, const char *dir, int64_t oldest, int *problems,
    int *oks)
{
	char when[CLI_TIME_MAX], err[STORE_ERR_MAX];
	int64_t first = 0;

	if (store_copy_read(st, 0, 1, first_row, &first, err,
	    sizeof(err)) != IH_OK)
		first = 0;
	cli_format_time(first, when, sizeof(when));
	if (first > 0 && first < oldest)
		cli_check_say(0, problems, oks,
		    "backups: none in %s, and the store "
		    "holds events since %s: run idemhook backup, nightly from "
		    "cron", dir, when);
	else
		printf("note: backups: none in %s yet, where the nightly "
		    "idemhook backup will write (the store's oldest event: "
		    "%s)\n", dir, when);
}

/* The newest backup in IDEMHOOK_BACKUP_DIR, against the largest age. */
static void
check_backup_age(struct cli *c, struct store *st, int *problems, int *oks)
{
	const char *dir = cli_setting(c, "IDEMHOOK_BACKUP_DIR");
	const char *max = cli_setting(c, "IDEMHOOK_BACKUP_MAX_AGE");
	char name[256], path[4400], when[CLI_TIME_MAX], future[256];
	int64_t now = clock_wall_ms(), oldest, at, future_at;
	struct stat sb;
	int rc;

	if (dir == NULL || *dir == '\0') {
		printf("note: backups: IDEMHOOK_BACKUP_DIR is not set, so the "
		    "age of the last backup is not checked (idemhook backup "
		    "--help)\n");
		return;
	}
	if (max == NULL || *max == '\0')
		max = BACKUP_MAX_AGE;
	if (cli_parse_time(max, now, &oldest) != 0 || oldest >= now) {
		cli_check_say(0, problems, oks,
		    "IDEMHOOK_BACKUP_MAX_AGE=%s is not an "
		    "age such as 36h or 7d", max);
		return;
	}
	rc = cli_backup_newest(dir, now, name, sizeof(name), &at, future,
	    sizeof(future), &future_at);
	if (rc == IH_EIO && errno != ENOENT) {
		cli_check_say(0, problems, oks, "backups: cannot read "
		    "IDEMHOOK_BACKUP_DIR %s: %s", dir, strerror(errno));
		return;
	}
	if (future[0] != '\0') {
		cli_format_time(future_at, when, sizeof(when));
		cli_check_say(0, problems, oks, "backups: %s/%s is named "
		    "or written at a time to come (named %s): a wrong clock, "
		    "or a copy named by hand; its age is taken from its "
		    "mtime when that is past, else it counts as the oldest: "
		    "rename or remove it", dir, future, when);
	}
	if (rc != IH_OK) {
		no_backup(st, dir, oldest, problems, oks);
		return;
	}
	cli_format_time(at, when, sizeof(when));
	if (at < oldest)
		cli_check_say(0, problems, oks,
		    "backups: the last one, %s/%s (%s), is "
		    "%.1f hours old, older than IDEMHOOK_BACKUP_MAX_AGE %s: "
		    "is the nightly idemhook backup still running?", dir,
		    name, when, (double)(now - at) / 3.6e6, max);
	else
		cli_check_say(1, problems, oks,
		    "backups: the last one, %s/%s (%s), is "
		    "%.1f hours old", dir, name, when,
		    (double)(now - at) / 3.6e6);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (stat(path, &sb) == 0 && (sb.st_mode & 077) != 0)
		cli_check_say(0, problems, oks,
		    "backups: %s is readable by others "
		    "(mode %03o): chmod 600 it; it holds every payload",
		    path, (unsigned)(sb.st_mode & 0777));
}

void
cli_check_store(struct cli *c, struct store *st, int *problems, int *oks)
{
	char out[256], err[STORE_ERR_MAX];
	int rc;

	rc = store_quick_check(st, out, sizeof(out), err, sizeof(err));
	if (rc == IH_OK && strcmp(out, "ok") == 0)
		cli_check_say(1, problems, oks,
		    "the store passes SQLite's quick "
		    "integrity check");
	else if (rc == IH_OK)
		cli_check_say(0, problems, oks,
		    "the store fails SQLite's quick "
		    "integrity check: %s; stop the receivers and restore the "
		    "last backup (idemhook restore)", out);
	else if (rc != IH_EINVAL)
		cli_check_say(0, problems, oks,
		    "cannot run the quick integrity check: "
		    "%s", err);
	if (rc == IH_EINVAL) {
		printf("note: backups: on PostgreSQL, back up with pg_dump "
		    "(idemhook backup prints the command)\n");
		return;
	}
	check_backup_age(c, st, problems, oks);
}

/*
 * fw's limits, and the provider's pause_after, against its row in the
 * store, if a process wrote one.
 */
static void
check_dest(struct store *st, const char *provider,
    const struct config_forward *fw, long pause_after, int *problems,
    int *oks)
{
	struct store_dest_state ds;
	char err[STORE_ERR_MAX], var[128];
	const char *name = forward_dest_name(fw);

	if (store_dest_state(st, provider, fw->account, 0, &ds, err,
	    sizeof(err)) != IH_OK) {
		cli_check_say(0, problems, oks, "%s: cannot read the limits "
		    "of destination %s in the store: %s", provider, name, err);
		return;
	}
	/* No process has claimed for it yet: nothing to compare. */
	if (!ds.found || strcmp(ds.account, name) != 0)
		return;
	if (ds.concurrency == fw->concurrency && ds.rate_ms == fw->rate_ms &&
	    ds.pause_after == pause_after) {
		cli_check_say(1, problems, oks, "%s: destination %s: the "
		    "store's limits are these settings'", provider, name);
		return;
	}
	if (ds.concurrency != fw->concurrency &&
	    forward_setting_name(var, sizeof(var), provider, "CONCURRENCY",
	    fw->account))
		cli_check_say(0, problems, oks, "%s: destination %s: "
		    "%s is %ld here but %ld "
		    "in the store: another process runs, or ran, with other "
		    "settings, and processes take turns at writing theirs: "
		    "give every process the same settings file (restarted "
		    "after a change)", provider, name, var, fw->concurrency,
		    ds.concurrency);
	if (ds.rate_ms != fw->rate_ms &&
	    forward_setting_name(var, sizeof(var), provider, "RATE",
	    fw->account))
		cli_check_say(0, problems, oks, "%s: destination %s: "
		    "%s gives %lld ms between starts "
		    "here but %lld in the store (0: no limit): another process "
		    "runs, or ran, with other settings, and processes take "
		    "turns at writing theirs: give every process the same "
		    "settings file (restarted after a change)", provider, name,
		    var, (long long)fw->rate_ms, (long long)ds.rate_ms);
	/* The provider's setting: named without the account. */
	if (ds.pause_after != pause_after &&
	    forward_setting_name(var, sizeof(var), provider, "PAUSE_AFTER",
	    NULL))
		cli_check_say(0, problems, oks, "%s: destination %s: "
		    "%s is %ld here but %ld in the store (0: never pause): "
		    "another process runs, or ran, with other settings, and "
		    "processes take turns at writing theirs: give every "
		    "process the same settings file (restarted after a "
		    "change)", provider, name, var, pause_after,
		    ds.pause_after);
}

void
cli_check_dests(struct cli *c, struct store *st, const int *checked,
    int *problems, int *oks)
{
	const struct config *cfg;
	size_t i, j;

	for (i = 0; providers_all[i] != NULL && i < CLI_MAX_PROVIDERS; i++) {
		if (!checked[i] || cli_config(c, i, &cfg) != IH_OK)
			continue;
		if (cfg->forward.dest.url != NULL)
			check_dest(st, providers_all[i]->name,
			    &cfg->forward.dest, cfg->forward.pause_after,
			    problems, oks);
		for (j = 0; j < cfg->forward.nacct; j++)
			check_dest(st, providers_all[i]->name,
			    &cfg->forward.acct[j], cfg->forward.pause_after,
			    problems, oks);
	}
}
