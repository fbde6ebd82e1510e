/*
 * fuzz_redact.c -- ih_redact_uri(), the one way a store location is shown.
 * Input: "<parameter name>\n<uri>".  The uri is redacted as it is (no
 * crash, always terminated); then "postgresql://h/db?NAME=SECRET" is, and
 * when NAME, percent-decoded as libpq does, ends in "password" (any
 * case), "=SECRET" must not appear in the output.
 */
#include <ctype.h>
#include <stdio.h>
#include <strings.h>

#include "fuzz.h"
#include "ih.h"
#include "redact.h"

#define SECRET	"Zq7secretXv9"

static int
hex(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Is name, decoded, a password parameter made of plain name bytes? */
static int
names_password(const char *name)
{
	char dec[256];
	size_t n = 0;
	const char *s;

	for (s = name; *s != '\0'; s++) {
		if (n + 1 >= sizeof(dec))
			return 0;
		if (isalnum((unsigned char)*s) || *s == '_')
			dec[n++] = *s;
		else if (*s == '%' && hex(s[1]) >= 0 && hex(s[2]) >= 0) {
			dec[n++] = (char)(hex(s[1]) * 16 + hex(s[2]));
			s += 2;
		} else
			return 0;
	}
	return n >= 8 && strncasecmp(dec + n - 8, "password", 8) == 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_fields f;
	char out[REDACT_URI_MAX], uri[512];
	int n;

	if (fuzz_split(data, size, 2, &f) != 0)
		return 0;
	(void)ih_redact_uri(f.p[1], out, sizeof(out));
	if (strlen(out) >= sizeof(out))
		abort();
	n = snprintf(uri, sizeof(uri), "postgresql://h/db?%s=%s", f.p[0],
	    SECRET);
	if (n > 0 && (size_t)n < sizeof(uri) && names_password(f.p[0])) {
		(void)ih_redact_uri(uri, out, sizeof(out));
		if (strstr(out, "=" SECRET) != NULL)
			abort();
	}
	fuzz_free(&f);
	return 0;
}
