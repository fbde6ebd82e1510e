/*
 * hub.h -- one process of a FastCGI program records for its siblings
 * (IDEMHOOK_HUB=1, for Apache mod_fcgid).
 *
 * mod_fcgid gives each process of a program one request at a time, so
 * each process commits its events alone, and every commit by another
 * process empties its page cache.  With the hub on, the processes of
 * one program run by one user with one start-up environment elect one
 * of them, the hub, by binding an abstract UNIX socket named by a
 * SHA-256 digest of those three.  Every other process passes each
 * connection it accepts to the hub (SCM_RIGHTS) and goes back to
 * accept; the hub's request threads read, verify and answer it, and its
 * writer records the deliveries of every process together, many per
 * commit, as one process behind lighttpd does.  Either end checks that
 * the other runs as the same user (SO_PEERCRED).
 *
 * Contract:
 *   hub_init()    before the start-up environment is scrubbed: names
 *                 the hub; on is 0 (off: nothing else does anything)
 *                 or 1.
 *   hub_pass()    a connection accepted from the web server: returns 1
 *                 when it went to the hub (the caller closes its copy
 *                 and answers nothing), 0 when this process serves it,
 *                 being the hub or finding none to reach (a connect,
 *                 check or send that fails; a hub whose queue is full:
 *                 nothing waits for it).  *became is set when this
 *                 process has just become the hub: the caller starts
 *                 the threads that call hub_take().
 *   hub_take()    in the hub: blocks until a connection is passed and
 *                 returns it; -1 when the wait was interrupted (the
 *                 process is stopping).
 *   hub_free()    closes the hub's socket, if this process holds it.
 * A connection passed to a hub that dies before answering it is closed
 * unanswered: the web server answers 5xx and the provider delivers
 * again.  No 2xx is ever given for an event not durably recorded.
 */
#ifndef IH_HUB_H
#define IH_HUB_H

#include <pthread.h>

struct hub {
	int		 on;
	char		 name[72];	/* abstract name, leading NUL */
	int		 namelen;
	int		 fd;		/* the hub's socket, here; else -1 */
	int		 warned;	/* a squatter said once */
	pthread_mutex_t	 mu;		/* fd as it is made; warned */
};

void	hub_init(struct hub *h, int on, char **env);
int	hub_pass(struct hub *h, int conn, int *became);
int	hub_take(struct hub *h);
void	hub_free(struct hub *h);

#endif
