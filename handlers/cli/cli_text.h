/*
 * cli_text.h -- how the idemhook command writes values that came from
 * the network (ids, types, headers, payloads, errors): to a terminal
 * with every control sequence masked, or as JSON strings.
 *
 * A terminal interprets C0 controls (ESC, BEL, CR, ...), DEL, and C1
 * controls (U+0080 to U+009F, such as CSI U+009B); some also act on raw
 * bytes 0x80 to 0x9F.  Bidirectional overrides (U+202A to U+202E, U+2066
 * to U+2069) reorder what is shown.  None of these, nor any byte that is
 * not well-formed UTF-8, reaches the output: each of their bytes is
 * written as "\xNN" instead.  Every human-readable line the command
 * prints passes through cli_put_text(), directly or via cli_printf().
 */
#ifndef IH_CLI_TEXT_H
#define IH_CLI_TEXT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ih.h"

/* cli_put_text() flags. */
#define CLI_TEXT_LINES	0x1	/* keep newline and tab (else escaped) */

#define CLI_TEXT_LINE_MAX	4096	/* longest cli_printf() record */

/*
 * Writes the len bytes at p to f (nothing when f is NULL), masked as the
 * header says.  Returns the number of columns written, counting each
 * character as one, so that callers can align tables.
 */
size_t	cli_put_text(FILE *f, const void *p, size_t len, int flags);

/* cli_put_text() of the NUL-terminated s ("" when NULL), one line. */
void	cli_put_clean(FILE *f, const char *s);

/* The columns cli_put_clean() would take for s. */
size_t	cli_clean_width(const char *s);

/*
 * Formats into a bounded buffer (cut at CLI_TEXT_LINE_MAX with "...")
 * and writes it with cli_put_text(..., CLI_TEXT_LINES), so untrusted %s
 * arguments are masked whatever they hold.
 */
void	cli_printf(FILE *f, const char *fmt, ...) IH_PRINTF(2, 3);

/* cli_printf() to stderr, prefixed "idemhook: ", with a newline added. */
void	cli_errorf(const char *fmt, ...) IH_PRINTF(1, 2);

/* Returns 1 when the len bytes at p are well-formed UTF-8, else 0. */
int	cli_utf8_ok(const void *p, size_t len);

/*
 * Writes the len bytes at p as one JSON string, quotes included: quote,
 * backslash, C0, DEL, C1 controls and bidirectional overrides escaped
 * as \uXXXX, each byte that is not well-formed UTF-8 as \ufffd.  The
 * output is valid JSON and safe on a terminal.
 */
void	cli_json_text(FILE *f, const void *p, size_t len);

/* cli_json_text() of the NUL-terminated s, or null when s is NULL. */
void	cli_put_json(FILE *f, const char *s);

/* Writes ", \"name\": ms" (Unix ms), or null when ms is 0 (unset). */
void	cli_json_ms(FILE *f, const char *name, int64_t ms);

/* Writes ", \"name\": " and cli_put_json() of text (null when NULL). */
void	cli_json_field(FILE *f, const char *name, const char *text);

/*
 * Writes the len bytes at p as one JSON string of standard, padded
 * base64 (OpenSSL's encoder), quotes included.
 */
void	cli_json_base64(FILE *f, const void *p, size_t len);

#endif
