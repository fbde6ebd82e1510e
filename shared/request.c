/* request.c -- CGI variables and a bounded body read. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ih.h"
#include "request.h"

void
request_begin(struct request *r, const struct request_io *io)
{
	const char *m;

	r->io = *io;
	m = io->param(io->arg, "REQUEST_METHOD");
	r->method = m != NULL ? m : "";
	r->content_type = io->param(io->arg, "CONTENT_TYPE");
	r->body_len = 0;
}

const char *
request_header(const struct request *r, const char *name)
{
	char var[REQUEST_HEADER_NAME_MAX + 6];
	size_t i, len = strlen(name);

	if (len > REQUEST_HEADER_NAME_MAX)
		return NULL;
	memcpy(var, "HTTP_", 5);
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)name[i];

		var[5 + i] = c == '-' ? '_' : (char)toupper(c);
	}
	var[5 + len] = '\0';
	return r->io.param(r->io.arg, var);
}

int
request_read_body(struct request *r, size_t max)
{
	const char *cl;
	char *end;
	unsigned long long want;
	unsigned char *nb;
	size_t got, n;

	r->body_len = 0;
	cl = r->io.param(r->io.arg, "CONTENT_LENGTH");
	if (cl == NULL || *cl < '0' || *cl > '9')
		return IH_EINVAL;
	errno = 0;
	want = strtoull(cl, &end, 10);
	if (errno != 0 || *end != '\0')
		return IH_EINVAL;
	if (want > max)
		return IH_ETOOBIG;
	if (r->body == NULL || r->body_cap < want + 1) {
		nb = realloc(r->body, (size_t)want + 1);
		if (nb == NULL)
			return IH_ENOMEM;
		r->body = nb;
		r->body_cap = (size_t)want + 1;
	}
	for (got = 0; got < want; got += n) {
		n = r->io.read(r->io.arg, r->body + got, (size_t)want - got);
		if (n == 0)
			break;
	}
	r->body[got] = '\0';
	r->body_len = got;
	return got == want ? IH_OK : IH_EINVAL;
}

void
request_free(struct request *r)
{
	free(r->body);
	r->body = NULL;
	r->body_cap = 0;
	r->body_len = 0;
}
