/* headers.c -- the kept headers' one writer and one reader. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "headers.h"
#include "ih.h"

int
headers_keep(const struct request *r, const char *const *names, char *buf,
    size_t cap)
{
	const char *const *h;
	const char *v;
	size_t len = 0;
	int n;

	if (cap == 0)
		return IH_ETOOBIG;
	buf[0] = '\0';
	for (h = names; h != NULL && *h != NULL; h++) {
		v = request_header(r, *h);
		if (v == NULL)
			continue;
		n = snprintf(buf + len, cap - len, "%s: %s\n", *h, v);
		if (n < 0 || (size_t)n >= cap - len)
			return IH_ETOOBIG;
		len += (size_t)n;
	}
	return IH_OK;
}

int
headers_line(const char *name, const char *value, char *buf, size_t cap)
{
	int n;

	n = snprintf(buf, cap, "\n%s: %s\n", name, value);
	if (n < 0 || (size_t)n >= cap)
		return IH_ETOOBIG;
	return IH_OK;
}

int
headers_next(const char **pos, struct headers_field *f)
{
	const char *line = *pos, *nl, *colon;
	size_t len;

	for (;;) {
		if (*line == '\0') {
			*pos = line;
			return 0;
		}
		nl = strchr(line, '\n');
		len = nl != NULL ? (size_t)(nl - line) : strlen(line);
		*pos = nl != NULL ? nl + 1 : line + len;
		if (len > 0)
			break;
		line = *pos;
	}
	colon = memchr(line, ':', len);
	if (colon != NULL && (size_t)(colon - line) + 1 < len &&
	    colon[1] == ' ') {
		f->name = line;
		f->name_len = (size_t)(colon - line);
		f->value = colon + 2;
		f->value_len = len - f->name_len - 2;
		f->valued = 1;
	} else {
		f->name = line;
		f->name_len = len;
		f->value = "";
		f->value_len = 0;
		f->valued = 0;
	}
	return 1;
}

int
headers_cgi_name(const char *name, size_t name_len, char *out, size_t cap)
{
	size_t i;

	if (name_len == 0 || name_len > REQUEST_HEADER_NAME_MAX ||
	    cap < name_len + 6)
		return IH_EINVAL;
	memcpy(out, "HTTP_", 5);
	for (i = 0; i < name_len; i++)
		out[5 + i] = name[i] == '-' ? '_' :
		    (char)toupper((unsigned char)name[i]);
	out[5 + name_len] = '\0';
	return IH_OK;
}
