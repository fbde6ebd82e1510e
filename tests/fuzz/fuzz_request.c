/*
 * fuzz_request.c -- the request framing: CONTENT_LENGTH, header lookup,
 * the bounded body read (announced or read to the end) and the drain.
 * Input: "<CONTENT_LENGTH>\n<header name>\n<header value>\n<body>"; an
 * empty CONTENT_LENGTH field means the variable is absent.  The body is
 * handed over in pieces of varying size, as a socket would.
 */
#include "fuzz.h"
#include "ih.h"
#include "request.h"

struct src {
	struct fuzz_fields	*f;
	size_t			 off;	/* of the body already read */
	size_t			 step;
};

static const char *
param(void *arg, const char *name)
{
	struct src *s = arg;

	if (strcmp(name, "REQUEST_METHOD") == 0)
		return "POST";
	if (strcmp(name, "CONTENT_LENGTH") == 0)
		return s->f->len[0] > 0 ? s->f->p[0] : NULL;
	if (strcmp(name, "HTTP_X_FUZZ") == 0)
		return s->f->p[2];
	return NULL;
}

static size_t
readb(void *arg, void *buf, size_t len)
{
	struct src *s = arg;
	size_t left = s->f->len[3] - s->off;

	if (len > s->step)
		len = s->step;
	if (len > left)
		len = left;
	memcpy(buf, s->f->p[3] + s->off, len);
	s->off += len;
	s->step = s->step * 3 % 997 + 1;
	return len;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_fields f;
	struct request r;
	struct request_io io;
	struct src s;
	const char *h;
	int rc;

	if (fuzz_split(data, size, 4, &f) != 0)
		return 0;
	memset(&r, 0, sizeof(r));
	s.f = &f;
	s.off = 0;
	s.step = size % 97 + 1;
	io.param = param;
	io.read = readb;
	io.arg = &s;
	request_begin(&r, &io);
	h = request_header(&r, f.p[1]);
	if (h != NULL && strlen(h) > f.len[2])
		abort();
	rc = request_read_body(&r, 4096);
	/* What was read must be exactly the bytes sent, never more. */
	if (rc == IH_OK && (r.body_len > f.len[3] ||
	    memcmp(r.body, f.p[3], r.body_len) != 0 || r.body[r.body_len]))
		abort();
	/* After the drain nothing is left unread for the server to choke on. */
	request_drain(&r, 1 << 20);
	if (s.off != f.len[3])
		abort();
	request_free(&r);
	fuzz_free(&f);
	return 0;
}
