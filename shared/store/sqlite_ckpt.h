/*
 * sqlite_ckpt.h -- SQLite: a long-lived writer's checkpoints, moved to a
 * thread of their own.
 *
 * A checkpoint copies the log's pages into the store's file and fsyncs
 * it.  SQLite runs one in the connection whose commit takes the log past
 * 1,000 pages, inside that commit: a FastCGI writer then answers its
 * batch only after it.  On a large store the pages are spread over the
 * whole file (its random-key indexes), and that fsync took seconds.
 * sqckpt_start() gives the connection a checkpointer instead: a thread
 * with a connection of its own, woken by the writer's commits once the
 * log holds SQCKPT_PAGES, that runs PASSIVE checkpoints (they take no
 * lock a writer waits for).  Should the log still reach ten times that,
 * the writer checkpoints itself, as before, so the log stays bounded.
 *
 * Ownership: the checkpointer belongs to its struct sq; sq_close() stops
 * it (sqckpt_stop()) before closing the connection.  Failure to start
 * leaves SQLite's own checkpoints in place.  Not for a CGI process, which
 * closes its store after every request.
 */
#ifndef IH_SQLITE_CKPT_H
#define IH_SQLITE_CKPT_H

#include <stddef.h>

#define SQCKPT_PAGES	1000	/* SQLite's own wal_autocheckpoint */

struct sq;
struct sqckpt;

/* IH_OK, or IH_ESTORE/IH_ENOMEM with why in err (nothing changed). */
int	sqckpt_start(struct sq *st, char *err, size_t errlen);
/* Stops and frees st's checkpointer, if any; SQLite's own again. */
void	sqckpt_stop(struct sq *st);

#endif
