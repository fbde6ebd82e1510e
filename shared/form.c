/* form.c -- one field of a URL-encoded form body. */
#include <stdlib.h>
#include <string.h>

#include "form.h"
#include "ih.h"

int
form_hexval(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int
form_decode(const char *s, size_t len, char *out, size_t cap,
    size_t *outlen)
{
	size_t i, n = 0;
	int hi, lo;
	char c;

	*outlen = 0;
	for (i = 0; i < len; i++, n++) {
		c = s[i];
		if (c == '+')
			c = ' ';
		else if (c == '%') {
			if (len - i < 3)
				return IH_EINVAL;
			hi = form_hexval((unsigned char)s[i + 1]);
			lo = form_hexval((unsigned char)s[i + 2]);
			if (hi < 0 || lo < 0)
				return IH_EINVAL;
			c = (char)(hi << 4 | lo);
			i += 2;
		}
		if (out == NULL)
			continue;
		if (n >= cap)
			return IH_ETOOBIG;
		out[n] = c;
	}
	*outlen = n;
	return IH_OK;
}

int
form_field(const char *body, size_t len, const char *name, size_t max,
    char **val, size_t *vallen)
{
	const char *p = body, *end = body + len, *pair, *amp, *eq;
	const char *vp = NULL;
	char key[FORM_NAME_MAX];
	size_t namelen, klen, vlen = 0, n;
	int rc = IH_EINVAL, found = 0;

	*val = NULL;
	*vallen = 0;
	namelen = strlen(name);
	if (namelen == 0 || namelen > FORM_NAME_MAX)
		goto out;
	while (p < end) {
		pair = p;
		amp = memchr(p, '&', (size_t)(end - p));
		if (amp == NULL)
			amp = end;
		p = amp < end ? amp + 1 : end;
		eq = memchr(pair, '=', (size_t)(amp - pair));
		if (eq == NULL)
			eq = amp;
		/* Every name and value must decode, wanted or not. */
		if (form_decode(pair, (size_t)(eq - pair), NULL, 0, &klen) !=
		    IH_OK)
			goto out;
		if (eq < amp && form_decode(eq + 1, (size_t)(amp - eq - 1),
		    NULL, 0, &n) != IH_OK)
			goto out;
		if (klen != namelen)
			continue;
		if (form_decode(pair, (size_t)(eq - pair), key, sizeof(key),
		    &klen) != IH_OK)
			goto out;
		if (memcmp(key, name, namelen) != 0)
			continue;
		if (found)
			goto out;
		found = 1;
		vp = eq < amp ? eq + 1 : amp;
		vlen = (size_t)(amp - vp);
	}
	if (!found) {
		rc = IH_ENOTFOUND;
		goto out;
	}
	if (form_decode(vp, vlen, NULL, 0, &n) != IH_OK)
		goto out;
	if (n > max) {
		rc = IH_ETOOBIG;
		goto out;
	}
	*val = malloc(n + 1);
	if (*val == NULL) {
		rc = IH_ENOMEM;
		goto out;
	}
	rc = form_decode(vp, vlen, *val, n, vallen);
	if (rc != IH_OK)
		goto out;
	(*val)[n] = '\0';
out:
	if (rc != IH_OK) {
		free(*val);
		*val = NULL;
		*vallen = 0;
	}
	return rc;
}
