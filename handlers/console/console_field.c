/*
 * console_field.c -- one field of a query string or a urlencoded form
 * body, as every page and form of the console reads it: the filters, the
 * account, the CSRF token and replay's fields.
 */
#include <stdlib.h>
#include <string.h>

#include "console_int.h"
#include "form.h"
#include "ih.h"

/*
 * Reads field name of the urlencoded src into out (NUL-terminated).
 * Returns IH_OK, IH_ENOTFOUND (out empty), IH_EINVAL or IH_ETOOBIG.
 */
int
console_field(const char *src, size_t len, const char *name, char *out,
    size_t cap)
{
	char *v = NULL;
	size_t vlen = 0;
	int rc;

	out[0] = '\0';
	rc = form_field(src, len, name, cap - 1, &v, &vlen);
	if (rc == IH_OK) {
		if (memchr(v, '\0', vlen) != NULL)
			rc = IH_EINVAL;
		else
			memcpy(out, v, vlen + 1);
	}
	free(v);
	return rc;
}
