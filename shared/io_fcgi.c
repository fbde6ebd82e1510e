/* io_fcgi.c -- one FastCGI request as a struct io. */
#include <stddef.h>

#include <fcgiapp.h>

#include "config_vars.h"
#include "io.h"
#include "log.h"

static const char *
param_fcgi(void *arg, const char *name)
{
	FCGX_Request *fx = arg;

	/* FCGX_GetParam()'s search, quicker (config_vars.h). */
	return config_env_get(fx->envp, name);
}

static size_t
read_fcgi(void *arg, void *buf, size_t len)
{
	FCGX_Request *fx = arg;
	int n;

	if (len > 1 << 20)
		len = 1 << 20;
	n = FCGX_GetStr(buf, (int)len, fx->in);
	return n > 0 ? (size_t)n : 0;
}

static size_t
write_fcgi(void *arg, const void *p, size_t len)
{
	FCGX_Request *fx = arg;
	int n;

	n = FCGX_PutStr(p, (int)len, fx->out);
	return n > 0 ? (size_t)n : 0;
}

void
io_fcgi_read_end(FCGX_Request *fx)
{
	if (fx->in != NULL && !FCGX_HasSeenEOF(fx->in))
		(void)FCGX_GetChar(fx->in);
}

void
io_fcgi_end(FCGX_Request *fx)
{
	/*
	 * A detached request's connection is closed without the shutdown
	 * (libfcgi 2.4's FCGX_Free()).  An error closes the input too:
	 * then libfcgi's way.
	 */
	if (fx->in != NULL && FCGX_HasSeenEOF(fx->in) &&
	    FCGX_GetError(fx->in) == 0)
		(void)FCGX_Detach(fx);
	FCGX_Finish_r(fx);
	/* A connection the server keeps open serves the next one as new. */
	(void)FCGX_Attach(fx);
}

static void
finish_fcgi(struct io *io)
{
	io_fcgi_end(io->fx);
}

void
io_fcgi(struct io *io, FCGX_Request *fx)
{
	io->req.param = param_fcgi;
	io->req.read = read_fcgi;
	io->req.arg = fx;
	io->rsp.write = write_fcgi;
	io->rsp.arg = fx;
	io->log.write = log_fcgi_write;
	io->log.arg = fx;
	io->params = fx->envp;
	io->fx = fx;
	io->finish = finish_fcgi;
}
