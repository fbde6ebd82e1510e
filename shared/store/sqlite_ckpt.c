/*
 * sqlite_ckpt.c -- SQLite: a long-lived writer's checkpoints in a thread
 * of their own (sqlite_ckpt.h).
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "ih.h"
#include "sqlite_ckpt.h"
#include "sqlite_int.h"

struct sqckpt {
	pthread_t	 thread;
	pthread_mutex_t	 mu;
	pthread_cond_t	 cv;
	sqlite3		*db;	/* the checkpointer's own connection */
	int		 want;	/* the log has grown: checkpoint */
	int		 stop;
};

/*
 * The writer's commits: wakes the checkpointer once the log holds
 * SQCKPT_PAGES, and checkpoints here only when it has fallen far behind.
 */
static int
on_commit(void *arg, sqlite3 *db, const char *name, int pages)
{
	struct sqckpt *c = arg;

	if (pages >= 10 * SQCKPT_PAGES) {
		(void)sqlite3_wal_checkpoint_v2(db, name,
		    SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
		return SQLITE_OK;
	}
	if (pages >= SQCKPT_PAGES) {
		pthread_mutex_lock(&c->mu);
		c->want = 1;
		pthread_cond_signal(&c->cv);
		pthread_mutex_unlock(&c->mu);
	}
	return SQLITE_OK;
}

static void *
thread_main(void *arg)
{
	struct sqckpt *c = arg;
	sigset_t set;

	/* The writer's store waits with SIGALRM: let it go there. */
	sigemptyset(&set);
	sigaddset(&set, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	pthread_mutex_lock(&c->mu);
	for (;;) {
		while (!c->want && !c->stop)
			pthread_cond_wait(&c->cv, &c->mu);
		if (c->stop)
			break;
		c->want = 0;
		pthread_mutex_unlock(&c->mu);
		/* A failure (busy) leaves the pages for the next one. */
		(void)sqlite3_wal_checkpoint_v2(c->db, "main",
		    SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
		pthread_mutex_lock(&c->mu);
	}
	pthread_mutex_unlock(&c->mu);
	return NULL;
}

int
sqckpt_start(struct sq *st, char *err, size_t errlen)
{
	struct sqckpt *c;
	const char *path = sqlite3_db_filename(st->db, "main");
	int rc;

	if (st->ckpt != NULL)
		return IH_OK;
	if (path == NULL || *path == '\0')
		return sq_fail(st, SQLITE_MISUSE, "no checkpointer", err,
		    errlen);
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return IH_ENOMEM;
	/* The checkpoint's fsyncs as the writer's own would run them. */
	rc = sqlite3_open_v2(path, &c->db, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(c->db, "PRAGMA synchronous = NORMAL", NULL,
		    NULL, NULL);
	if (rc != SQLITE_OK) {
		sqlite3_close(c->db);
		free(c);
		return sq_fail(st, rc, "cannot open the checkpointer", err,
		    errlen);
	}
	pthread_mutex_init(&c->mu, NULL);
	pthread_cond_init(&c->cv, NULL);
	if (pthread_create(&c->thread, NULL, thread_main, c) != 0) {
		pthread_cond_destroy(&c->cv);
		pthread_mutex_destroy(&c->mu);
		sqlite3_close(c->db);
		free(c);
		return sq_fail(st, SQLITE_ERROR, "no checkpointer thread", err,
		    errlen);
	}
	st->ckpt = c;
	/* In place of SQLite's own hook, which checkpoints in the commit. */
	sqlite3_wal_hook(st->db, on_commit, c);
	return IH_OK;
}

void
sqckpt_stop(struct sq *st)
{
	struct sqckpt *c = st->ckpt;

	if (c == NULL)
		return;
	sqlite3_wal_autocheckpoint(st->db, SQCKPT_PAGES);
	pthread_mutex_lock(&c->mu);
	c->stop = 1;
	pthread_cond_signal(&c->cv);
	pthread_mutex_unlock(&c->mu);
	pthread_join(c->thread, NULL);
	sqlite3_close(c->db);
	pthread_cond_destroy(&c->cv);
	pthread_mutex_destroy(&c->mu);
	free(c);
	st->ckpt = NULL;
}
