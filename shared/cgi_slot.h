/*
 * cgi_slot.h -- the bound on plain CGI's detached processors: at most
 * IDEMHOOK_CGI_PROCESSORS (default 2) programs of one SQLite store
 * process events after their answers at a time, whatever the burst.
 *
 * A slot is an flock(2) on one of the files "<store>-proc1" to
 * "<store>-procN" beside the store (created 0600, never followed through
 * a symbolic link), held through an open descriptor: a fork shares it
 * (the detached child keeps its parent's), an action's exec does not
 * (close-on-exec), and it is let go when its holder exits, however.
 *
 * A delivery that finds every slot taken leaves its event due and
 * exits; so that the event is never left behind, it marks the work
 * pending in "<store>-proc" (the gate) under the gate's lock, and every
 * holder, before it exits, looks at the mark under the same lock: a
 * mark sends it back to drain, else it exits still holding the gate, so
 * that no mark can fall between its look and its exit.  A recorder
 * that cannot take a slot thus finds either a holder that will drain
 * after its commit, or a free slot.
 *
 * A PostgreSQL store has no file beside it: cgi_slot_take() says
 * CGI_SLOT_NONE and processing is not bounded there (worker mode is the
 * advice, README).  A slot file that cannot be used is the same, with
 * the cause in err.
 */
#ifndef IH_CGI_SLOT_H
#define IH_CGI_SLOT_H

#include <stddef.h>

#define CGI_SLOT_PATH	4200

struct cgi_slot {
	int	 fd;		/* the slot held, or -1 */
	int	 gate;		/* the gate (cgi_slot_leave()), or -1 */
	int	 held;		/* a slot is held */
};

enum cgi_slot_got {
	CGI_SLOT_TAKEN = 0,	/* a slot is held */
	CGI_SLOT_FULL,		/* every slot is taken (marked when asked) */
	CGI_SLOT_NONE		/* no slot files here: unbounded */
};

void	cgi_slot_init(struct cgi_slot *s);

/*
 * Takes the first free of the n slots of the store db_path, unless s
 * already holds one.  With mark, a full house marks the work pending
 * (under the gate's lock, so that no holder's last look misses it).
 * Returns an enum cgi_slot_got; CGI_SLOT_NONE with the cause in err
 * ("" for a PostgreSQL store).
 */
int	cgi_slot_take(struct cgi_slot *s, const char *db_path, long n,
	    int mark, char *err, size_t errlen);

/*
 * The holder's last look before it exits: returns 1 when work was
 * marked pending (the mark is cleared: drain again, then call again),
 * 0 when it may exit; the gate then stays locked until the process
 * exits.  Returns 0 at once when s holds no slot.
 */
int	cgi_slot_leave(struct cgi_slot *s, const char *db_path);

#endif
