/*
 * utf8.h -- the one UTF-8 decoder: every part that checks or walks text
 * (the JSON checks, the HTML escaping, the command's terminal output, the
 * PostgreSQL console's glob) reads a character through it, so that all
 * agree on what well-formed UTF-8 is: RFC 3629's, without overlong
 * forms, surrogates or code points past U+10FFFF.  No state, no
 * allocation.
 */
#ifndef IH_UTF8_H
#define IH_UTF8_H

#include <stddef.h>
#include <stdint.h>

/*
 * The length (1 to 4) of the well-formed sequence at p, which has n
 * bytes, with its code point in *cp; 0 when the bytes at p are not one
 * (a stray continuation byte, an overlong form, a surrogate, past
 * U+10FFFF, or cut short by n).  Reads p[0] to p[len - 1] at most, and
 * stops at the first byte that is not a continuation byte, so a
 * NUL-terminated string may pass n = 4.
 */
size_t	utf8_decode(const unsigned char *p, size_t n, uint32_t *cp);

#endif
