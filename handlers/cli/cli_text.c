/*
 * cli_text.c -- masked terminal output and JSON strings for the idemhook
 * command (see cli_text.h for the contract).
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <openssl/evp.h>

#include "cli_text.h"
#include "utf8.h"

/* Bytes of input per base64 block: a multiple of 3, so no padding. */
#define B64_CHUNK	3072

/* Whether a terminal could act on code point c (see cli_text.h). */
static int
is_control(uint32_t c)
{
	return c < 0x20 || (c >= 0x7f && c <= 0x9f) ||
	    (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069);
}

size_t
cli_put_text(FILE *f, const void *p, size_t len, int flags)
{
	const unsigned char *s = p;
	size_t i = 0, n, k, cols = 0;
	uint32_t c;

	while (i < len) {
		n = utf8_decode(s + i, len - i, &c);
		if (n > 0 && (!is_control(c) || ((flags & CLI_TEXT_LINES) &&
		    (c == '\n' || c == '\t')))) {
			if (f != NULL)
				fwrite(s + i, 1, n, f);
			cols++;
			i += n;
			continue;
		}
		/* A control character, or one byte that is not UTF-8. */
		if (n == 0)
			n = 1;
		for (k = 0; k < n; k++) {
			if (f != NULL)
				fprintf(f, "\\x%02x", s[i + k]);
			cols += 4;
		}
		i += n;
	}
	return cols;
}

void
cli_put_clean(FILE *f, const char *s)
{
	if (s != NULL)
		cli_put_text(f, s, strlen(s), 0);
}

size_t
cli_clean_width(const char *s)
{
	return s != NULL ? cli_put_text(NULL, s, strlen(s), 0) : 0;
}

/*
 * Formats fmt into one record of at most CLI_TEXT_LINE_MAX bytes, marking
 * a cut with "...", and writes it through cli_put_text().
 */
static void
put_formatted(FILE *f, const char *fmt, va_list ap)
{
	char buf[CLI_TEXT_LINE_MAX];
	size_t len;
	int n;

	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	if (n < 0)
		len = 0;
	else if ((size_t)n >= sizeof(buf)) {
		memcpy(buf + sizeof(buf) - 4, "...", 4);
		len = sizeof(buf) - 1;
	} else
		len = (size_t)n;
	cli_put_text(f, buf, len, CLI_TEXT_LINES);
}

void
cli_printf(FILE *f, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	put_formatted(f, fmt, ap);
	va_end(ap);
}

void
cli_errorf(const char *fmt, ...)
{
	va_list ap;

	fputs("idemhook: ", stderr);
	va_start(ap, fmt);
	put_formatted(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int
cli_utf8_ok(const void *p, size_t len)
{
	const unsigned char *s = p;
	size_t i = 0, n;
	uint32_t c;

	while (i < len) {
		n = utf8_decode(s + i, len - i, &c);
		if (n == 0)
			return 0;
		i += n;
	}
	return 1;
}

void
cli_json_text(FILE *f, const void *p, size_t len)
{
	const unsigned char *s = p;
	size_t i = 0, n;
	uint32_t c;

	putc('"', f);
	while (i < len) {
		n = utf8_decode(s + i, len - i, &c);
		if (n == 0) {
			fputs("\\ufffd", f);
			i++;
			continue;
		}
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", (int)c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c == '\t')
			fputs("\\t", f);
		else if (c == '\r')
			fputs("\\r", f);
		else if (is_control(c))
			fprintf(f, "\\u%04x", (unsigned)c);
		else
			fwrite(s + i, 1, n, f);
		i += n;
	}
	putc('"', f);
}

void
cli_put_json(FILE *f, const char *s)
{
	if (s == NULL)
		fputs("null", f);
	else
		cli_json_text(f, s, strlen(s));
}

void
cli_json_base64(FILE *f, const void *p, size_t len)
{
	const unsigned char *s = p;
	unsigned char out[B64_CHUNK / 3 * 4 + 1];
	size_t i, n;
	int w;

	putc('"', f);
	for (i = 0; i < len; i += n) {
		n = len - i < B64_CHUNK ? len - i : B64_CHUNK;
		w = EVP_EncodeBlock(out, s + i, (int)n);
		if (w > 0)
			fwrite(out, 1, (size_t)w, f);
	}
	putc('"', f);
}

void
cli_json_ms(FILE *f, const char *name, int64_t ms)
{
	if (ms > 0)
		fprintf(f, ", \"%s\": %lld", name, (long long)ms);
	else
		fprintf(f, ", \"%s\": null", name);
}

void
cli_json_field(FILE *f, const char *name, const char *text)
{
	fprintf(f, ", \"%s\": ", name);
	cli_put_json(f, text);
}
