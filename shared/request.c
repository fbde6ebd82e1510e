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
	r->stream_done = 0;
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

/* Grows the body buffer to hold at least need bytes and a NUL. */
static int
reserve(struct request *r, size_t need)
{
	unsigned char *nb;

	if (r->body != NULL && r->body_cap >= need + 1)
		return IH_OK;
	nb = realloc(r->body, need + 1);
	if (nb == NULL)
		return IH_ENOMEM;
	r->body = nb;
	r->body_cap = need + 1;
	return IH_OK;
}

/* Reads an unannounced body to its end, in growing steps up to max. */
static int
read_to_end(struct request *r, size_t max)
{
	size_t want = 64 * 1024, n;
	int rc;

	for (;;) {
		if (want > max + 1)
			want = max + 1;
		rc = reserve(r, want);
		if (rc != IH_OK)
			return rc;
		n = r->io.read(r->io.arg, r->body + r->body_len,
		    want - r->body_len);
		r->body_len += n;
		if (r->body_len > max) {
			r->body_len = 0;
			return IH_ETOOBIG;
		}
		if (n == 0)
			break;
		if (r->body_len == want)
			want *= 2;
	}
	r->body[r->body_len] = '\0';
	r->stream_done = 1;
	return IH_OK;
}

void
request_drain(struct request *r, size_t cap)
{
	unsigned char buf[16384];
	size_t n, total = 0;

	if (r->stream_done)
		return;
	while (total < cap) {
		n = r->io.read(r->io.arg, buf, sizeof(buf));
		if (n == 0)
			break;
		total += n;
	}
	r->stream_done = 1;
}

int
request_read_body(struct request *r, size_t max)
{
	const char *cl;
	char *end;
	unsigned long long want;
	size_t got, n;

	r->body_len = 0;
	cl = r->io.param(r->io.arg, "CONTENT_LENGTH");
	if (cl == NULL || *cl == '\0')
		return read_to_end(r, max);
	if (*cl < '0' || *cl > '9')
		return IH_EINVAL;
	errno = 0;
	want = strtoull(cl, &end, 10);
	if (errno != 0 || *end != '\0')
		return IH_EINVAL;
	if (want > max)
		return IH_ETOOBIG;
	if (reserve(r, (size_t)want) != IH_OK)
		return IH_ENOMEM;
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
