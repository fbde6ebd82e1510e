/*
 * fuzz.h -- helpers for the libFuzzer harnesses in this directory.
 *
 * An input is split into fields at its first newlines: a harness taking
 * a header, a secret and a body reads "header\nsecret\nbody", the last
 * field keeping every remaining byte, newlines and NULs included.  Each
 * field is a separate malloc'd copy followed by a NUL, so AddressSanitizer
 * sees any read past a field's end.  Missing fields are empty.
 */
#ifndef IH_FUZZ_H
#define IH_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_MAX_FIELDS	8

struct fuzz_fields {
	size_t	 n;
	char	*p[FUZZ_MAX_FIELDS];
	size_t	 len[FUZZ_MAX_FIELDS];
};

int	LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
fuzz_free(struct fuzz_fields *f)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		free(f->p[i]);
	memset(f, 0, sizeof(*f));
}

/* Splits data into n fields (n <= FUZZ_MAX_FIELDS); returns 0 or -1. */
static int
fuzz_split(const uint8_t *data, size_t size, size_t n, struct fuzz_fields *f)
{
	const uint8_t *p = data, *end = data + size, *nl;
	size_t i, len;

	memset(f, 0, sizeof(*f));
	for (i = 0; i < n; i++) {
		nl = i + 1 < n ? memchr(p, '\n', (size_t)(end - p)) : NULL;
		len = nl != NULL ? (size_t)(nl - p) : (size_t)(end - p);
		f->p[i] = malloc(len + 1);
		if (f->p[i] == NULL) {
			f->n = i;
			fuzz_free(f);
			return -1;
		}
		memcpy(f->p[i], p, len);
		f->p[i][len] = '\0';
		f->len[i] = len;
		f->n = i + 1;
		p = nl != NULL ? nl + 1 : end;
	}
	return 0;
}

#endif
