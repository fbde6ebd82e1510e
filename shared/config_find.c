/* config_find.c -- the settings file's fixed places, and their safety. */
#include <sys/stat.h>

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "config_find.h"
#include "ih.h"

int
config_find_safe(const char *path, unsigned uid, char *err, size_t errlen)
{
	struct stat sb;

	if (stat(path, &sb) != 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return IH_ENOTFOUND;
		snprintf(err, errlen, "settings file %s: %s", path,
		    strerror(errno));
		return IH_ECONFIG;
	}
	if (!S_ISREG(sb.st_mode)) {
		snprintf(err, errlen, "settings file %s is not a regular "
		    "file", path);
		return IH_ECONFIG;
	}
	if (sb.st_uid != (uid_t)uid && sb.st_uid != 0) {
		snprintf(err, errlen, "settings file %s belongs to uid %u, "
		    "neither this user (uid %u) nor root: not used", path,
		    (unsigned)sb.st_uid, uid);
		return IH_ECONFIG;
	}
	if ((sb.st_mode & 022) != 0) {
		snprintf(err, errlen, "settings file %s has mode %04o: group "
		    "or others can write it: not used (chmod 600)", path,
		    (unsigned)(sb.st_mode & 07777));
		return IH_ECONFIG;
	}
	return IH_OK;
}

int
config_find(char *out, size_t outlen, char *err, size_t errlen)
{
	struct passwd *pw;
	char path[4096];
	uid_t uid = geteuid();
	int n, rc;

	/* The password database, not $HOME: suEXEC and cron may drop it. */
	pw = getpwuid(uid);
	if (pw != NULL && pw->pw_dir != NULL && pw->pw_dir[0] == '/') {
		n = snprintf(path, sizeof(path), "%s%s%s", pw->pw_dir,
		    pw->pw_dir[strlen(pw->pw_dir) - 1] == '/' ? "" : "/",
		    CONFIG_FIND_USER);
		if (n > 0 && (size_t)n < sizeof(path)) {
			rc = config_find_safe(path, (unsigned)uid, err,
			    errlen);
			if (rc != IH_ENOTFOUND)
				goto done;
		}
	}
	snprintf(path, sizeof(path), "%s", CONFIG_FIND_SYSTEM);
	rc = config_find_safe(path, (unsigned)uid, err, errlen);
done:
	if (rc == IH_OK &&
	    snprintf(out, outlen, "%s", path) >= (int)outlen) {
		snprintf(err, errlen, "settings file path too long");
		rc = IH_ECONFIG;
	}
	return rc;
}
