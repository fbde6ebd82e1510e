/* config_find.c -- the settings file's fixed places, and their safety. */
#include <sys/stat.h>

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "config_find.h"
#include "config_vars.h"
#include "ih.h"

int
config_find_wanted(const struct config_vars *env)
{
	size_t i;

	for (i = 0; env != NULL && i < env->n; i++)
		if (env->values[i][0] != '\0')
			return 0;
	return 1;
}

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
config_find_user(unsigned uid, char *name, size_t namelen, char *home,
    size_t homelen)
{
	struct passwd *pw = NULL;
	FILE *f;
	int rc = IH_ENOTFOUND;

	f = fopen("/etc/passwd", "re");
	if (f != NULL) {
		do
			pw = fgetpwent(f);
		while (pw != NULL && pw->pw_uid != (uid_t)uid);
		if (pw != NULL) {
			snprintf(name, namelen, "%s", pw->pw_name);
			snprintf(home, homelen, "%s", pw->pw_dir);
			rc = IH_OK;
		}
		fclose(f);
	}
	if (rc != IH_OK)
		pw = getpwuid((uid_t)uid);
	if (rc != IH_OK && pw != NULL) {
		snprintf(name, namelen, "%s", pw->pw_name);
		snprintf(home, homelen, "%s", pw->pw_dir);
		rc = IH_OK;
	}
	return rc;
}

int
config_find(char *out, size_t outlen, char *err, size_t errlen)
{
	char path[4096], name[256], home[4096];
	uid_t uid = geteuid();
	int n, rc;

	/* The password database, not $HOME: suEXEC and cron may drop it. */
	if (config_find_user((unsigned)uid, name, sizeof(name), home,
	    sizeof(home)) == IH_OK && home[0] == '/') {
		n = snprintf(path, sizeof(path), "%s%s%s", home,
		    home[strlen(home) - 1] == '/' ? "" : "/",
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
