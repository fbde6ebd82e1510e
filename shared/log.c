/* log.c -- bounded, single-write log records. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

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
