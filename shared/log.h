/*
 * log.h -- one-line log records for the web server's error log.
 *
 * A record is formatted into a bounded buffer and handed whole to a sink,
 * so that concurrent processes never interleave partial lines.  Under
 * FastCGI the sink is the request's stderr stream; elsewhere it is fd 2.
 * Values that come from the network pass through log_clean() first, so a
 * hostile event id can neither forge a second line nor flood the log.
 * Nothing here ever receives a secret or a signature: callers must not
 * pass them.
 */
#ifndef IH_LOG_H
#define IH_LOG_H

#include <time.h>
#include <stddef.h>

#include "ih.h"

#define LOG_LINE_MAX	1024	/* longest record, including the newline */
#define LOG_VALUE_MAX	128	/* longest untrusted value kept in a record */

struct log_sink {
	/* Writes len bytes of one complete line; must not fail loudly. */
	void	(*write)(void *arg, const char *line, size_t len);
	void	 *arg;
};

/* A sink writing to file descriptor 2 with one write(2) per line. */
extern const struct log_sink log_stderr;

/*
 * Where IDEMHOOK_LOG sends the records: "syslog" (facility user, tag
 * idemhook, level info), or an absolute file path, opened for appending
 * (created mode 0600, never through a symbolic link) with each line
 * prefixed by the UTC time and the process id.  Unset, the records go to
 * the web server's error log as before.  The destination is reopened only
 * when the setting changes; a file that cannot be opened is reported once
 * and the records go to the fallback sink.
 */
struct log_dest {
	char		*spec;		/* the setting in force, or NULL */
	int		 fd;		/* the file, or -1 */
	int		 syslog;	/* 1 when spec is "syslog" */
	struct log_sink	 sink;		/* writes to fd or syslog */
};

void	log_dest_init(struct log_dest *d);

/*
 * Makes spec (NULL or empty: none) the destination.  Returns IH_OK, or
 * IH_EIO / IH_EINVAL with the cause in err when it cannot be used (then
 * log_dest_sink() gives the fallback until the setting changes), or
 * IH_ENOMEM.
 */
int	log_dest_set(struct log_dest *d, const char *spec, char *err,
	    size_t errlen);

/* The sink for d's destination, or fallback when there is none. */
const struct log_sink *log_dest_sink(const struct log_dest *d,
	    const struct log_sink *fallback);

void	log_dest_close(struct log_dest *d);

/*
 * Formats one record, prefixed "idemhook: " and ending in a newline, and
 * writes it to sink (log_stderr when sink is NULL).  Longer records are
 * cut at LOG_LINE_MAX and marked with "...".
 */
void	log_emit(const struct log_sink *sink, const char *fmt, ...)
	    IH_PRINTF(2, 3);

/*
 * Writes the lines held in buf (len bytes, each ending in a newline but
 * perhaps the last) to sink, one write each: for lines held until a
 * commit (ingest.c, dispatch_drain.c).
 */
void	log_write_lines(const struct log_sink *sink, const char *buf,
	    size_t len);

/*
 * A sink's write for a FastCGI request's own stderr stream (arg is its
 * FCGX_Request): lighttpd and mod_fcgid copy it into the server's error
 * log, whereas the process's fd 2 may be /dev/null.
 */
void	log_fcgi_write(void *arg, const char *line, size_t len);
/*
 * The same, held in the stream's buffer instead of sent at once: for a
 * request's last lines, which FCGX_Finish_r() then sends with the end of
 * the stream in one write.  libfcgi's buffer (504 bytes) is one stderr
 * record, and lighttpd logs each record's lines apart: a line that does
 * not fit in what is left of it sends what is held first, so that no
 * line shorter than a record is cut in two.
 */
void	log_fcgi_write_held(void *arg, const char *line, size_t len);


/*
 * Copies at most LOG_VALUE_MAX bytes of the untrusted value v (of length
 * len, or NUL-terminated when len is (size_t)-1) into out, which has room
 * for LOG_VALUE_MAX + 4 bytes.  Bytes other than printable ASCII become
 * '?', spaces become '_', and a cut value ends in "...".  A NULL or empty
 * value becomes "-".
 */
#define LOG_CLEAN_SIZE	(LOG_VALUE_MAX + 4)
void	log_clean(char out[LOG_CLEAN_SIZE], const char *v, size_t len);

#endif
