/*
 * sqlite_conn.c -- SQLite: the connection (open, close, the pragmas it
 * runs with) and the ops table.  The helpers every sqlite_*.c uses to
 * run a statement are sqlite_exec.c, the writers' queue sqlite_queue.c,
 * the schema sqlite_schema.c, the statements sqlite_stmt.c,
 * transactions sqlite_txn.c and the audit sqlite_audit.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "ih.h"
#include "sqlite_int.h"
#include "sqlite_trust.h"

void
store_process_init(void)
{
	/* SQLITE_MISUSE once SQLite is initialised: then nothing changes. */
	(void)sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

static const struct store_ops sq_ops;

static void	sq_close(struct store *);

/*
 * SQLite's auto-checkpoint, which sq_wal_seen() replaces, at its default
 * length; and the length past which the last connection to close the
 * store checkpoints the log and empties it (checkpoint_on_close()).
 */
#define SQ_AUTO_CHECKPOINT	1000
#define SQ_CLOSE_CHECKPOINT	256

/*
 * After each commit: SQLite's own auto-checkpoint, and the log's length.
 * SQLite calls this inside the commit, which under sq_commit() still
 * holds the writers' queue: a checkpoint there (1,000 pages written and
 * synced) held up every other writer, each process of Apache's 24 among
 * them.  There it is only noted, and sq_commit() runs it after leaving.
 */
static int
sq_wal_seen(void *arg, sqlite3 *db, const char *name, int frames)
{
	struct sq *st = arg;

	st->wal_frames = frames;
	if (frames < SQ_AUTO_CHECKPOINT)
		return SQLITE_OK;
	if (st->queued)
		st->checkpoint_due = 1;
	else
		(void)sqlite3_wal_checkpoint(db, name);
	return SQLITE_OK;
}

void
sq_checkpoint_due(struct sq *st)
{
	if (!st->checkpoint_due)
		return;
	st->checkpoint_due = 0;
	(void)sqlite3_wal_checkpoint(st->db, "main");
}

/*
 * The log is not checkpointed on close (store_sqlite_open() says why).
 * But a process that opens the store while
 * no other has it open rebuilds the log's index from every frame since
 * the log last restarted, and the log restarts only when a writer finds
 * it wholly checkpointed in that index, which such a process never does:
 * with one delivery at a time the log grew without end, and each CGI
 * process read all of it (and, past 1,000 frames, checkpointed all of it
 * again).  So once the log is SQ_CLOSE_CHECKPOINT frames long, a closing
 * connection lets SQLite checkpoint it if it is the last one open (SQLite
 * tries an exclusive lock on the store and does nothing if another
 * connection has it), syncing as every checkpoint does, and truncate it
 * to nothing instead of deleting it, so that its directory entry stays.
 */
static void
checkpoint_on_close(struct sq *st)
{
	int on = 1;

	if (sqlite3_file_control(st->db, "main", SQLITE_FCNTL_PERSIST_WAL,
	    &on) != SQLITE_OK ||
	    sqlite3_exec(st->db, "PRAGMA journal_size_limit = 0", NULL, NULL,
	    NULL) != SQLITE_OK)
		return;
	(void)sqlite3_db_config(st->db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 0,
	    NULL);
}

/* The settings every connection runs with, after synchronous. */
static const struct {
	const char	*sql;
	const char	*what;
} pragmas[] = {
	{ "PRAGMA foreign_keys = ON", "cannot enable foreign keys" },
	/*
	 * Each event of a batch has its savepoint, whose journal of page
	 * images would otherwise go to a temporary file once past 64 KiB:
	 * about 19 writes per event.  In memory it costs at most one
	 * batch's pages, freed at its commit.
	 */
	{ "PRAGMA temp_store = MEMORY",
	    "cannot keep temporary data in memory" },
	/*
	 * 1 MiB of page cache, not SQLite's 2: a receiver's inserts touch
	 * the right edges of the table and the indexes' upper levels, and
	 * the process stays near 4 MiB of private memory.
	 */
	{ "PRAGMA cache_size = -1024", "cannot set the page cache" },
};

int
store_sqlite_open(const struct store_opts *opts, struct store **out,
    char *err, size_t errlen)
{
	struct sq *st = NULL;
	char sql[64], qpath[4200];
	size_t i;
	int n, rc = IH_ENOMEM;

	*out = NULL;
	st = calloc(1, sizeof(*st));
	if (st == NULL)
		goto out;
	st->base.ops = &sq_ops;
	st->queuefd = -1;
	st->busy_timeout_ms = opts->busy_timeout_ms;
	rc = sq_make_parents(opts->path, err, errlen);
	if (rc != IH_OK)
		goto out;
	rc = sq_make_file(opts->path, err, errlen);
	if (rc != IH_OK)
		goto out;
	/* NOFOLLOW: sq_make_file()'s lstat check must hold at the open too. */
	rc = sqlite3_open_v2(opts->path, &st->db, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW, NULL);
	if (rc != SQLITE_OK) {
		rc = sq_fail(st, rc, "cannot open store", err, errlen);
		goto out;
	}
	n = snprintf(qpath, sizeof(qpath), "%s-lock", opts->path);
	if (n > 0 && (size_t)n < sizeof(qpath))
		st->queuefd = open(qpath, O_RDWR | O_CREAT | O_CLOEXEC |
		    O_NOFOLLOW, 0600);
	sqlite3_extended_result_codes(st->db, 1);
	rc = sqtrust_harden(st->db, err, errlen);
	if (rc != IH_OK)
		goto out;
	/*
	 * A CGI program closes the store after every request; checkpointing
	 * then would cost three more fsyncs per delivery.  Checkpoints still
	 * happen as the log grows, during commits (sq_wal_seen), and on
	 * close once it is long (checkpoint_on_close).
	 */
	sqlite3_db_config(st->db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL);
	sqlite3_wal_hook(st->db, sq_wal_seen, st);
	sqlite3_busy_handler(st->db, sq_busy_wait, st);
	st->sync_durable = opts->durable_as == STORE_RELAXED ? 1 : 2;
	/*
	 * Like the writers' queue, the shared sync is an optimisation: if its
	 * file cannot be used (another user's, a link), each durable commit
	 * fsyncs the log itself, as at FULL.
	 */
	if (opts->durable_as == STORE_DURABLE &&
	    sqsync_open(opts->path, &st->shared, err, errlen) != IH_OK)
		st->shared = NULL;
	st->sync_now = st->sync_durable;
	snprintf(sql, sizeof(sql), "PRAGMA synchronous = %s",
	    st->sync_durable == 1 ? "NORMAL" : "FULL");
	rc = sq_exec(st, sql, "cannot set synchronous", err, errlen);
	if (rc != IH_OK)
		goto out;
	for (i = 0; i < sizeof(pragmas) / sizeof(pragmas[0]); i++) {
		rc = sq_exec(st, pragmas[i].sql, pragmas[i].what, err, errlen);
		if (rc != IH_OK)
			goto out;
	}
	rc = sq_set_up(st, err, errlen);
	if (rc != IH_OK)
		goto out;
	*out = &st->base;
	st = NULL;
	rc = IH_OK;
out:
	if (st != NULL)
		sq_close(&st->base);
	return rc;
}

static void
sq_close(struct store *base)
{
	struct sq *st = sq_of(base);

	sq_finalize_all(st);
	if (st->wal_frames >= SQ_CLOSE_CHECKPOINT)
		checkpoint_on_close(st);
	sqlite3_close(st->db);
	sqsync_close(st->shared);
	sq_queue_leave(st);
	if (st->queuefd >= 0)
		close(st->queuefd);
	free(st);
}

static const struct store_ops sq_ops = {
	.name = "sqlite",
	.close = sq_close,
	.no_queue = sq_no_queue,
	.begin = sq_begin,
	.commit = sq_commit,
	.rollback = sq_rollback,
	.savepoint = sq_savepoint,
	.record = sq_record,
	.record_many = sq_record_many,
	.release_held = sq_release_held,
	.attempt_start = sq_attempt_start,
	.replay_of = sq_replay_of,
	.claim = sq_claim,
	.effect = sq_effect,
	.complete = sq_complete,
	.fail = sq_fail_job,
	.renew = sq_renew,
	.attempt_lost = sq_attempt_lost,
	.forget = sq_forget,
	.requeue = sq_requeue,
	.due = sq_due,
	.fetched = sq_fetched,
	.list = sq_list,
	.show = sq_show,
	.kept = sq_kept,
	.dest_put = sq_dest_put,
	.dest_prune = sq_dest_prune,
	.dest_claimed = sq_dest_claimed,
	.dest_ok = sq_dest_ok,
	.dest_failed = sq_dest_failed,
	.dest_state = sq_dest_state,
	.behind = sq_behind,
	.attempts = sq_attempts,
	.purge = sq_purge,
	.stats = sq_stats,
	.versions = sq_versions,
	.audit = sq_audit,
	.console_counts = sq_console_counts,
	.console_hours = sq_console_hours,
	.console_latency = sq_console_latency,
	.console_size = sq_console_size,
	.console_bounds = sq_console_bounds,
	.console_window = sq_console_window,
	.console_last = sq_console_last,
	.console_last_type = sq_console_last_type,
	.console_explain = sq_console_explain,
	.signin_charge = sq_signin_charge,
	.signin_refund = sq_signin_refund,
	.signin_prune = sq_signin_prune,
	.health_put = sq_health_put,
	.health_list = sq_health_list,
	.copy_count = sq_copy_count,
	.copy_read = sq_copy_read,
	.effects = sq_effects,
	.object_apply = sq_object_apply,
	.objects = sq_objects,
	.object_history = sq_object_history,
};
