/*
 * io.h -- the two ways a web server hands a request to a receiver: the
 * FastCGI adapter (one FCGX_Request, its parameters, streams and error
 * log) and the plain CGI one (the environment, stdin, stdout, stderr).
 *
 * Each fills a struct io: the request's reading callbacks, the answer's
 * writer, the log sink for this request, and its parameters as a
 * "NAME=value" array for the settings (NULL under CGI, whose
 * environment holds no request parameter a setting may come from).
 * io->finish() ends the answer so that the sender has it before any
 * processing that follows: FCGX_Finish_r(), or, under CGI, stdout
 * swapped for /dev/null.
 */
#ifndef IH_IO_H
#define IH_IO_H

#include <fcgiapp.h>

#include "log.h"
#include "request.h"
#include "respond.h"

struct io {
	struct request_io	 req;
	struct respond_io	 rsp;
	struct log_sink		 log;
	char			**params;	/* NULL under CGI */
	FCGX_Request		*fx;		/* NULL under CGI */
	/* Ends the answer; the request is not written to afterwards. */
	void			(*finish)(struct io *io);
};

/* The adapter for fx, which FCGX_Accept_r() has just filled. */
void	io_fcgi(struct io *io, FCGX_Request *fx);

/*
 * After fx's body was read to its announced length: reads the end of the
 * request's input (the empty record the web servers send with the body's
 * last bytes), so that io_fcgi_end() may close the connection at once.
 * Call it only then: before the body's end it would read the body.
 */
void	io_fcgi_read_end(FCGX_Request *fx);

/*
 * Ends fx's request (FCGX_Finish_r(); again is harmless).  libfcgi
 * closes the connection with shutdown(2), then poll(2) and read(2) until
 * the web server closes its end: three system calls per request and a
 * wait for the server, so that no input left unread makes the close
 * reset the connection.  When the end of the input was read, nothing is
 * left unread, and the connection is closed at once (FCGX_Detach()).
 */
void	io_fcgi_end(FCGX_Request *fx);
/* The adapter for the process's one CGI request. */
void	io_cgi(struct io *io);

/*
 * Plain CGI, after the answer and before processing: a web server ends
 * the request only once every copy of the program's stdout and stderr is
 * closed, and kills the program at its timeout (Apache's Timeout, when
 * mod_cgi or mod_cgid waits for stderr).  So the program forks: the
 * parent exits at once, ending the request, and the child, in a session
 * of its own (out of reach of the server's kill), with stdin and stdout
 * on /dev/null and stderr on errfd (IDEMHOOK_LOG's file; /dev/null when
 * errfd is negative), returns IH_OK and goes on.  Returns IH_EIO when no
 * child could be made (the caller goes on in place).  No store
 * connection may be open across it: the child opens its own.
 */
int	io_cgi_detach(int errfd);

/* Returns the CGI variable name of the request, or NULL. */
static inline const char *
io_param(const struct io *io, const char *name)
{
	return io->req.param(io->req.arg, name);
}

#endif
