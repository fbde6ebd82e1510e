/* check_programs.c -- the running programs' sockets; the programs' user. */
#include <sys/stat.h>

#include <ctype.h>
#include <dirent.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_programs.h"
#include "config.h"
#include "config_vars.h"
#include "idemhook.h"
#include "ih.h"
#include "redact.h"
#include "providers.h"
#include "provider.h"

#define LISTEN_MAX	4096	/* listening TCP sockets looked at */

struct listening {
	size_t		 n;
	unsigned long	 inode[LISTEN_MAX];
	unsigned	 port[LISTEN_MAX];
};

/* Splits line at blanks into at most max fields; returns their number. */
static size_t
fields(char *line, char **field, size_t max)
{
	size_t n = 0;

	while (n < max) {
		while (*line == ' ' || *line == '\t' || *line == '\n')
			*line++ = '\0';
		if (*line == '\0')
			break;
		field[n++] = line;
		while (*line != '\0' && *line != ' ' && *line != '\t' &&
		    *line != '\n')
			line++;
	}
	return n;
}

/* Adds the listening sockets of /proc/net/tcp or tcp6 to l. */
static void
read_listening(const char *path, struct listening *l)
{
	char line[512], *f[10], *colon;
	FILE *fp = fopen(path, "re");

	if (fp == NULL)
		return;
	/* sl local rem st tx:rx tr:when retrnsmt uid timeout inode ... */
	while (l->n < LISTEN_MAX && fgets(line, sizeof(line), fp) != NULL) {
		if (fields(line, f, 10) != 10 || strcmp(f[3], "0A") != 0)
			continue;
		colon = strrchr(f[1], ':');
		if (colon == NULL)
			continue;
		l->port[l->n] = (unsigned)strtoul(colon + 1, NULL, 16);
		l->inode[l->n++] = strtoul(f[9], NULL, 10);
	}
	fclose(fp);
}

/* Is argv0's last component one of ours ("stripe.fcgi")?  Its name. */
static const char *
program_name(const char *argv0)
{
	const char *base = strrchr(argv0, '/');
	size_t i, n;

	base = base != NULL ? base + 1 : argv0;
	n = strlen(base);
	if (n < 6 || strcmp(base + n - 5, ".fcgi") != 0)
		return NULL;
	if (n - 5 == 7 && strncmp(base, "console", 7) == 0)
		return "console";
	for (i = 0; providers_all[i] != NULL; i++)
		if (strlen(providers_all[i]->name) == n - 5 &&
		    strncmp(base, providers_all[i]->name, n - 5) == 0)
			return providers_all[i]->name;
	return NULL;
}

/*
 * Is pid in this process's PID namespace?  A test's namespace, or a
 * container's, holds programs of another deployment.
 */
static int
same_pidns(const char *pid)
{
	char path[300], theirs[64], ours[64];
	ssize_t n, m;

	snprintf(path, sizeof(path), "/proc/%s/ns/pid", pid);
	n = readlink(path, theirs, sizeof(theirs) - 1);
	m = readlink("/proc/self/ns/pid", ours, sizeof(ours) - 1);
	if (n < 0 || m < 0)
		return 0;
	theirs[n] = ours[m] = '\0';
	return strcmp(theirs, ours) == 0;
}

/* The inode of the socket on pid's fd 0: 1, 0 (not a socket), -1. */
static int
fd0_socket(const char *pid, unsigned long *inode)
{
	char path[300], link[128];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%s/fd/0", pid);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return -1;
	link[n] = '\0';
	if (strncmp(link, "socket:[", 8) != 0)
		return 0;
	*inode = strtoul(link + 8, NULL, 10);
	return 1;
}

/*
 * Compares pid's start-up IDEMHOOK_DB and IDEMHOOK_CONFIG (its environ,
 * which the programs keep but for the secrets) with the command's.
 * Returns the problems printed.
 */
static int
compare_env(const char *pid, const char *name, struct cli *c)
{
	const struct config *cfg;
	char path[300], shown[REDACT_URI_MAX], mine[REDACT_URI_MAX];
	char *buf, *p, *end;
	const char *db = NULL, *conf = NULL;
	size_t n;
	int problems = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%s/environ", pid);
	buf = malloc(CONFIG_FILE_MAX);
	f = buf != NULL ? fopen(path, "re") : NULL;
	if (f == NULL) {
		free(buf);
		return 0;
	}
	n = fread(buf, 1, CONFIG_FILE_MAX - 1, f);
	fclose(f);
	buf[n] = '\0';
	for (p = buf, end = buf + n; p < end; p += strlen(p) + 1) {
		if (strncmp(p, "IDEMHOOK_DB=", 12) == 0 && p[12] != '\0')
			db = p + 12;
		if (strncmp(p, "IDEMHOOK_CONFIG=", 16) == 0 && p[16] != '\0')
			conf = p + 16;
	}
	/* Only this deployment's programs: those that read our file. */
	if (conf == NULL || c->config_path == NULL ||
	    strcmp(conf, c->config_path) != 0)
		db = NULL;
	if (db != NULL && cli_config(c, 0, &cfg) == IH_OK &&
	    strcmp(db, cfg->db_path) != 0) {
		problems++;
		printf("PROBLEM: the %s program (pid %s) was started with "
		    "IDEMHOOK_DB=%s, but this command uses %s: its events go "
		    "where list, work and the cron jobs do not look; name the "
		    "store in the settings file only\n", name, pid,
		    ih_redact(db, shown, sizeof(shown)),
		    ih_redact(cfg->db_path, mine, sizeof(mine)));
	}
	free(buf);
	return problems;
}

int
check_programs(struct cli *c)
{
	static struct listening l;
	char path[300], argv0[512];
	const char *name;
	struct dirent *de;
	unsigned long inode;
	size_t i, n;
	int seen = 0, hidden = 0, problems = 0, r;
	FILE *f;
	DIR *d;

	l.n = 0;
	read_listening("/proc/net/tcp", &l);
	read_listening("/proc/net/tcp6", &l);
	d = opendir("/proc");
	if (d == NULL)
		return 0;
	for (;;) {
		de = readdir(d);
		if (de == NULL)
			break;
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/cmdline", de->d_name);
		f = fopen(path, "re");
		if (f == NULL)
			continue;
		n = fread(argv0, 1, sizeof(argv0) - 1, f);
		fclose(f);
		argv0[n] = '\0';
		name = program_name(argv0);
		if (name == NULL || !same_pidns(de->d_name))
			continue;
		r = fd0_socket(de->d_name, &inode);
		if (r < 0) {
			hidden++;
			continue;
		}
		seen++;
		problems += compare_env(de->d_name, name, c);
		for (i = 0; r == 1 && i < l.n; i++)
			if (l.inode[i] == inode) {
				problems++;
				printf("PROBLEM: the %s program (pid %s) "
				    "listens on TCP port %u: whoever reaches "
				    "that port can send it FastCGI requests; "
				    "give it a UNIX socket (spawn-fcgi -s, as "
				    "spawn-fcgi.sh does)\n", name,
				    de->d_name, l.port[i]);
			}
	}
	closedir(d);
	if (problems == 0 && seen > 0)
		printf("ok: no running program listens on TCP or uses "
		    "another store (%d seen)\n", seen);
	if (hidden > 0)
		printf("note: %d running program(s) whose socket this user "
		    "cannot see: run check as root to see whether one "
		    "listens on TCP\n", hidden);
	return problems;
}

const char *
check_programs_user(const char *path, char *name, size_t len)
{
	struct passwd *pw;
	struct stat sb;

	if (geteuid() != 0 || path == NULL || stat(path, &sb) != 0 ||
	    sb.st_uid == 0)
		return NULL;
	pw = getpwuid(sb.st_uid);
	if (pw == NULL)
		return NULL;
	snprintf(name, len, "%s", pw->pw_name);
	printf("note: run as root without --user: taking %s, the settings "
	    "file's owner, as the user the programs run as\n", name);
	return name;
}

const char *
check_audit_value(const struct store_audit *a)
{
	if (strcmp(a->name, "synchronous") != 0)
		return a->value;
	if (strcmp(a->value, "2") == 0)
		return "FULL (SHARED and FULL both fsync before answering)";
	if (strcmp(a->value, "1") == 0)
		return "NORMAL";
	return a->value;
}

const char *
check_store_advice(void)
{
	if (geteuid() == 0 || access("/var/lib/idemhook", W_OK) == 0)
		return IH_DEFAULT_DB;
	return "~/idemhook/idemhook.db, in your home outside public_html "
	    "(shared hosting)";
}
