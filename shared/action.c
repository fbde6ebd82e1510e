/* action.c -- one command per event, bounded in time. */
#include <sys/types.h>
#include <sys/wait.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "account_name.h"
#include "action.h"
#include "clock.h"
#include "ih.h"
#include "verify.h"

int
action_key(const char *provider, const char *event_id, const char *command,
    char out[ACTION_KEY_LEN])
{
	struct verify_part parts[5] = {
		{ provider, strlen(provider) }, { "\n", 1 },
		{ event_id, strlen(event_id) }, { "\n", 1 },
		{ command, strlen(command) },
	};
	unsigned char mac[VERIFY_SHA256_LEN];

	/* A keyed hash with a fixed key: a digest of the three parts. */
	if (verify_hmac_sha256("idemhook-action", 15, parts, 5, mac) != IH_OK)
		return IH_EINVAL;
	verify_hex_encode(mac, sizeof(mac), out);
	return IH_OK;
}

extern char **environ;

#define ACTION_DEFAULT_PATH	"/usr/local/bin:/usr/bin:/bin"
#define ACTION_EVENT_VARS	7	/* the IDEMHOOK_* variables set */

/*
 * Names an action never gets, even when the operator lists them: the
 * receiver's secrets and settings, request headers (HTTP_PROXY is the
 * httpoxy hole), and the CGI variables that describe the request.
 */
static const char *const action_denied_prefix[] = {
	"IDEMHOOK_", "HTTP_", "REDIRECT_", "SERVER_", "REMOTE_", "REQUEST_",
	"SCRIPT_", "CONTEXT_", "SSL_", "FCGI_", "GATEWAY_", "CONTENT_",
	"PATH_INFO", "PATH_TRANSLATED",
};
static const char *const action_denied_name[] = {
	"AUTH_TYPE", "QUERY_STRING", "DOCUMENT_ROOT", "DOCUMENT_URI",
	"HTTPS", "UNIQUE_ID",
};

static int
name_syntax_ok(const char *name, size_t len)
{
	size_t i;

	if (len == 0 || len > ACTION_NAME_MAX ||
	    (name[0] >= '0' && name[0] <= '9'))
		return 0;
	for (i = 0; i < len; i++)
		if (!(name[i] == '_' || (name[i] >= 'A' && name[i] <= 'Z') ||
		    (name[i] >= 'a' && name[i] <= 'z') ||
		    (name[i] >= '0' && name[i] <= '9')))
			return 0;
	return 1;
}

static int
name_denied(const char *name, size_t len)
{
	size_t i, n;

	for (i = 0; i < sizeof(action_denied_prefix) /
	    sizeof(action_denied_prefix[0]); i++) {
		n = strlen(action_denied_prefix[i]);
		if (len >= n && memcmp(name, action_denied_prefix[i], n) == 0)
			return 1;
	}
	for (i = 0; i < sizeof(action_denied_name) /
	    sizeof(action_denied_name[0]); i++) {
		n = strlen(action_denied_name[i]);
		if (len == n && memcmp(name, action_denied_name[i], n) == 0)
			return 1;
	}
	return 0;
}

/* Moves *p past the next name of a list; 0 at the end. */
static int
next_name(const char **p, const char **name, size_t *len)
{
	const char *s = *p;

	while (*s == ' ' || *s == '\t' || *s == ',')
		s++;
	if (*s == '\0')
		return 0;
	*name = s;
	while (*s != '\0' && *s != ' ' && *s != '\t' && *s != ',')
		s++;
	*len = (size_t)(s - *name);
	*p = s;
	return 1;
}

int
action_passenv_check(const char *passenv, char *err, size_t errlen)
{
	const char *p = passenv, *name;
	size_t len, n = 0;

	while (p != NULL && next_name(&p, &name, &len)) {
		if (++n > ACTION_PASSENV_MAX) {
			snprintf(err, errlen, "IDEMHOOK_ACTION_PASSENV names "
			    "more than %d variables", ACTION_PASSENV_MAX);
			return IH_ECONFIG;
		}
		if (!name_syntax_ok(name, len)) {
			snprintf(err, errlen, "IDEMHOOK_ACTION_PASSENV: "
			    "variable %zu is not a name (letters, digits, _; "
			    "at most %d)", n, ACTION_NAME_MAX);
			return IH_ECONFIG;
		}
		if (name_denied(name, len)) {
			snprintf(err, errlen, "IDEMHOOK_ACTION_PASSENV: %.*s "
			    "is a setting, a request header or a CGI variable, "
			    "never passed to actions", (int)len, name);
			return IH_ECONFIG;
		}
	}
	return IH_OK;
}

/* Is the variable name[0..len) one the action gets from the receiver? */
static int
env_wanted(const char *name, size_t len, const char *passenv)
{
	const char *p = passenv, *n;
	size_t nlen;

	if (!name_syntax_ok(name, len) || name_denied(name, len))
		return 0;
	if ((len == 4 && (memcmp(name, "PATH", 4) == 0 ||
	    memcmp(name, "HOME", 4) == 0 || memcmp(name, "LANG", 4) == 0)) ||
	    (len == 2 && memcmp(name, "TZ", 2) == 0) ||
	    (len > 3 && memcmp(name, "LC_", 3) == 0))
		return 1;
	while (p != NULL && next_name(&p, &n, &nlen))
		if (nlen == len && memcmp(n, name, len) == 0)
			return 1;
	return 0;
}

static void
env_free(char **env)
{
	size_t i;

	if (env == NULL)
		return;
	for (i = 0; env[i] != NULL; i++)
		free(env[i]);
	free(env);
}

/* Adds "name=value" to env at *n. */
static int
env_add(char **env, size_t *n, const char *name, const char *value)
{
	size_t len = strlen(name) + strlen(value) + 2;

	env[*n] = malloc(len);
	if (env[*n] == NULL)
		return IH_ENOMEM;
	snprintf(env[*n], len, "%s=%s", name, value);
	(*n)++;
	return IH_OK;
}

/*
 * Builds the action's whole environment in *out (NULL-terminated, each
 * string owned): what env_wanted() keeps of the receiver's, a PATH when
 * it has none, and the event's variables.
 */
static int
env_build(const char *command, const struct event *ev,
    const char *alert_reason, const char *passenv, char ***out)
{
	char key[ACTION_KEY_LEN], attempt[32], scope[160], **env = NULL, **e;
	const char *eq;
	size_t cap = ACTION_EVENT_VARS + 2, n = 0;
	int has_path = 0, rc = IH_ENOMEM;

	*out = NULL;
	for (e = environ; e != NULL && *e != NULL; e++)
		cap++;
	env = calloc(cap, sizeof(*env));
	if (env == NULL)
		goto out;
	for (e = environ; e != NULL && *e != NULL; e++) {
		eq = strchr(*e, '=');
		if (eq == NULL || !env_wanted(*e, (size_t)(eq - *e), passenv))
			continue;
		if ((size_t)(eq - *e) == 4 && memcmp(*e, "PATH", 4) == 0)
			has_path = 1;
		env[n] = strdup(*e);
		if (env[n] == NULL)
			goto out;
		n++;
	}
	if (!has_path && env_add(env, &n, "PATH", ACTION_DEFAULT_PATH) !=
	    IH_OK)
		goto out;
	snprintf(attempt, sizeof(attempt), "%ld", ev->attempt);
	/*
	 * One id under two accounts is two events, with two keys; the
	 * default account keeps the key it had before accounts.
	 */
	snprintf(scope, sizeof(scope), "%s%s%s", ev->provider,
	    ev->account != NULL && strcmp(ev->account, ACCOUNT_DEFAULT) != 0 ?
	    "@" : "", ev->account != NULL && strcmp(ev->account,
	    ACCOUNT_DEFAULT) != 0 ? ev->account : "");
	if (action_key(scope, ev->event_id, command, key) != IH_OK) {
		rc = IH_EINVAL;
		goto out;
	}
	if (env_add(env, &n, "IDEMHOOK_PROVIDER", ev->provider) != IH_OK ||
	    env_add(env, &n, "IDEMHOOK_ACCOUNT",
	    account_or_default(ev->account)) != IH_OK ||
	    env_add(env, &n, "IDEMHOOK_EVENT_ID", ev->event_id) != IH_OK ||
	    env_add(env, &n, "IDEMHOOK_EVENT_TYPE", ev->event_type) != IH_OK ||
	    env_add(env, &n, "IDEMHOOK_ATTEMPT", attempt) != IH_OK ||
	    env_add(env, &n, "IDEMHOOK_IDEMPOTENCY_KEY", key) != IH_OK)
		goto out;
	if (alert_reason != NULL && env_add(env, &n,
	    "IDEMHOOK_ALERT_REASON", alert_reason) != IH_OK)
		goto out;
	*out = env;
	env = NULL;
	rc = IH_OK;
out:
	env_free(env);
	return rc;
}

static void	child(const char *, char *const *, int);

/*
 * In the supervisor: the receiver died, so everything the command
 * started goes with it; the supervisor leads the group and dies too.
 */
static void
orphaned(int sig)
{
	(void)sig;
	kill(0, SIGKILL);
	_exit(126);
}

/*
 * The child leads a process group and supervises the command, which it
 * runs as its own child.  A death signal reaches only a direct child, so
 * the supervisor catches it and kills the whole group: a command whose
 * shell started a script, which started more, leaves nothing behind to
 * race the retry.  It exits as the command did.
 */
static void
supervise(const char *command, char *const *env, int in, pid_t parent)
{
	struct sigaction sa;
	sigset_t none;
	pid_t pid, w;
	long fd, max;
	int status;

	/* The command starts with no signal blocked, whatever thread forked. */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	setpgid(0, 0);
#ifdef __linux__
	/* So that ps(1) tells it from the receiver it was forked from. */
	prctl(PR_SET_NAME, "idemhook-action");
#endif
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = orphaned;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
#ifdef __linux__
	prctl(PR_SET_PDEATHSIG, SIGTERM);
#endif
	if (getppid() != parent)
		orphaned(SIGTERM);
	/*
	 * Neither the FastCGI socket nor the store may leak into the
	 * command, nor another action's pipe (a receiver's worker thread and
	 * its request loop may both run one): the supervisor keeps only its
	 * stdin, stdout, stderr and the payload.
	 */
	max = sysconf(_SC_OPEN_MAX);
	if (max < 0 || max > 65536)
		max = 65536;
	for (fd = 3; fd < max; fd++)
		if (fd != in)
			close((int)fd);
	pid = fork();
	if (pid < 0)
		_exit(126);
	if (pid == 0) {
		signal(SIGTERM, SIG_DFL);
		child(command, env, in);
	}
	/* Only the command reads the payload: a command that ignores its
	 * stdin must see writes fail, not fill a pipe nobody drains. */
	close(in);
	close(0);
	for (;;) {
		w = waitpid(pid, &status, 0);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR)
			_exit(126);
	}
	if (WIFEXITED(status))
		_exit(WEXITSTATUS(status));
	signal(WTERMSIG(status), SIG_DFL);
	raise(WTERMSIG(status));
	_exit(126);
}

/*
 * In the command's process: stdin, stdout, then exec with the prepared
 * environment.  Only async-signal-safe calls: the receiver may have other
 * threads, whose locks the fork copied.
 */
static void
child(const char *command, char *const *env, int in)
{
	char *argv[4];

	signal(SIGPIPE, SIG_DFL);
	if (dup2(in, 0) < 0 || dup2(2, 1) < 0)
		_exit(126);
	if (in > 2)
		close(in);
	argv[0] = (char *)"sh";
	argv[1] = (char *)"-c";
	argv[2] = (char *)command;
	argv[3] = NULL;
	execve("/bin/sh", argv, env);
	_exit(127);
}

/*
 * Feeds the payload without ever blocking past the deadline: a command
 * that does not read its stdin must not hang the receiver.
 */
static void
feed(int fd, const unsigned char *p, size_t len, int64_t deadline)
{
	struct pollfd pfd;
	ssize_t n;
	int64_t left;

	while (len > 0) {
		left = deadline - clock_mono_ms();
		if (left <= 0)
			return;
		pfd.fd = fd;
		pfd.events = POLLOUT;
		if (poll(&pfd, 1, (int)(left > 1000 ? 1000 : left)) < 0 &&
		    errno != EINTR)
			return;
		if (!(pfd.revents & (POLLOUT | POLLERR | POLLHUP)))
			continue;
		n = write(fd, p, len);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n <= 0)
			return;
		p += n;
		len -= (size_t)n;
	}
}

int
action_run(const char *command, const struct event *ev,
    const char *alert_reason, const char *passenv, long timeout_s,
    char *err, size_t errlen)
{
	struct timespec nap = { 0, 5000000 };
	int64_t deadline;
	pid_t pid, parent = getpid(), w;
	char **env = NULL;
	int pfd[2] = { -1, -1 }, status = 0, rc = IH_EIO, timed_out = 0;

	if (env_build(command, ev, alert_reason, passenv, &env) != IH_OK) {
		snprintf(err, errlen, "cannot build the action's environment");
		goto out;
	}
	if (pipe(pfd) != 0) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		goto out;
	}
	deadline = clock_mono_ms() + (int64_t)timeout_s * 1000;
	pid = fork();
	if (pid < 0) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		goto out;
	}
	if (pid == 0) {
		close(pfd[1]);
		supervise(command, env, pfd[0], parent);
	}
	/* Also set here, so that a kill cannot race the child's setpgid. */
	setpgid(pid, pid);
	close(pfd[0]);
	pfd[0] = -1;
	fcntl(pfd[1], F_SETFL, O_NONBLOCK);
	/* A purged payload (NULL) is fed as an empty one. */
	if (ev->payload != NULL)
		feed(pfd[1], ev->payload, ev->payload_len, deadline);
	close(pfd[1]);
	pfd[1] = -1;
	for (;;) {
		w = waitpid(pid, &status, WNOHANG);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR) {
			snprintf(err, errlen, "waitpid: %s", strerror(errno));
			goto out;
		}
		if (clock_mono_ms() >= deadline) {
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			timed_out = 1;
			break;
		}
		nanosleep(&nap, NULL);
	}
	if (timed_out)
		snprintf(err, errlen, "killed after the %ld s timeout",
		    timeout_s);
	else if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		rc = IH_OK;
	else if (WIFEXITED(status))
		snprintf(err, errlen, "exit status %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(err, errlen, "killed by signal %d", WTERMSIG(status));
	else
		snprintf(err, errlen, "ended abnormally");
	/* Whatever the command left running in its group goes too. */
	kill(-pid, SIGKILL);
out:
	if (pfd[0] >= 0)
		close(pfd[0]);
	if (pfd[1] >= 0)
		close(pfd[1]);
	env_free(env);
	return rc;
}
