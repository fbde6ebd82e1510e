/*
 * cli_check_files.c -- idemhook check: the App's key file, a CGI
 * layout's log and the console's trusted proxy (cli_check_files.h).
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli_check_files.h"
#include "cli_check_store.h"
#include "cli_text.h"
#include "config.h"
#include "console_proxy.h"
#include "ih.h"

/* Longest .htaccess read, and subdirectories of a root looked into. */
#define FILES_HTACCESS_MAX	65536
#define FILES_SUBDIRS_MAX	256

struct files {
	int	*problems;
	int	*oks;
	int	 has_user;
	uid_t	 user;
};

static void IH_PRINTF(2, 3)
problem(struct files *f, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cli_check_vsay(0, f->problems, f->oks, fmt, ap);
	va_end(ap);
}

static void IH_PRINTF(2, 3)
ok(struct files *f, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cli_check_vsay(1, f->problems, f->oks, fmt, ap);
	va_end(ap);
}

static const char *
name_of(uid_t uid, char *buf, size_t len)
{
	struct passwd *pw = getpwuid(uid);

	if (pw != NULL)
		snprintf(buf, len, "%s", pw->pw_name);
	else
		snprintf(buf, len, "uid %lu", (unsigned long)uid);
	return buf;
}

/* IDEMHOOK_GITHUB_APP_KEY_FILE: a secret file, as the settings file. */
static void
app_key(struct files *f, struct cli *c)
{
	const char *path = cli_setting(c, "IDEMHOOK_GITHUB_APP_KEY_FILE");
	char who[64];
	struct stat sb;
	int bad = 0;

	if (path == NULL || *path == '\0')
		return;
	if (lstat(path, &sb) != 0) {
		problem(f, "IDEMHOOK_GITHUB_APP_KEY_FILE %s: %s", path,
		    strerror(errno));
		return;
	}
	if (S_ISLNK(sb.st_mode)) {
		problem(f, "IDEMHOOK_GITHUB_APP_KEY_FILE %s is a symbolic "
		    "link: whoever can change it chooses the key the command "
		    "signs with; name the file itself", path);
		return;
	}
	if (!S_ISREG(sb.st_mode)) {
		problem(f, "IDEMHOOK_GITHUB_APP_KEY_FILE %s is not a regular "
		    "file", path);
		return;
	}
	if ((sb.st_mode & 077) != 0) {
		problem(f, "IDEMHOOK_GITHUB_APP_KEY_FILE %s has mode %04o: "
		    "group or others can read the App's private key; run "
		    "chmod 600 %s", path, (unsigned)(sb.st_mode & 07777),
		    path);
		bad = 1;
	}
	if (sb.st_uid != geteuid() && !(f->has_user && sb.st_uid == f->user)) {
		problem(f, "IDEMHOOK_GITHUB_APP_KEY_FILE %s belongs to %s, "
		    "neither the user running this check nor the programs' "
		    "user (--user): chown it to the user that runs idemhook "
		    "catch-up", path, name_of(sb.st_uid, who, sizeof(who)));
		bad = 1;
	}
	if (!bad)
		ok(f, "IDEMHOOK_GITHUB_APP_KEY_FILE %s is owner-only (%04o), "
		    "owned by %s", path, (unsigned)(sb.st_mode & 07777),
		    name_of(sb.st_uid, who, sizeof(who)));
}

/* Does dir/.htaccess run programs as CGI ("cgi-script")? */
static int
htaccess_cgi(const char *dir)
{
	char path[4200], buf[FILES_HTACCESS_MAX + 1];
	size_t n;
	FILE *fp;

	if (snprintf(path, sizeof(path), "%s/.htaccess", dir) >=
	    (int)sizeof(path))
		return 0;
	fp = fopen(path, "r");
	if (fp == NULL)
		return 0;
	n = fread(buf, 1, FILES_HTACCESS_MAX, fp);
	fclose(fp);
	buf[n] = '\0';
	return strstr(buf, "cgi-script") != NULL;
}

/* A plain CGI layout under root: its .htaccess, or a subdirectory's. */
static int
cgi_under(const char *root, char *where, size_t len)
{
	char sub[4200];
	struct dirent *de;
	DIR *d;
	int found = 0, n;

	if (htaccess_cgi(root)) {
		snprintf(where, len, "%s/.htaccess", root);
		return 1;
	}
	d = opendir(root);
	if (d == NULL)
		return 0;
	for (n = 0; !found && n < FILES_SUBDIRS_MAX; n++) {
		de = readdir(d);
		if (de == NULL)
			break;
		if (de->d_name[0] == '.')
			continue;
		if (snprintf(sub, sizeof(sub), "%s/%s", root, de->d_name) >=
		    (int)sizeof(sub))
			continue;
		found = htaccess_cgi(sub);
		if (found)
			snprintf(where, len, "%s/.htaccess", sub);
	}
	closedir(d);
	return found;
}

/* A plain CGI layout processing after the answer needs IDEMHOOK_LOG. */
static void
cgi_log(struct files *f, struct cli *c, const char *const *docroots,
    size_t n)
{
	const struct config *cfg;
	char where[4300];
	size_t i;
	int cgi = 0;

	if (cli_config(c, 0, &cfg) != IH_OK)
		return;
	for (i = 0; !cgi && i < n; i++)
		cgi = cgi_under(docroots[i], where, sizeof(where));
	if (cfg->log != NULL && *cfg->log != '\0') {
		ok(f, "IDEMHOOK_LOG is set: a plain CGI program's processing "
		    "after the answer logs there");
		return;
	}
	if (cfg->mode == CONFIG_MODE_WORKER)
		return;
	if (cgi)
		problem(f, "plain CGI (%s) with IDEMHOOK_LOG unset: the "
		    "detached process that runs the actions after the answer "
		    "has its stderr on /dev/null, so its failures are logged "
		    "nowhere; set IDEMHOOK_LOG to a file the programs' user "
		    "can write (or syslog)", where);
	else
		printf("note: IDEMHOOK_LOG is unset: if the receivers run as "
		    "plain CGI, their processing after the answer logs "
		    "nowhere (give check the --docroot of a CGI layout to "
		    "have it looked at)\n");
}

/* IDEMHOOK_CONSOLE_TRUSTED_PROXY: one IP address, or unset. */
static void
trusted_proxy(struct files *f, struct cli *c)
{
	const char *v = cli_setting(c, "IDEMHOOK_CONSOLE_TRUSTED_PROXY");
	char err[160];

	if (v == NULL || *v == '\0')
		return;
	if (console_trusted_proxy_check(v, err, sizeof(err)) != IH_OK)
		problem(f, "%s", err);
	else
		ok(f, "IDEMHOOK_CONSOLE_TRUSTED_PROXY %s: the console takes "
		    "the client's address from X-Forwarded-For only on "
		    "requests from it", v);
}

void
cli_check_files(struct cli *c, int has_user, uid_t user,
    const char *const *docroots, size_t n, int *problems, int *oks)
{
	struct files f;

	f.problems = problems;
	f.oks = oks;
	f.has_user = has_user;
	f.user = user;
	app_key(&f, c);
	cgi_log(&f, c, docroots, n);
	trusted_proxy(&f, c);
}
