/* test_store.c -- the SQLite store: creation, record, duplicates, locks. */
#include <sys/stat.h>
#include <sys/wait.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <fcntl.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "clock.h"
#include "ih.h"
#include "store.h"
#include "store_unit.h"

struct fixture {
	char		 dir[64];
	char		 path[128];
	struct store	*st;
};

static int
setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	/* FULL: commits_durable_or_relaxed reads the connection's level. */
	struct store_opts o = { NULL, STORE_DURABLE_EACH, 200 };
	char err[STORE_ERR_MAX];

	snprintf(f->dir, sizeof(f->dir), "/tmp/ih-store-XXXXXX");
	if (mkdtemp(f->dir) == NULL)
		return -1;
	/* A nested, missing directory must be created owner-only. */
	snprintf(f->path, sizeof(f->path), "%s/sub/dir/events.db", f->dir);
	o.path = f->path;
	if (store_open(&o, &f->st, err, sizeof(err)) != IH_OK) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fixture *f = *state;
	char cmd[128];

	store_close(f->st);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
	if (system(cmd) != 0)
		return -1;
	free(f);
	return 0;
}

static int64_t
count_rows(const char *path, const char *sql)
{
	sqlite3 *db;
	sqlite3_stmt *s;
	int64_t n = -1;

	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) ==
	    SQLITE_OK && sqlite3_prepare_v2(db, sql, -1, &s, NULL) ==
	    SQLITE_OK) {
		if (sqlite3_step(s) == SQLITE_ROW)
			n = sqlite3_column_int64(s, 0);
		sqlite3_finalize(s);
	}
	sqlite3_close(db);
	return n;
}

static void
created_owner_only_in_wal(void **state)
{
	struct fixture *f = *state;
	struct stat sb;
	char dir[160];

	assert_int_equal(stat(f->path, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0600);
	snprintf(dir, sizeof(dir), "%s/sub/dir", f->dir);
	assert_int_equal(stat(dir, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0700);
	assert_int_equal(count_rows(f->path, "SELECT journal_mode = 'wal' "
	    "FROM pragma_journal_mode"), 1);
	assert_int_equal(count_rows(f->path, "PRAGMA user_version"),
	    STORE_SCHEMA_VERSION);
}

static void
record_then_duplicate(void **state)
{
	struct fixture *f = *state;
	struct event ev = unit_event("evt_1");
	struct store_result r1;
	char err[STORE_ERR_MAX];

	unit_record_thrice(f->st, &ev);
	assert_int_equal(count_rows(f->path, "SELECT count(*) FROM events"),
	    1);
	/* The payload is kept byte for byte, NUL included. */
	assert_int_equal(count_rows(f->path, "SELECT length(payload) FROM "
	    "payloads"), 10);
	assert_int_equal(count_rows(f->path, "SELECT last_seen_at FROM "
	    "events"), 3000);
	/* The same id from another provider is another event. */
	ev.provider = "github";
	assert_int_equal(store_record(f->st, NULL, &ev, 4000, &r1, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(r1.duplicate, 0);
}

static void
rollback_leaves_nothing(void **state)
{
	struct fixture *f = *state;
	struct event ev = unit_event("evt_rb");

	unit_record_rolled_back(f->st, &ev);
	assert_int_equal(count_rows(f->path, "SELECT count(*) FROM events "
	    "WHERE event_id = 'evt_rb'"), 0);
}

static void
busy_past_timeout_fails(void **state)
{
	struct fixture *f = *state;
	struct event ev = unit_event("evt_busy");
	struct store_result r;
	char err[STORE_ERR_MAX];
	sqlite3 *other;

	assert_int_equal(sqlite3_open(f->path, &other), SQLITE_OK);
	assert_int_equal(sqlite3_exec(other, "BEGIN IMMEDIATE", NULL, NULL,
	    NULL), SQLITE_OK);
	assert_int_equal(store_record(f->st, NULL, &ev, 1000, &r, err,
	    sizeof(err)), IH_ESTORE);
	assert_non_null(strstr(err, "lock"));
	sqlite3_exec(other, "ROLLBACK", NULL, NULL, NULL);
	sqlite3_close(other);
	/* Once the lock is gone, the same event records. */
	assert_int_equal(store_record(f->st, NULL, &ev, 1000, &r, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(r.duplicate, 0);
}

static int
sync_item(void *arg, const struct store_audit *a)
{
	if (strcmp(a->name, "synchronous") == 0)
		*(int *)arg = (int)strtol(a->value, NULL, 10);
	return IH_OK;
}

/* The connection's synchronous level now, read through the audit. */
static int
store_sync_level(struct store *st, int *level)
{
	char err[STORE_ERR_MAX];

	*level = -1;
	return store_audit(st, sync_item, level, err, sizeof(err));
}

static void
commits_durable_or_relaxed(void **state)
{
	struct store_txn *tx = NULL;
	struct fixture *f = *state;
	struct event ev = unit_event("evt_sync");
	struct store_result r;
	char err[STORE_ERR_MAX];
	int level;

	assert_int_equal(store_sync_level(f->st, &level), IH_OK);
	assert_int_equal(level, 2);
	assert_int_equal(store_begin(f->st, STORE_RELAXED, &tx, err,
	    sizeof(err)), IH_OK);
	store_rollback(tx);
	assert_int_equal(store_sync_level(f->st, &level), IH_OK);
	assert_int_equal(level, 1);
	/* Recording always goes back to the configured, durable level. */
	assert_int_equal(store_record(f->st, NULL, &ev, 1000, &r, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(store_sync_level(f->st, &level), IH_OK);
	assert_int_equal(level, 2);
}

static void
reopen_is_harmless(void **state)
{
	struct fixture *f = *state;
	struct store_opts o = { f->path, STORE_RELAXED, 200 };
	struct store *again = NULL;
	char err[STORE_ERR_MAX];

	assert_int_equal(store_open(&o, &again, err, sizeof(err)), IH_OK);
	store_close(again);
}

static void
newer_schema_refused(void **state)
{
	struct fixture *f = *state;
	struct store_opts o = { f->path, STORE_DURABLE, 200 };
	struct store *again = NULL;
	char err[STORE_ERR_MAX];
	sqlite3 *db;

	assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "PRAGMA user_version = 999", NULL,
	    NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	assert_int_equal(store_open(&o, &again, err, sizeof(err)),
	    IH_ECONFIG);
	assert_null(again);
	assert_non_null(strstr(err, "newer"));
}

static void
unwritable_path_fails(void **state)
{
	struct store_opts o = { "/dev/null/x/events.db", STORE_DURABLE,
	    200 };
	struct store *st = NULL;
	char err[STORE_ERR_MAX];

	(void)state;
	assert_int_equal(store_open(&o, &st, err, sizeof(err)), IH_ESTORE);
	assert_null(st);
	assert_non_null(strstr(err, "/dev/null"));
}

static void
claim_lease_and_moves(void **state)
{
	struct fixture *f = *state;
	struct event ev = unit_event("evt_claim");
	struct store_result r;
	struct store_job a, b;
	char err[STORE_ERR_MAX];

	assert_int_equal(store_record(f->st, NULL, &ev, 1000, &r, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(unit_claim(f->st, "stripe", 0, "A", 2000, 100, &a), 1);
	assert_int_equal(a.ev.attempt, 1);
	assert_int_equal(a.seq, 1);
	assert_int_equal(a.ev.payload_len, 10);
	/* Held under a lease: nobody else gets it. */
	assert_int_equal(unit_claim(f->st, NULL, 0, "B", 2050, 100, &b), 0);
	/* The lease expires: B takes it over, and A can no longer finish. */
	assert_int_equal(unit_claim(f->st, NULL, 0, "B", 2100, 100, &b), 1);
	assert_int_equal(b.ev.attempt, 2);
	assert_int_equal(store_complete(f->st, NULL, &a, "A", 2150, err,
	    sizeof(err)), IH_ENOTFOUND);
	assert_int_equal(store_fail(f->st, NULL, &a, "A", "x", 0, 0, 2150, err,
	    sizeof(err)), IH_ENOTFOUND);
	/* B fails it with a retry time; it is not due before then. */
	assert_int_equal(store_fail(f->st, NULL, &b, "B", "boom", 5000, 0, 2200, err,
	    sizeof(err)), IH_OK);
	store_job_free(&a);
	assert_int_equal(unit_claim(f->st, NULL, 0, "C", 4999, 100, &a), 0);
	assert_int_equal(count_rows(f->path, "SELECT count(*) FROM events "
	    "WHERE status = 'failed' AND last_error = 'boom'"), 1);
	assert_int_equal(unit_claim(f->st, NULL, 0, "C", 5000, 100, &a), 1);
	assert_int_equal(a.seq, 3);
	assert_int_equal(store_complete(f->st, NULL, &a, "C", 5100, err,
	    sizeof(err)), IH_OK);
	/* B's take-over closed A's attempt row: none is left open. */
	assert_int_equal(count_rows(f->path, "SELECT count(*) FROM attempts "
	    "WHERE outcome IS NOT NULL AND finished_at IS NOT NULL"), 3);
	assert_int_equal(count_rows(f->path, "SELECT count(*) FROM attempts "
	    "WHERE attempt = 1 AND outcome = 'lease_expired'"), 1);
	assert_int_equal(count_rows(f->path, "SELECT status = 'done' FROM "
	    "events"), 1);
	store_job_free(&a);
	store_job_free(&b);
}

static void
renew_lost_and_forget(void **state)
{
	struct fixture *f = *state;
	struct event ev = unit_event("evt_renew");
	struct store_result r;
	struct store_job a, b;
	char err[STORE_ERR_MAX];

	assert_int_equal(store_record(f->st, NULL, &ev, 1000, &r, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(unit_claim(f->st, NULL, 0, "A", 2000, 100, &a), 1);
	/* Renewed from now: the lease outlasts the claim's 2100. */
	assert_int_equal(store_renew(f->st, NULL, &a, "A", 60000, err, sizeof(err)),
	    IH_OK);
	assert_int_equal(count_rows(f->path, "SELECT lease_until > 2100 FROM "
	    "events"), 1);
	assert_int_equal(unit_claim(f->st, NULL, 0, "B", 2200, 100, &b), 0);
	/* Another holder's renewal changes nothing. */
	assert_int_equal(store_renew(f->st, NULL, &a, "B", 100, err, sizeof(err)),
	    IH_ENOTFOUND);
	/* A's lease is taken over: A's renewal fails, its row is closed. */
	assert_int_equal(unit_claim(f->st, NULL, 0, "B", clock_wall_ms() +
	    120000, 100, &b), 1);
	assert_int_equal(store_renew(f->st, NULL, &a, "A", 60000, err, sizeof(err)),
	    IH_ENOTFOUND);
	assert_int_equal(store_attempt_lost(f->st, NULL, &a, 3000, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(count_rows(f->path, "SELECT count(*) FROM attempts "
	    "WHERE finished_at IS NULL"), 1);
	/* Only the holder may forget it; then nothing of it is left. */
	assert_int_equal(store_forget(f->st, NULL, &a, "A", err, sizeof(err)),
	    IH_ENOTFOUND);
	assert_int_equal(store_forget(f->st, NULL, &b, "B", err, sizeof(err)),
	    IH_OK);
	assert_int_equal(count_rows(f->path, "SELECT count(*) FROM events"),
	    0);
	assert_int_equal(count_rows(f->path, "SELECT count(*) FROM attempts"),
	    0);
	store_job_free(&a);
	store_job_free(&b);
}

static void
order_key_waits(void **state)
{
	struct fixture *f = *state;
	struct event e1 = unit_event("evt_o1"), e2 = unit_event("evt_o2");
	struct store_result r;
	struct store_job j;
	char err[STORE_ERR_MAX];

	e1.order_key = e2.order_key = "pay_1";
	assert_int_equal(store_record(f->st, NULL, &e1, 1000, &r, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(store_record(f->st, NULL, &e2, 1001, &r, err,
	    sizeof(err)), IH_OK);
	/* The later event waits while the earlier one is not finished. */
	assert_int_equal(unit_claim(f->st, NULL, r.rowid, "A", 2000, 100, &j),
	    0);
	assert_int_equal(unit_claim(f->st, NULL, 0, "A", 2000, 100, &j), 1);
	assert_string_equal(j.ev.event_id, "evt_o1");
	assert_int_equal(store_complete(f->st, NULL, &j, "A", 2001, err,
	    sizeof(err)), IH_OK);
	store_job_free(&j);
	assert_int_equal(unit_claim(f->st, NULL, r.rowid, "A", 2002, 100, &j),
	    1);
	store_job_free(&j);
}

/* The two words of <path>-sync: commits numbered, durable up to. */
static int
sync_words(const char *path, uint64_t w[2])
{
	char name[160];
	int fd, ok;

	snprintf(name, sizeof(name), "%s-sync", path);
	fd = open(name, O_RDONLY);
	if (fd < 0)
		return -1;
	ok = pread(fd, w, 2 * sizeof(uint64_t), 0) ==
	    (ssize_t)(2 * sizeof(uint64_t));
	close(fd);
	return ok ? 0 : -1;
}

/* One SHARED writer: n events; exits 0 if every answer was synced. */
static int
shared_writer(const char *path, int proc, int n)
{
	struct store_opts o = { NULL, STORE_DURABLE, 5000 };
	struct store *st = NULL;
	struct store_result r;
	struct event ev;
	char err[STORE_ERR_MAX], id[32];
	uint64_t before[2], after[2];
	int i, bad = 0;

	o.path = path;
	if (store_open(&o, &st, err, sizeof(err)) != IH_OK)
		return 2;
	for (i = 0; i < n && !bad; i++) {
		snprintf(id, sizeof(id), "evt_sh_%d_%d", proc, i);
		ev = unit_event(id);
		if (sync_words(path, before) != 0 ||
		    store_record(st, NULL, &ev, 1000 + i, &r, err,
		    sizeof(err)) != IH_OK ||
		    sync_words(path, after) != 0)
			bad = 3;
		/* This commit's number is above the count read before it. */
		else if (after[1] < before[0] + 1)
			bad = 4;
	}
	store_close(st);
	return bad;
}

/*
 * IDEMHOOK_SYNCHRONOUS=SHARED: several processes record at once; each
 * store_record() returns only once the "durable up to" mark covers its
 * commit, every event is stored, and in the end the mark has caught up
 * with the count.
 */
static void
shared_sync_covers_every_commit(void **state)
{
	struct fixture *f = *state;
	uint64_t w[2];
	pid_t pid[3];
	int i, status;

	for (i = 0; i < 3; i++) {
		pid[i] = fork();
		assert_true(pid[i] >= 0);
		if (pid[i] == 0)
			_exit(shared_writer(f->path, i, 40));
	}
	for (i = 0; i < 3; i++) {
		assert_int_equal(waitpid(pid[i], &status, 0), pid[i]);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
	}
	assert_int_equal(count_rows(f->path, "SELECT count(*) FROM events"),
	    120);
	assert_int_equal(sync_words(f->path, w), 0);
	assert_true(w[0] >= 120);
	assert_true(w[1] == w[0]);
}

/*
 * A -sync file that is a symbolic link is not followed: the store then
 * fsyncs each durable commit itself, as at FULL.
 */
static void
shared_sync_link_refused(void **state)
{
	struct fixture *f = *state;
	struct store_opts o = { NULL, STORE_DURABLE, 200 };
	struct event ev = unit_event("evt_link");
	struct store_result r;
	struct store *st = NULL;
	char err[STORE_ERR_MAX], name[160], target[160];
	int level;

	snprintf(name, sizeof(name), "%s-sync", f->path);
	snprintf(target, sizeof(target), "%s/elsewhere", f->dir);
	assert_int_equal(symlink(target, name), 0);
	o.path = f->path;
	assert_int_equal(store_open(&o, &st, err, sizeof(err)), IH_OK);
	assert_int_equal(store_record(st, NULL, &ev, 1000, &r, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(store_sync_level(st, &level), IH_OK);
	assert_int_equal(level, 2);
	assert_int_equal(access(target, F_OK), -1);
	store_close(st);
}

static void
durable_as_of_setting(void **state)
{
	(void)state;
	assert_int_equal(store_durable_as(1), STORE_RELAXED);
	assert_int_equal(store_durable_as(2), STORE_DURABLE_EACH);
	assert_int_equal(store_durable_as(3), STORE_DURABLE);
}

/* db/schema.sql as of schema version 1, comments dropped. */
static const char schema_v1[] =
    "CREATE TABLE IF NOT EXISTS events (\n"
    "\tid\t\tINTEGER PRIMARY KEY,\n"
    "\tprovider\tTEXT\tNOT NULL,\n"
    "\tevent_id\tTEXT\tNOT NULL,\n"
    "\tevent_type\tTEXT\tNOT NULL,\n"
    "\tsubtype\t\tTEXT,\n"
    "\torder_key\tTEXT,\n"
    "\tpayload\t\tBLOB,\n"
    "\theaders\t\tTEXT\tNOT NULL DEFAULT '',\n"
    "\treceived_at\tINTEGER\tNOT NULL,\n"
    "\tlast_seen_at\tINTEGER\tNOT NULL,\n"
    "\tduplicates\tINTEGER\tNOT NULL DEFAULT 0,\n"
    "\tstatus\t\tTEXT\tNOT NULL DEFAULT 'received'\n"
    "\t    CHECK (status IN ('received', 'processing', 'done', 'failed',\n"
    "\t    'dead', 'quarantined')),\n"
    "\tattempts\tINTEGER\tNOT NULL DEFAULT 0,\n"
    "\tnext_attempt_at\tINTEGER\tNOT NULL DEFAULT 0,\n"
    "\tlease_until\tINTEGER,\n"
    "\tlease_owner\tTEXT,\n"
    "\tlast_error\tTEXT,\n"
    "\tdone_at\t\tINTEGER,\n"
    "\tpurged_at\tINTEGER,\n"
    "\tUNIQUE (provider, event_id)\n"
    ");\n"
    "CREATE INDEX IF NOT EXISTS events_due ON events "
    "(status, next_attempt_at)\n"
    "    WHERE status IN ('received', 'processing', 'failed');\n"
    "CREATE INDEX IF NOT EXISTS events_received ON events (received_at);\n"
    "CREATE INDEX IF NOT EXISTS events_order ON events (provider, order_key)\n"
    "    WHERE order_key IS NOT NULL;\n"
    "CREATE TABLE IF NOT EXISTS effects (\n"
    "\tevent\t\tINTEGER\tNOT NULL REFERENCES events (id)\n"
    "\t    ON DELETE CASCADE,\n"
    "\tkind\t\tTEXT\tNOT NULL,\n"
    "\tcreated_at\tINTEGER\tNOT NULL,\n"
    "\tPRIMARY KEY (event, kind)\n"
    ");\n"
    "CREATE TABLE IF NOT EXISTS attempts (\n"
    "\tevent\t\tINTEGER\tNOT NULL REFERENCES events (id)\n"
    "\t    ON DELETE CASCADE,\n"
    "\tattempt\t\tINTEGER\tNOT NULL,\n"
    "\tstarted_at\tINTEGER\tNOT NULL,\n"
    "\tfinished_at\tINTEGER,\n"
    "\toutcome\t\tTEXT,\n"
    "\terror\t\tTEXT,\n"
    "\tPRIMARY KEY (event, attempt)\n"
    ");\n"
    ;

/* The audit's "schema" finding: 1 when ok, -1 when not. */
static int
schema_finding(void *arg, const struct store_audit *a)
{
	if (strcmp(a->name, "schema") == 0)
		*(int *)arg = a->ok ? 1 : -1;
	return IH_OK;
}

/*
 * The rows of "EXPLAIN" (col 1, the opcode) or "EXPLAIN QUERY PLAN" (col
 * 3, the plan's line) of sql on the store at path that contain what.
 */
static int64_t
explain_count(const char *path, const char *explain, int col,
    const char *sql, const char *what)
{
	char q[1024];
	sqlite3 *db;
	sqlite3_stmt *s;
	const unsigned char *t;
	int64_t n = -1;

	snprintf(q, sizeof(q), "%s %s", explain, sql);
	/* Read-only, SQLite leaves the CHECKs out of a write's program. */
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) ==
	    SQLITE_OK && sqlite3_prepare_v2(db, q, -1, &s, NULL) ==
	    SQLITE_OK) {
		n = 0;
		while (sqlite3_step(s) == SQLITE_ROW) {
			t = sqlite3_column_text(s, col);
			n += t != NULL && strstr((const char *)t, what) != NULL;
		}
		sqlite3_finalize(s);
	}
	sqlite3_close(db);
	return n;
}

/*
 * Version 14, on the store at path: events_due's WHERE builds no
 * temporary b-tree when an events row is written (its IN list built
 * one; at most the status CHECK's own is left, which the receive path's
 * change of the CHECK removes), an object_events row builds none (its
 * verdict CHECK built one), and the oldest due event is found by reading
 * events_due in id order, not by sorting every due row.
 */
static void
due_and_history_cheap(const char *path)
{
	assert_in_range(explain_count(path, "EXPLAIN", 1, "INSERT INTO"
	    " events (provider, event_id, event_type, received_at,"
	    " last_seen_at) VALUES ('p', 'e', 't', 1, 1)", "OpenEphemeral"),
	    0, 1);
	assert_int_equal(explain_count(path, "EXPLAIN", 1, "INSERT INTO"
	    " object_events (provider, kind, object_id, event_id, event_type,"
	    " source_at, rank, verdict, recorded_at, seq) VALUES ('p', 'k',"
	    " 'o', 'e', 't', 1, 1, 'applied', 1, 1)", "OpenEphemeral"), 0);
	assert_int_equal(explain_count(path, "EXPLAIN QUERY PLAN", 3,
	    "SELECT e.id FROM events e WHERE (e.status = 'received'"
	    " OR e.status = 'processing' OR e.status = 'failed')"
	    " AND (e.status = 'received' OR (e.status = 'failed'"
	    " AND e.next_attempt_at <= 5)) ORDER BY e.id LIMIT 1",
	    "USING INDEX events_due"), 1);
	assert_int_equal(explain_count(path, "EXPLAIN QUERY PLAN", 3,
	    "SELECT e.id FROM events e WHERE (e.status = 'received'"
	    " OR e.status = 'processing' OR e.status = 'failed')"
	    " AND (e.status = 'received' OR (e.status = 'failed'"
	    " AND e.next_attempt_at <= 5)) ORDER BY e.id LIMIT 1",
	    "TEMP B-TREE"), 0);
}

/*
 * Version 16, on the store at path: the indexes each recorded event and
 * each object's row write, a page of the log each at every commit.
 * events keeps its key and five indexes, of which the receive path
 * writes the key, events_provider_status and, in worker mode,
 * events_due (the others are partial); objects keeps its key alone.
 */
static void
indexes_per_event(const char *path)
{
	assert_int_equal(count_rows(path, "SELECT count(*) FROM sqlite_master"
	    " WHERE type = 'index' AND tbl_name = 'events'"), 6);
	assert_int_equal(count_rows(path, "SELECT count(*) FROM sqlite_master"
	    " WHERE type = 'index' AND tbl_name = 'objects'"), 1);
	assert_int_equal(count_rows(path, "SELECT count(*) FROM sqlite_master"
	    " WHERE name IN ('events_received', 'objects_changed')"), 0);
}

/* A new store's schema (version 14): see due_and_history_cheap(). */
static void
new_store_due_by_id(void **state)
{
	struct fixture *f = *state;

	due_and_history_cheap(f->path);
	indexes_per_event(f->path);
}

/* A store written by schema version 1 is migrated on open, its rows kept. */
static void
migrates_from_v1(void **state)
{
	struct store_opts o = { NULL, STORE_DURABLE, 200 };
	struct store *st = NULL;
	char dir[64], path[128], err[STORE_ERR_MAX], cmd[128];
	sqlite3 *db = NULL;
	int shape;

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/ih-store-XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/v1.db", dir);
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, schema_v1, NULL, NULL, NULL),
	    SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "PRAGMA user_version = 1;"
	    "INSERT INTO events (provider, event_id, event_type, payload,"
	    " received_at, last_seen_at) VALUES ('github', '1:old', 'push',"
	    " x'7b7d', 1, 1)", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	o.path = path;
	if (store_open(&o, &st, err, sizeof(err)) != IH_OK)
		fail_msg("%s", err);
	store_close(st);
	assert_int_equal(count_rows(path, "PRAGMA user_version"),
	    STORE_SCHEMA_VERSION);
	assert_int_equal(count_rows(path, "SELECT count(*) FROM events WHERE"
	    " event_id = '1:old' AND fingerprint IS NULL"), 1);
	assert_int_equal(count_rows(path, "SELECT count(*) FROM sqlite_master"
	    " WHERE name = 'events_fingerprint'"), 1);
	/* Version 8: the payload moved to its own table, byte for byte. */
	assert_int_equal(count_rows(path, "SELECT count(*) FROM payloads"
	    " JOIN events ON events.id = payloads.event WHERE"
	    " event_id = '1:old' AND payload = x'7b7d'"), 1);
	assert_int_equal(count_rows(path, "SELECT count(*) FROM"
	    " pragma_table_info('events') WHERE name = 'payload'"), 0);
	/* And the small keyed tables lost their rowid (one b-tree each). */
	assert_int_equal(count_rows(path, "SELECT count(*) FROM sqlite_master"
	    " WHERE name IN ('effects', 'attempts', 'object_events')"
	    " AND sql LIKE '%WITHOUT ROWID'"), 3);
	/*
	 * Version 13: the status CHECK without IN (...), which SQLite
	 * checked through a temporary b-tree per written row, and still
	 * in force.
	 */
	assert_int_equal(count_rows(path, "SELECT count(*) FROM sqlite_master"
	    " WHERE name = 'events' AND sql LIKE '%status IN%'"), 0);
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "UPDATE events SET status = 'bogus'",
	    NULL, NULL, NULL), SQLITE_CONSTRAINT);
	sqlite3_close(db);
	/* Version 14: events_due by id, no temporary b-tree per row. */
	due_and_history_cheap(path);
	/* Version 16: two indexes fewer to write. */
	indexes_per_event(path);
	/* A second open finds it current and changes nothing. */
	assert_int_equal(store_open(&o, &st, err, sizeof(err)), IH_OK);
	/* Migrated, it holds the objects a new store has, and no others. */
	shape = 0;
	assert_int_equal(store_audit(st, schema_finding, &shape, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(shape, 1);
	store_close(st);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

/* The first event recorded with a body, under a new id; what is not. */
static void
replay_of(void **state)
{
	struct fixture *f = *state;
	struct event ev = unit_event("evt_fp1"), probe;
	struct store_result res;
	struct store_first first;
	char err[STORE_ERR_MAX];

	ev.provider = "shopify";
	ev.event_type = "orders/create";
	ev.fingerprint = "aa11";
	ev.headers = "X-Shopify-Topic: orders/create\n"
	    "X-Shopify-Event-Id: act-1\n";
	assert_int_equal(store_record(f->st, NULL, &ev, 1000, &res, err,
	    sizeof(err)), IH_OK);
	probe = ev;
	probe.event_id = "evt_fp0";
	probe.event_type = "orders/paid";
	probe.headers = "X-Shopify-Event-Id: act-2\n";
	assert_int_equal(store_record(f->st, NULL, &probe, 1001, &res, err,
	    sizeof(err)), IH_OK);
	/* The earliest of the two, whatever the ids. */
	probe.event_id = "evt_fp2";
	assert_int_equal(unit_replay_of(f->st, NULL, &probe, NULL, &first), 1);
	assert_string_equal(first.event_id, "evt_fp1");
	assert_string_equal(first.event_type, "orders/create");
	assert_int_equal(first.same_action, 0);
	/* Whether the first event carries the shared header's line. */
	assert_int_equal(unit_replay_of(f->st, NULL, &probe,
	    "\nX-Shopify-Event-Id: act-1\n", &first), 1);
	assert_int_equal(first.same_action, 1);
	assert_int_equal(unit_replay_of(f->st, NULL, &probe,
	    "\nX-Shopify-Event-Id: act-2\n", &first), 1);
	assert_int_equal(first.same_action, 0);
	/* Found whatever the type: the provider decides. */
	probe.event_type = "orders/create";
	assert_int_equal(unit_replay_of(f->st, NULL, &probe, NULL, &first), 1);
	/* A known id (a duplicate), another body, no body. */
	probe.event_id = "evt_fp1";
	assert_int_equal(unit_replay_of(f->st, NULL, &probe, NULL, &first), 0);
	probe.event_id = "evt_fp2";
	probe.fingerprint = "bb22";
	assert_int_equal(unit_replay_of(f->st, NULL, &probe, NULL, &first), 0);
	probe.fingerprint = NULL;
	assert_int_equal(unit_replay_of(f->st, NULL, &probe, NULL, &first), 0);
	/* Another provider's identical body is not this one's. */
	probe.fingerprint = "aa11";
	probe.provider = "github";
	assert_int_equal(unit_replay_of(f->st, NULL, &probe, NULL, &first), 0);
	assert_int_equal(count_rows(f->path, "SELECT count(*) FROM events"
	    " WHERE fingerprint = 'aa11'"), 2);
}

/* A new event claimed in its insert: no UPDATE, no payload read back. */
static void
record_claim(void **state)
{
	struct store_txn *tx = NULL;
	struct fixture *f = *state;
	struct event ev = unit_event("evt_rc1");
	struct store_result res;
	struct store_job job;
	char err[STORE_ERR_MAX];

	assert_int_equal(store_record_claim(f->st, tx, &ev, 1000, "me", 5000,
	    &res, &job, err, sizeof(err)), IH_EINVAL);
	assert_int_equal(store_begin(f->st, STORE_DURABLE, &tx, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(store_record_claim(f->st, tx, &ev, 1000, "me", 5000,
	    &res, &job, err, sizeof(err)), IH_OK);
	assert_int_equal(store_commit(tx, err, sizeof(err)), IH_OK);
	assert_int_equal(res.duplicate, 0);
	assert_int_equal(job.ev.rowid, res.rowid);
	assert_int_equal(job.ev.attempt, 1);
	assert_true(job.seq >= 1);
	assert_null(job.ev.payload);
	assert_string_equal(job.ev.event_id, "evt_rc1");
	assert_string_equal(job.ev.event_type, "invoice.paid");
	assert_int_equal(count_rows(f->path, "SELECT count(*) FROM events"
	    " WHERE event_id = 'evt_rc1' AND status = 'processing' AND"
	    " attempts = 1 AND lease_owner = 'me' AND lease_until = 6000"),
	    1);
	assert_int_equal(count_rows(f->path, "SELECT count(*) FROM attempts"),
	    1);
	/* The lease is real: the owner completes it. */
	assert_int_equal(store_complete(f->st, NULL, &job, "me", 2000, err,
	    sizeof(err)), IH_OK);
	store_job_free(&job);
	/* A duplicate is not claimed again. */
	assert_int_equal(store_begin(f->st, STORE_DURABLE, &tx, err,
	    sizeof(err)), IH_OK);
	assert_int_equal(store_record_claim(f->st, tx, &ev, 3000, "you", 5000,
	    &res, &job, err, sizeof(err)), IH_OK);
	assert_int_equal(store_commit(tx, err, sizeof(err)), IH_OK);
	assert_int_equal(res.duplicate, 1);
	assert_int_equal(job.ev.rowid, 0);
	assert_int_equal(count_rows(f->path, "SELECT count(*) FROM events"
	    " WHERE event_id = 'evt_rc1' AND status = 'done'"), 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(created_owner_only_in_wal,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(record_then_duplicate, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(rollback_leaves_nothing, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(busy_past_timeout_fails, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(reopen_is_harmless, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(commits_durable_or_relaxed,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(newer_schema_refused, setup,
		    teardown),
		cmocka_unit_test(unwritable_path_fails),
		cmocka_unit_test_setup_teardown(shared_sync_covers_every_commit,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(shared_sync_link_refused,
		    setup, teardown),
		cmocka_unit_test(durable_as_of_setting),
		cmocka_unit_test_setup_teardown(claim_lease_and_moves, setup,
		    teardown),
		cmocka_unit_test(migrates_from_v1),
		cmocka_unit_test_setup_teardown(new_store_due_by_id, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(replay_of, setup, teardown),
		cmocka_unit_test_setup_teardown(record_claim, setup, teardown),
		cmocka_unit_test_setup_teardown(order_key_waits, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(renew_lost_and_forget, setup,
		    teardown),
	};

	return cmocka_run_group_tests_name("store", tests, NULL, NULL);
}
