/*
 * config_file.h -- the IDEMHOOK_CONFIG file as a long-running program
 * holds it: its lines (config_vars.h) and the stamp of the version they
 * came from, read again only when the stamp changes.  A broken or
 * removed file leaves no lines at all, never old secrets in force.
 * Where the file is when nobody names it is config_find.h's job.
 */
#ifndef IH_CONFIG_FILE_H
#define IH_CONFIG_FILE_H

#include <sys/types.h>

#include <stddef.h>
#include <time.h>

#include "config_vars.h"

/*
 * What identifies one version of a file: any edit or replacement changes
 * at least one field, including a same-size rewrite in the same second
 * (nanosecond mtime and ctime).
 */
struct config_stamp {
	dev_t		 dev;
	ino_t		 ino;
	off_t		 size;
	struct timespec	 mtim;
	struct timespec	 ctim;
};

/*
 * The IDEMHOOK_CONFIG file as a long-running program holds it: its lines,
 * and the stamp of the version they came from.  config_file_refresh()
 * costs one stat(2) when nothing changed, so the programs call it for
 * every request and a rotated or removed secret takes effect at the next
 * one, without a restart.
 */
struct config_file {
	struct config_vars	 vars;
	char			*path;	/* NULL: no file loaded */
	struct config_stamp	 stamp;
	int			 flags;	/* CONFIG_FILE_* it was loaded with */
	int			 racy;	/* stamp too recent to be trusted */
	/*
	 * Counts the changes of what cf holds (each read, each drop), so
	 * that what was computed from its lines is known to be current.
	 */
	unsigned long		 gen;
};

/*
 * The file was named by a FastCGI request parameter, not by the operator
 * at start-up: it must be a regular file owned by root, by the user this
 * program runs as, or by the owner of the program file, and writable by
 * no one else, so that whoever can reach the socket cannot name a file of
 * their own.
 */
#define CONFIG_FILE_REQUEST	0x1

/*
 * Makes cf hold the lines of the file at path (no file when path is NULL
 * or empty), reading it again only when its name, flags or stamp changed,
 * or when the last read was too close to the file's last change to tell a
 * later same-size edit apart.  Sets *reloaded (when not NULL) to 1 when
 * the file was read.  Returns IH_OK, or the error of
 * config_vars_from_file() (or IH_EAUTH when CONFIG_FILE_REQUEST's rule
 * fails) with the cause in err; on failure cf holds no lines at all, so
 * that a broken or removed file never leaves old secrets in force.
 */
int	config_file_refresh(struct config_file *cf, const char *path,
	    int flags, int *reloaded, char *err, size_t errlen);

/*
 * Wipes and frees what cf holds; cf is then empty and reusable, its gen
 * kept and counted.
 */
void	config_file_free(struct config_file *cf);

#endif
