/*
 * forward_http.c -- the forwarded POST, on libcurl opened with dlopen()
 * at the first delivery: the receivers do not link it, so that a plain
 * CGI delivery without forwarding never pays the start-up of libcurl and
 * the twenty-odd libraries it needs (the reason libpq is loaded so too,
 * pg_dl.h).  The destination is checked without it (forward_http_url_ok).
 */
#include <ctype.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Plain calls through the pointers below: no type-checking macros. */
#define CURL_DISABLE_TYPECHECK
#include <curl/curl.h>

#include "forward_http.h"
#include "ih.h"

/* Debian's libcurl4 package (OpenSSL flavour or not): the soname. */
#define FORWARD_CURL_LIB	"libcurl.so.4"

#define CURL_FUNCS \
	X(curl_global_init) X(curl_easy_init) X(curl_easy_setopt) \
	X(curl_easy_perform) X(curl_easy_getinfo) X(curl_easy_cleanup) \
	X(curl_easy_strerror) X(curl_slist_append) X(curl_slist_free_all)

static struct {
#define X(f)	__typeof__(f) *f;
	CURL_FUNCS
#undef X
} dl;

static pthread_once_t	load_once = PTHREAD_ONCE_INIT;
static char		load_why[256];	/* empty once loaded */

static void
load(void)
{
	const char *e;
	void *h, *f;

	h = dlopen(FORWARD_CURL_LIB, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		e = dlerror();
		snprintf(load_why, sizeof(load_why), "cannot load %s "
		    "(forwarding needs the libcurl4 package): %s",
		    FORWARD_CURL_LIB, e != NULL ? e : "unknown error");
		return;
	}
	/* A function pointer through void *, as POSIX dlsym() allows. */
#define X(fn) \
	f = dlsym(h, #fn); \
	if (f == NULL) { \
		snprintf(load_why, sizeof(load_why), "cannot load %s: it " \
		    "has no %s", FORWARD_CURL_LIB, #fn); \
		return; \
	} \
	*(void **)(void *)&dl.fn = f;
	CURL_FUNCS
#undef X
	if (dl.curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		snprintf(load_why, sizeof(load_why), "curl_global_init "
		    "failed");
}

static int
is_loopback(const char *host, size_t len)
{
	return (len == 9 && strncmp(host, "127.0.0.1", 9) == 0) ||
	    (len == 5 && strncmp(host, "[::1]", 5) == 0) ||
	    (len == 9 && strncasecmp(host, "localhost", 9) == 0);
}

int
forward_http_url_ok(const char *url, char *err, size_t errlen)
{
	const char *auth, *host, *end, *p;
	size_t hlen;
	int https;

	for (p = url; *p != '\0'; p++)
		if ((unsigned char)*p <= 0x20 || *p == 0x7f) {
			snprintf(err, errlen, "holds a blank or a control "
			    "character");
			return IH_ECONFIG;
		}
	https = strncasecmp(url, "https://", 8) == 0;
	if (!https && strncasecmp(url, "http://", 7) != 0) {
		snprintf(err, errlen, "must be an https:// URL (plain http "
		    "only to a loopback host: 127.0.0.1, [::1], localhost)");
		return IH_ECONFIG;
	}
	if (strlen(url) >= FORWARD_URL_MAX) {
		snprintf(err, errlen, "is longer than %d bytes",
		    FORWARD_URL_MAX - 1);
		return IH_ECONFIG;
	}
	auth = url + (https ? 8 : 7);
	end = auth + strcspn(auth, "/?#");
	if (strchr(url, '#') != NULL) {
		snprintf(err, errlen, "has a fragment (#...), which is "
		    "never sent");
		return IH_ECONFIG;
	}
	if (memchr(auth, '@', (size_t)(end - auth)) != NULL) {
		snprintf(err, errlen, "has user information: the "
		    "application is authenticated by the signature");
		return IH_ECONFIG;
	}
	/* The host: up to a port, past an IPv6 literal's brackets. */
	host = auth;
	p = *host == '[' ? memchr(host, ']', (size_t)(end - host)) : host;
	if (p == NULL) {
		snprintf(err, errlen, "has an unclosed [IPv6] host");
		return IH_ECONFIG;
	}
	p = memchr(p, ':', (size_t)(end - p));
	hlen = (size_t)((p != NULL ? p : end) - host);
	if (hlen == 0) {
		snprintf(err, errlen, "has no host");
		return IH_ECONFIG;
	}
	if (!https && !is_loopback(host, hlen)) {
		snprintf(err, errlen, "must be https (plain http only to a "
		    "loopback host: 127.0.0.1, [::1], localhost)");
		return IH_ECONFIG;
	}
	return IH_OK;
}

struct sink {
	struct forward_http_resp	*r;
	size_t				 total;
	int				 over;
};

static size_t
on_body(char *p, size_t size, size_t n, void *arg)
{
	struct sink *s = arg;
	size_t len = size * n, room = sizeof(s->r->answer) - s->r->answer_len;

	if (len > room)
		memcpy(s->r->answer + s->r->answer_len, p, room);
	else
		memcpy(s->r->answer + s->r->answer_len, p, len);
	s->r->answer_len += len > room ? room : len;
	s->total += len;
	if (s->total > (size_t)FORWARD_ANSWER_MAX) {
		/* Enough: the status is known, the rest is not read. */
		s->over = 1;
		return 0;
	}
	return len;
}

static size_t
on_header(char *p, size_t size, size_t n, void *arg)
{
	struct forward_http_resp *r = arg;
	size_t len = size * n, i = 12;
	char buf[32], *end;
	long long v;

	if (len >= 5 && strncmp(p, "HTTP/", 5) == 0)
		r->retry_after_s = -1;
	if (len <= 12 || strncasecmp(p, "Retry-After:", 12) != 0)
		return len;
	while (i < len && isspace((unsigned char)p[i]))
		i++;
	while (len > i && isspace((unsigned char)p[len - 1]))
		len--;
	/* Seconds only; an HTTP date is taken as absent. */
	if (len - i == 0 || len - i >= sizeof(buf))
		return size * n;
	memcpy(buf, p + i, len - i);
	buf[len - i] = '\0';
	v = strtoll(buf, &end, 10);
	if (*end == '\0' && v >= 0 && v < 86400L * 365)
		r->retry_after_s = (long)v;
	return size * n;
}

/* The request's header lines as a curl list; NULL when out of memory. */
static int
header_list(const char *text, struct curl_slist **out)
{
	struct curl_slist *l = NULL, *nl;
	const char *p = text, *e;
	char line[4096];
	size_t n;

	*out = NULL;
	while (*p != '\0') {
		e = strchr(p, '\n');
		n = e != NULL ? (size_t)(e - p) : strlen(p);
		if (n >= sizeof(line))
			goto fail;
		memcpy(line, p, n);
		line[n] = '\0';
		nl = dl.curl_slist_append(l, line);
		if (nl == NULL)
			goto fail;
		l = nl;
		p += n + (e != NULL);
	}
	/* No "Expect: 100-continue" round trip before the body. */
	nl = dl.curl_slist_append(l, "Expect:");
	if (nl == NULL)
		goto fail;
	*out = nl;
	return IH_OK;
fail:
	dl.curl_slist_free_all(l);
	return IH_ENOMEM;
}

int
forward_http_post(const struct forward_http_req *req,
    struct forward_http_resp *r, char *err, size_t errlen)
{
	char cerr[CURL_ERROR_SIZE] = "";
	struct curl_slist *hl = NULL;
	struct sink s;
	CURL *cu = NULL;
	CURLcode cc;
	long connect_s = req->timeout_s < 10 ? req->timeout_s : 10;
	int rc = IH_ENOMEM;

	memset(r, 0, sizeof(*r));
	r->retry_after_s = -1;
	memset(&s, 0, sizeof(s));
	s.r = r;
	pthread_once(&load_once, load);
	if (load_why[0] != '\0') {
		snprintf(err, errlen, "%s", load_why);
		rc = IH_EIO;
		goto out;
	}
	cu = dl.curl_easy_init();
	if (cu == NULL || header_list(req->headers, &hl) != IH_OK)
		goto out;
	dl.curl_easy_setopt(cu, CURLOPT_URL, req->url);
#if LIBCURL_VERSION_NUM >= 0x075500
	dl.curl_easy_setopt(cu, CURLOPT_PROTOCOLS_STR, "https,http");
#else
	dl.curl_easy_setopt(cu, CURLOPT_PROTOCOLS,
	    (long)(CURLPROTO_HTTPS | CURLPROTO_HTTP));
#endif
	dl.curl_easy_setopt(cu, CURLOPT_FOLLOWLOCATION, 0L);
	dl.curl_easy_setopt(cu, CURLOPT_SSL_VERIFYPEER, 1L);
	dl.curl_easy_setopt(cu, CURLOPT_SSL_VERIFYHOST, 2L);
	dl.curl_easy_setopt(cu, CURLOPT_NOSIGNAL, 1L);
	dl.curl_easy_setopt(cu, CURLOPT_TIMEOUT, req->timeout_s);
	dl.curl_easy_setopt(cu, CURLOPT_CONNECTTIMEOUT, connect_s);
	dl.curl_easy_setopt(cu, CURLOPT_USERAGENT, "idemhook (forward)");
	dl.curl_easy_setopt(cu, CURLOPT_HTTPHEADER, hl);
	dl.curl_easy_setopt(cu, CURLOPT_ERRORBUFFER, cerr);
	dl.curl_easy_setopt(cu, CURLOPT_WRITEFUNCTION, on_body);
	dl.curl_easy_setopt(cu, CURLOPT_WRITEDATA, &s);
	dl.curl_easy_setopt(cu, CURLOPT_HEADERFUNCTION, on_header);
	dl.curl_easy_setopt(cu, CURLOPT_HEADERDATA, r);
	dl.curl_easy_setopt(cu, CURLOPT_POST, 1L);
	dl.curl_easy_setopt(cu, CURLOPT_POSTFIELDS, req->body != NULL ?
	    (const char *)req->body : "");
	dl.curl_easy_setopt(cu, CURLOPT_POSTFIELDSIZE_LARGE,
	    (curl_off_t)req->body_len);
	cc = dl.curl_easy_perform(cu);
	if (cc == CURLE_OK || (cc == CURLE_WRITE_ERROR && s.over)) {
		dl.curl_easy_getinfo(cu, CURLINFO_RESPONSE_CODE, &r->status);
		rc = IH_OK;
	} else {
		r->status = 0;
		snprintf(err, errlen, "%s", cerr[0] != '\0' ? cerr :
		    dl.curl_easy_strerror(cc));
		rc = IH_EIO;
	}
out:
	if (rc == IH_ENOMEM)
		snprintf(err, errlen, "out of memory for the HTTP client");
	/* Neither exists when libcurl could not be loaded. */
	if (hl != NULL)
		dl.curl_slist_free_all(hl);
	if (cu != NULL)
		dl.curl_easy_cleanup(cu);
	return rc;
}
