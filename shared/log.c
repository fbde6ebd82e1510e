/* log.c -- bounded, single-write log records. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <fcgiapp.h>

#include "clock.h"
#include "log.h"

static void
stderr_write(void *arg, const char *line, size_t len)
{
	ssize_t n;

	(void)arg;
	/* A failing log write has nowhere to be reported; keep serving. */
	n = write(2, line, len);
	(void)n;
}

const struct log_sink log_stderr = { stderr_write, NULL };

void
log_emit(const struct log_sink *sink, const char *fmt, ...)
{
	char line[LOG_LINE_MAX];
	va_list ap;
	int n;
	size_t len;
	const size_t pre = sizeof("idemhook: ") - 1;

	if (sink == NULL)
		sink = &log_stderr;
	memcpy(line, "idemhook: ", pre);
	va_start(ap, fmt);
	n = vsnprintf(line + pre, sizeof(line) - pre - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	len = pre + (size_t)n;
	if (len > sizeof(line) - 2) {
		len = sizeof(line) - 2;
		memcpy(line + len - 3, "...", 3);
	}
	line[len++] = '\n';
	sink->write(sink->arg, line, len);
}

void
log_clean(char out[LOG_CLEAN_SIZE], const char *v, size_t len)
{
	size_t i, n;

	if (v == NULL || len == 0 || (len == (size_t)-1 && *v == '\0')) {
		memcpy(out, "-", 2);
		return;
	}
	if (len == (size_t)-1)
		len = strlen(v);
	n = len > LOG_VALUE_MAX ? LOG_VALUE_MAX : len;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)v[i];

		if (c == ' ')
			out[i] = '_';
		else if (c < 0x21 || c > 0x7e)
			out[i] = '?';
		else
			out[i] = (char)c;
	}
	if (n < len) {
		memcpy(out + n, "...", 3);
		n += 3;
	}
	out[n] = '\0';
}

/* One write(2) per line on an O_APPEND file: lines never interleave. */
static void
file_write(void *arg, const char *line, size_t len)
{
	const struct log_dest *d = arg;
	char buf[LOG_LINE_MAX + 64];
	struct tm tm;
	time_t now = clock_wall_s();
	size_t n;
	ssize_t w;

	if (gmtime_r(&now, &tm) == NULL)
		return;
	n = strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ ", &tm);
	n += (size_t)snprintf(buf + n, sizeof(buf) - n, "[%ld] ",
	    (long)getpid());
	if (len > sizeof(buf) - n)
		len = sizeof(buf) - n;
	memcpy(buf + n, line, len);
	w = write(d->fd, buf, n + len);
	(void)w;
}

static void
syslog_write(void *arg, const char *line, size_t len)
{
	const size_t pre = sizeof("idemhook: ") - 1;

	(void)arg;
	/* syslog adds its own tag and line end. */
	if (len > pre && memcmp(line, "idemhook: ", pre) == 0) {
		line += pre;
		len -= pre;
	}
	if (len > 0 && line[len - 1] == '\n')
		len--;
	syslog(LOG_INFO, "%.*s", (int)len, line);
}

void
log_dest_init(struct log_dest *d)
{
	memset(d, 0, sizeof(*d));
	d->fd = -1;
}

void
log_dest_close(struct log_dest *d)
{
	if (d->fd >= 0)
		close(d->fd);
	if (d->syslog)
		closelog();
	free(d->spec);
	log_dest_init(d);
}

int
log_dest_set(struct log_dest *d, const char *spec, char *err, size_t errlen)
{
	if (spec != NULL && *spec == '\0')
		spec = NULL;
	if (spec == NULL ? d->spec == NULL :
	    d->spec != NULL && strcmp(spec, d->spec) == 0)
		return IH_OK;
	log_dest_close(d);
	if (spec == NULL)
		return IH_OK;
	d->spec = strdup(spec);
	if (d->spec == NULL)
		return IH_ENOMEM;
	if (strcmp(spec, "syslog") == 0) {
		openlog("idemhook", LOG_PID | LOG_NDELAY, LOG_USER);
		d->syslog = 1;
		d->sink.write = syslog_write;
		d->sink.arg = d;
		return IH_OK;
	}
	if (spec[0] != '/') {
		snprintf(err, errlen, "IDEMHOOK_LOG=%s: give \"syslog\" or an "
		    "absolute file path", spec);
		return IH_EINVAL;
	}
	d->fd = open(spec, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC |
	    O_NOFOLLOW | O_NOCTTY, 0600);
	if (d->fd < 0) {
		snprintf(err, errlen, "cannot open IDEMHOOK_LOG %s: %s", spec,
		    strerror(errno));
		return IH_EIO;
	}
	d->sink.write = file_write;
	d->sink.arg = d;
	return IH_OK;
}

const struct log_sink *
log_dest_sink(const struct log_dest *d, const struct log_sink *fallback)
{
	if (d->fd >= 0 || d->syslog)
		return &d->sink;
	return fallback;
}

void
log_write_lines(const struct log_sink *sink, const char *buf, size_t len)
{
	const char *p = buf, *end = buf + len, *nl;

	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		nl = nl != NULL ? nl + 1 : end;
		sink->write(sink->arg, p, (size_t)(nl - p));
		p = nl;
	}
}

void
log_fcgi_write(void *arg, const char *line, size_t len)
{
	FCGX_Request *fx = arg;

	FCGX_PutStr(line, (int)len, fx->err);
	FCGX_FFlush(fx->err);
}

void
log_fcgi_write_held(void *arg, const char *line, size_t len)
{
	FCGX_Request *fx = arg;

	/*
	 * Each record the buffer fills is one stderr record, which the web
	 * servers log as lines of their own: a line that does not fit in
	 * what is left starts the next record, so that none is cut in two.
	 */
	if ((size_t)(fx->err->stop - fx->err->wrNext) < len)
		FCGX_FFlush(fx->err);
	FCGX_PutStr(line, (int)len, fx->err);
}

