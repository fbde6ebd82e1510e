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

#include "action.h"
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

static void	child(const char *, const struct action_event *, int);

static int64_t
mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

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
supervise(const char *command, const struct action_event *ev, int in,
    pid_t parent)
{
	struct sigaction sa;
	pid_t pid, w;
	int status;

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
	pid = fork();
	if (pid < 0)
		_exit(126);
	if (pid == 0) {
		signal(SIGTERM, SIG_DFL);
		child(command, ev, in);
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

/* In the command's process: stdin, stdout, the environment, then exec. */
static void
child(const char *command, const struct action_event *ev, int in)
{
	char key[ACTION_KEY_LEN], attempt[32];
	long fd, max;

	signal(SIGPIPE, SIG_DFL);
	if (dup2(in, 0) < 0 || dup2(2, 1) < 0)
		_exit(126);
	/* Neither the FastCGI socket nor the store may leak into it. */
	max = sysconf(_SC_OPEN_MAX);
	if (max < 0 || max > 65536)
		max = 65536;
	for (fd = 3; fd < max; fd++)
		close((int)fd);
	snprintf(attempt, sizeof(attempt), "%ld", ev->attempt);
	if (action_key(ev->provider, ev->event_id, command, key) != IH_OK ||
	    setenv("IDEMHOOK_PROVIDER", ev->provider, 1) != 0 ||
	    setenv("IDEMHOOK_EVENT_ID", ev->event_id, 1) != 0 ||
	    setenv("IDEMHOOK_EVENT_TYPE", ev->event_type, 1) != 0 ||
	    setenv("IDEMHOOK_ATTEMPT", attempt, 1) != 0 ||
	    setenv("IDEMHOOK_IDEMPOTENCY_KEY", key, 1) != 0)
		_exit(126);
	execl("/bin/sh", "sh", "-c", command, (char *)NULL);
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
		left = deadline - mono_ms();
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
action_run(const char *command, const struct action_event *ev,
    long timeout_s, char *err, size_t errlen)
{
	struct timespec nap = { 0, 5000000 };
	int64_t deadline;
	pid_t pid, parent = getpid(), w;
	int pfd[2] = { -1, -1 }, status = 0, rc = IH_EIO, timed_out = 0;

	if (pipe(pfd) != 0) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		goto out;
	}
	deadline = mono_ms() + (int64_t)timeout_s * 1000;
	pid = fork();
	if (pid < 0) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		goto out;
	}
	if (pid == 0) {
		close(pfd[1]);
		supervise(command, ev, pfd[0], parent);
	}
	/* Also set here, so that a kill cannot race the child's setpgid. */
	setpgid(pid, pid);
	close(pfd[0]);
	pfd[0] = -1;
	fcntl(pfd[1], F_SETFL, O_NONBLOCK);
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
		if (mono_ms() >= deadline) {
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
	return rc;
}
