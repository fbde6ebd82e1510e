/*
 * cli_owner.h -- root working in a folder another user owns (backup,
 * restore): the rest of the command runs in a child process that has
 * become that user, so that no name there can be turned against root
 * (a symbolic link renamed over a temporary file between two calls
 * would otherwise make root's chown or write land on /etc/shadow).
 *
 * Nothing is allocated.  The child holds only what the parent held
 * (descriptors opened before, the settings read); it is not dumpable.
 */
#ifndef IH_CLI_OWNER_H
#define IH_CLI_OWNER_H

#include <sys/types.h>

/* What cli_owner_become() did. */
enum cli_owner {
	CLI_OWNER_SELF,		/* not root, or uid 0: nothing, carry on */
	CLI_OWNER_CHILD,	/* this is the child, now uid: carry on */
	CLI_OWNER_PARENT,	/* the child ran: return its *status */
	CLI_OWNER_FAIL		/* could not fork (said on stderr) */
};

/*
 * Who should act in folder dir for root: the owner of file when it
 * exists and is not root's (the store), else the folder's owner; 0 when
 * both are root's.  Returns 0, or -1 when dir cannot be read (errno).
 */
int	cli_owner_of(const char *dir, const char *file, uid_t *uid,
	    gid_t *gid);

/*
 * As root with uid not 0: flushes stdout and stderr, forks; the child
 * takes uid's groups (or gid alone when uid has no account), gid and
 * uid, checks that root cannot be taken back, and returns
 * CLI_OWNER_CHILD (on a failed drop it says why and exits 1); the
 * parent waits and returns CLI_OWNER_PARENT with the child's exit
 * status (1 when it was killed) in *status.  what names the command in
 * messages.
 */
enum cli_owner	cli_owner_become(uid_t uid, gid_t gid, const char *what,
		    int *status);

/*
 * Opens the file path for a child that becomes another user, as root,
 * only where no other user can swap a name: its folder is root's and
 * not writable by others (or sticky), the file itself no link.  *fd -1
 * when root should not open it (the child then opens it by name as
 * itself) or it cannot be opened.  Returns -1 with err filled when path
 * has a non-empty "-wal" log beside it, which the bytes alone would
 * miss; else 0.
 */
int	cli_owner_open(const char *path, int *fd, char *err, size_t errlen);

#endif /* IH_CLI_OWNER_H */
