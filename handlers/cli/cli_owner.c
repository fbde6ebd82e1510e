/*
 * cli_owner.c -- root working in a folder another user owns: the rest
 * of the command as that user, in a child process (cli_owner.h).
 */
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli_owner.h"
#include "idemhook.h"

int
cli_owner_of(const char *dir, const char *file, uid_t *uid, gid_t *gid)
{
	struct stat sb;

	*uid = 0;
	*gid = 0;
	if (file != NULL && lstat(file, &sb) == 0 && sb.st_uid != 0) {
		*uid = sb.st_uid;
		*gid = sb.st_gid;
		return 0;
	}
	if (lstat(dir, &sb) != 0)
		return -1;
	if (sb.st_uid != 0) {
		*uid = sb.st_uid;
		*gid = sb.st_gid;
	}
	return 0;
}

/* In the child: becomes uid for good, or says why not. */
static int
drop_to(uid_t uid, gid_t gid, const char *what)
{
	struct passwd *pw;
	int rc;

	pw = getpwuid(uid);
	if (pw != NULL)
		rc = initgroups(pw->pw_name, gid);
	else
		rc = setgroups(1, &gid);
	if (rc == 0)
		rc = setregid(gid, gid);
	if (rc == 0)
		rc = setreuid(uid, uid);
	if (rc != 0) {
		fprintf(stderr, "idemhook: %s: cannot become user %u, group "
		    "%u: %s\n", what, (unsigned)uid, (unsigned)gid,
		    strerror(errno));
		return -1;
	}
	/* Dropped for good: neither root nor its groups come back. */
	if (setuid(0) == 0 || (gid != 0 && setgid(0) == 0) ||
	    geteuid() != uid) {
		fprintf(stderr, "idemhook: %s: root could be taken back after "
		    "becoming user %u\n", what, (unsigned)uid);
		return -1;
	}
	(void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	return 0;
}

enum cli_owner
cli_owner_become(uid_t uid, gid_t gid, const char *what, int *status)
{
	pid_t pid, w;
	int ws;

	*status = CLI_EXIT_FAIL;
	if (geteuid() != 0 || uid == 0)
		return CLI_OWNER_SELF;
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "idemhook: %s: cannot fork to act as user %u: "
		    "%s\n", what, (unsigned)uid, strerror(errno));
		return CLI_OWNER_FAIL;
	}
	if (pid == 0) {
		if (drop_to(uid, gid, what) != 0)
			_exit(CLI_EXIT_FAIL);
		return CLI_OWNER_CHILD;
	}
	do {
		w = waitpid(pid, &ws, 0);
	} while (w < 0 && errno == EINTR);
	if (w == pid && WIFEXITED(ws))
		*status = WEXITSTATUS(ws);
	else
		fprintf(stderr, "idemhook: %s: the process acting as user %u "
		    "ended without an exit status\n", what, (unsigned)uid);
	return CLI_OWNER_PARENT;
}

int
cli_owner_open(const char *path, int *fd, char *err, size_t errlen)
{
	char dir[4096], base[4096], wal[4200];
	const char *bn;
	struct stat sb;
	int dfd = -1, rc = 0, n;

	*fd = -1;
	n = snprintf(dir, sizeof(dir), "%s", path);
	if (n < 0 || (size_t)n >= sizeof(dir))
		return 0;
	memcpy(base, dir, (size_t)n + 1);
	dfd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || fstat(dfd, &sb) != 0)
		goto out;
	if (sb.st_uid != 0 || ((sb.st_mode & 022) != 0 &&
	    (sb.st_mode & S_ISVTX) == 0))
		goto out;
	bn = basename(base);
	snprintf(wal, sizeof(wal), "%s-wal", bn);
	if (fstatat(dfd, wal, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
	    sb.st_size > 0) {
		snprintf(err, errlen, "the copy %s has a log beside it "
		    "(%s-wal), which root cannot hand over with it: fold it "
		    "in first (sqlite3 %s 'PRAGMA wal_checkpoint(TRUNCATE)')",
		    path, path, path);
		rc = -1;
		goto out;
	}
	*fd = openat(dfd, bn, O_RDONLY | O_CLOEXEC |
	    O_NOFOLLOW | O_NONBLOCK);
out:
	if (dfd >= 0)
		close(dfd);
	return rc;
}
