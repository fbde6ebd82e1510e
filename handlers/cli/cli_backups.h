/*
 * cli_backups.h -- the backup files of a folder (idemhook-<UTC time>.db,
 * YYYYmmddTHHMMSSZ): the newest one, for idemhook check, and the
 * rotation of idemhook backup --keep (cli_backups.c).
 *
 * A file's age is the earlier of the time in its name and its mtime: a
 * name set in the future (a wrong clock, a hand-made copy) never makes a
 * backup look newer than it was written, nor pushes out the one just
 * written; one whose name and mtime are both ahead of the clock counts
 * as the oldest.  Nothing is kept between calls.
 */
#ifndef IH_CLI_BACKUPS_H
#define IH_CLI_BACKUPS_H

#include <stddef.h>
#include <stdint.h>

#define CLI_BACKUP_PREFIX	"idemhook-"
#define CLI_BACKUP_SUFFIX	".db"

/*
 * The newest backup file in dir: its name in name, its age's time (see
 * above) as Unix ms in *when_ms.  future gets the name of one named or
 * written after now_ms (plus a few minutes of clock skew), "" when none,
 * and *future_ms the time in its name; one whose name and mtime both lie
 * ahead has no age to trust and is never the newest.  Returns IH_OK,
 * IH_ENOTFOUND when dir holds none with an age, IH_ENOMEM, IH_EIO when
 * dir cannot be read (errno set).
 */
int	cli_backup_newest(const char *dir, int64_t now_ms, char *name,
	    size_t len, int64_t *when_ms, char *future, size_t flen,
	    int64_t *future_ms);

/*
 * Removes all but the keep newest backup files of dir, never the file
 * just (the one just written, a name in dir), which counts as one of
 * them.  Prints each name removed (a JSON list's items when json) and
 * each failure.  Returns IH_OK, or IH_EIO / IH_ENOMEM when dir could not
 * be listed (errno set).
 */
int	cli_backups_rotate(const char *dir, long keep, const char *just,
	    int json);

#endif /* IH_CLI_BACKUPS_H */
