/* io_cgi.c -- the process's one CGI request as a struct io. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "ih.h"
#include "io.h"
#include "log.h"

static const char *
param_cgi(void *arg, const char *name)
{
	(void)arg;
	return getenv(name);
}

static size_t
read_cgi(void *arg, void *buf, size_t len)
{
	(void)arg;
	return fread(buf, 1, len, stdin);
}

static size_t
write_cgi(void *arg, const void *p, size_t len)
{
	(void)arg;
	return fwrite(p, 1, len, stdout);
}

/*
 * Under plain CGI the web server ends the response when stdout closes,
 * so stdout is swapped for /dev/null before processing starts.
 */
static void
finish_cgi(struct io *io)
{
	int fd;

	(void)io;
	fflush(stdout);
	fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		dup2(fd, 1);
		close(fd);
	}
}

int
io_cgi_detach(int errfd)
{
	pid_t pid;
	int fd;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return IH_EIO;
	if (pid > 0)
		/* The server sees the answer end once the child lets go. */
		_exit(0);
	(void)setsid();
	fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (fd >= 0) {
		dup2(fd, 0);
		dup2(fd, 1);
		dup2(errfd >= 0 ? errfd : fd, 2);
		close(fd);
	}
	return IH_OK;
}

void
io_cgi(struct io *io)
{
	io->req.param = param_cgi;
	io->req.read = read_cgi;
	io->req.arg = NULL;
	io->rsp.write = write_cgi;
	io->rsp.arg = NULL;
	io->log = log_stderr;
	io->params = NULL;
	io->fx = NULL;
	io->finish = finish_cgi;
}
