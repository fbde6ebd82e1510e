/* api_http.c -- libcurl calls to the providers' APIs, with backoff. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <curl/curl.h>
#include <openssl/crypto.h>

#include "api_http.h"
#include "ih.h"
#include "redact.h"

/* Longest header value kept for one name. */
#define HDR_VALUE_MAX	API_HTTP_URL_MAX

struct sink {
	struct api_resp	*r;
	size_t		 cap;
	size_t		 max;
	int		 over;
	int		 nomem;
};

int
api_http_init(struct api_http *h)
{
	static int global_done;

	memset(h, 0, sizeof(*h));
	if (!global_done) {
		if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
			return IH_ENOMEM;
		global_done = 1;
	}
	h->curl = curl_easy_init();
	if (h->curl == NULL)
		return IH_ENOMEM;
	h->timeout_s = 30;
	h->connect_timeout_s = 10;
	h->max_tries = 4;
	h->wait_max_s = 60;
	h->body_max = API_HTTP_BODY_MAX;
	h->agent = "idemhook (catch-up)";
	return IH_OK;
}

void
api_http_free(struct api_http *h)
{
	if (h->curl != NULL)
		curl_easy_cleanup(h->curl);
	h->curl = NULL;
}

void
api_resp_free(struct api_resp *r)
{
	free(r->body);
	r->body = NULL;
	r->len = 0;
}

static int
is_loopback(const char *host)
{
	return strcmp(host, "127.0.0.1") == 0 || strcmp(host, "[::1]") == 0 ||
	    strcmp(host, "::1") == 0 || strcasecmp(host, "localhost") == 0;
}

int
api_http_url_ok(const char *url, char *err, size_t errlen)
{
	char shown[REDACT_URI_MAX];
	char *scheme = NULL, *host = NULL;
	CURLU *u;
	int rc = IH_EINVAL;

	u = curl_url();
	if (u == NULL)
		return IH_ENOMEM;
	if (strlen(url) >= API_HTTP_URL_MAX ||
	    curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK) {
		snprintf(err, errlen, "not a URL: %s", ih_redact(url, shown,
		    sizeof(shown)));
		goto out;
	}
	if (strcasecmp(scheme, "https") == 0 ||
	    (strcasecmp(scheme, "http") == 0 && is_loopback(host)))
		rc = IH_OK;
	else
		snprintf(err, errlen, "%s: the API is called over https only "
		    "(plain http only to a loopback address)",
		    ih_redact(url, shown, sizeof(shown)));
out:
	curl_free(scheme);
	curl_free(host);
	curl_url_cleanup(u);
	return rc;
}

int
api_http_escape(const char *s, char *out, size_t outlen)
{
	char *e;
	int rc = IH_OK;

	e = curl_easy_escape(NULL, s, 0);
	if (e == NULL)
		return IH_ENOMEM;
	if (strlen(e) >= outlen)
		rc = IH_ETOOBIG;
	else
		memcpy(out, e, strlen(e) + 1);
	curl_free(e);
	return rc;
}

static size_t
on_body(char *p, size_t size, size_t n, void *arg)
{
	struct sink *s = arg;
	size_t len = size * n, cap;
	char *nb;

	if (s->r->len + len > s->max) {
		s->over = 1;
		return 0;
	}
	if (s->r->len + len + 1 > s->cap) {
		cap = s->cap ? s->cap : 16384;
		while (cap < s->r->len + len + 1)
			cap *= 2;
		nb = realloc(s->r->body, cap);
		if (nb == NULL) {
			s->nomem = 1;
			return 0;
		}
		s->r->body = nb;
		s->cap = cap;
	}
	memcpy(s->r->body + s->r->len, p, len);
	s->r->len += len;
	s->r->body[s->r->len] = '\0';
	return len;
}

/* Does the n bytes at p hold the string s? */
static int
has_sub(const char *p, size_t n, const char *s)
{
	size_t sl = strlen(s), i;

	for (i = 0; i + sl <= n; i++)
		if (memcmp(p + i, s, sl) == 0)
			return 1;
	return 0;
}

/* The URL of rel="next" in a Link header value, or "". */
static void
link_next(const char *v, size_t len, char *out, size_t outlen)
{
	const char *p = v, *end = v + len, *lt, *gt, *comma;
	size_t n;

	out[0] = '\0';
	while (p < end) {
		lt = memchr(p, '<', (size_t)(end - p));
		if (lt == NULL)
			return;
		gt = memchr(lt, '>', (size_t)(end - lt));
		if (gt == NULL)
			return;
		comma = memchr(gt, ',', (size_t)(end - gt));
		if (comma == NULL)
			comma = end;
		n = (size_t)(comma - gt);
		/* rel="next" or rel=next among this link's parameters. */
		if ((has_sub(gt, n, "rel=\"next\"") ||
		    has_sub(gt, n, "rel=next")) &&
		    (size_t)(gt - lt - 1) < outlen) {
			memcpy(out, lt + 1, (size_t)(gt - lt - 1));
			out[gt - lt - 1] = '\0';
			return;
		}
		p = comma;
	}
}

static long long
num_of(const char *v, size_t len)
{
	char buf[32];
	char *end;
	long long x;

	while (len > 0 && isspace((unsigned char)*v)) {
		v++;
		len--;
	}
	while (len > 0 && isspace((unsigned char)v[len - 1]))
		len--;
	if (len == 0 || len >= sizeof(buf))
		return -1;
	memcpy(buf, v, len);
	buf[len] = '\0';
	x = strtoll(buf, &end, 10);
	return *end == '\0' && x >= 0 ? x : -1;
}

static int
hdr_is(const char *p, size_t len, const char *name, size_t *vpos)
{
	size_t n = strlen(name);

	if (len <= n || strncasecmp(p, name, n) != 0 || p[n] != ':')
		return 0;
	*vpos = n + 1;
	return 1;
}

static size_t
on_header(char *p, size_t size, size_t n, void *arg)
{
	struct api_resp *r = arg;
	size_t len = size * n, v;

	if (len >= 5 && strncmp(p, "HTTP/", 5) == 0) {
		/* A new answer (after 100 Continue): forget the last one's. */
		r->next[0] = '\0';
		r->retry_after_s = -1;
		r->rl_remaining = -1;
		r->rl_reset = -1;
	} else if (hdr_is(p, len, "Link", &v)) {
		link_next(p + v, len - v, r->next, sizeof(r->next));
	} else if (hdr_is(p, len, "Retry-After", &v)) {
		/* Seconds; an HTTP date is taken as absent. */
		r->retry_after_s = (long)num_of(p + v, len - v);
	} else if (hdr_is(p, len, "X-RateLimit-Remaining", &v)) {
		r->rl_remaining = (long)num_of(p + v, len - v);
	} else if (hdr_is(p, len, "X-RateLimit-Reset", &v)) {
		r->rl_reset = num_of(p + v, len - v);
	}
	return len;
}

/*
 * Transport failures worth another try: the network, not the TLS
 * verification or the URL, which fail the same way every time, nor a
 * stall (timed out): trying again would wait as long again, and the
 * run's length is bounded by IDEMHOOK_API_TIMEOUT (api_limits.h).
 */
static int
transient(CURLcode cc)
{
	return cc == CURLE_COULDNT_RESOLVE_HOST ||
	    cc == CURLE_COULDNT_CONNECT ||
	    cc == CURLE_SEND_ERROR || cc == CURLE_RECV_ERROR ||
	    cc == CURLE_GOT_NOTHING || cc == CURLE_PARTIAL_FILE;
}

/* How long to wait before retrying r's answer, or -1: no retry. */
static long
wait_for(const struct api_http *h, const struct api_resp *r, CURLcode cc,
    int tries)
{
	long backoff = 1L << (tries - 1 < 6 ? tries - 1 : 6);
	long long now = (long long)time(NULL);

	if (cc != CURLE_OK)
		return transient(cc) ? backoff : -1;
	if ((r->status == 403 || r->status == 429) && r->rl_remaining == 0 &&
	    r->rl_reset > 0)
		/* GitHub's primary rate limit: wait for its reset. */
		return r->rl_reset > now ? (long)(r->rl_reset - now + 1) : 1;
	if (r->status == 429 || r->status >= 500) {
		if (r->retry_after_s >= 0)
			return r->retry_after_s;
		return backoff;
	}
	(void)h;
	return -1;
}

/* Waits s seconds, a second at a time while h may be stopped. */
static void
nap(const struct api_http *h, long s)
{
	struct timespec ts;
	long i;

	for (i = 0; i < s && (h->stop == NULL || !*h->stop); i++) {
		ts.tv_sec = 1;
		ts.tv_nsec = 0;
		while (nanosleep(&ts, &ts) != 0)
			;
	}
}

/* libcurl's progress callback: nonzero ends the call (h->stop set). */
static int
on_progress(void *arg, curl_off_t dltotal, curl_off_t dlnow,
    curl_off_t ultotal, curl_off_t ulnow)
{
	const struct api_http *h = arg;

	(void)dltotal;
	(void)dlnow;
	(void)ultotal;
	(void)ulnow;
	return h->stop != NULL && *h->stop ? 1 : 0;
}

/* One request; fills r.  Returns a CURLcode. */
static CURLcode
call_once(struct api_http *h, const struct api_call *c, struct api_resp *r,
    struct curl_slist *hl, char *cerr)
{
	struct sink s;
	CURL *cu = h->curl;
	CURLcode cc;

	api_resp_free(r);
	memset(r, 0, sizeof(*r));
	r->retry_after_s = -1;
	r->rl_remaining = -1;
	r->rl_reset = -1;
	memset(&s, 0, sizeof(s));
	s.r = r;
	s.max = h->body_max;
	curl_easy_reset(cu);
	curl_easy_setopt(cu, CURLOPT_URL, c->url);
#if LIBCURL_VERSION_NUM >= 0x075500
	curl_easy_setopt(cu, CURLOPT_PROTOCOLS_STR, "https,http");
#else
	curl_easy_setopt(cu, CURLOPT_PROTOCOLS,
	    (long)(CURLPROTO_HTTPS | CURLPROTO_HTTP));
#endif
	curl_easy_setopt(cu, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(cu, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(cu, CURLOPT_SSL_VERIFYHOST, 2L);
	curl_easy_setopt(cu, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(cu, CURLOPT_TIMEOUT, h->timeout_s);
	curl_easy_setopt(cu, CURLOPT_CONNECTTIMEOUT, h->connect_timeout_s);
	curl_easy_setopt(cu, CURLOPT_MAXFILESIZE_LARGE,
	    (curl_off_t)h->body_max);
	curl_easy_setopt(cu, CURLOPT_USERAGENT, h->agent);
	curl_easy_setopt(cu, CURLOPT_HTTPHEADER, hl);
	curl_easy_setopt(cu, CURLOPT_ERRORBUFFER, cerr);
	curl_easy_setopt(cu, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(cu, CURLOPT_WRITEDATA, &s);
	curl_easy_setopt(cu, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(cu, CURLOPT_HEADERDATA, r);
	if (h->stop != NULL) {
		curl_easy_setopt(cu, CURLOPT_NOPROGRESS, 0L);
		curl_easy_setopt(cu, CURLOPT_XFERINFOFUNCTION, on_progress);
		curl_easy_setopt(cu, CURLOPT_XFERINFODATA, h);
	}
	if (strcmp(c->method, "GET") != 0) {
		curl_easy_setopt(cu, CURLOPT_CUSTOMREQUEST, c->method);
		curl_easy_setopt(cu, CURLOPT_POSTFIELDS, c->body != NULL ?
		    c->body : "");
		curl_easy_setopt(cu, CURLOPT_POSTFIELDSIZE_LARGE,
		    (curl_off_t)(c->body != NULL ? c->body_len : 0));
	}
	cerr[0] = '\0';
	h->calls++;
	cc = curl_easy_perform(cu);
	/* The options point at the caller's memory: drop them now. */
	curl_easy_setopt(cu, CURLOPT_HTTPHEADER, NULL);
	curl_easy_setopt(cu, CURLOPT_ERRORBUFFER, NULL);
	if (s.over)
		return CURLE_FILESIZE_EXCEEDED;
	if (s.nomem)
		return CURLE_OUT_OF_MEMORY;
	if (cc == CURLE_OK)
		curl_easy_getinfo(cu, CURLINFO_RESPONSE_CODE, &r->status);
	if (cc == CURLE_OK && r->body == NULL) {
		r->body = calloc(1, 1);
		if (r->body == NULL)
			return CURLE_OUT_OF_MEMORY;
	}
	return cc;
}

/* The request's header list, the credential's line included. */
static int
header_list(const struct api_call *c, struct curl_slist **out)
{
	struct curl_slist *l = NULL, *t;
	char line[1024];
	size_t i;
	int n, rc = IH_OK;

	*out = NULL;
	for (i = 0; c->headers != NULL && c->headers[i] != NULL; i++) {
		t = curl_slist_append(l, c->headers[i]);
		if (t == NULL)
			goto nomem;
		l = t;
	}
	/* libcurl adds "Expect: 100-continue" to large POSTs otherwise. */
	t = curl_slist_append(l, "Expect:");
	if (t == NULL)
		goto nomem;
	l = t;
	if (c->auth_name != NULL && c->auth_value != NULL) {
		n = snprintf(line, sizeof(line), "%s: %s", c->auth_name,
		    c->auth_value);
		if (n < 0 || (size_t)n >= sizeof(line))
			rc = IH_ETOOBIG;
		else {
			t = curl_slist_append(l, line);
			if (t == NULL)
				rc = IH_ENOMEM;
			else
				l = t;
		}
		OPENSSL_cleanse(line, sizeof(line));
	}
	if (rc != IH_OK) {
		curl_slist_free_all(l);
		return rc;
	}
	*out = l;
	return IH_OK;
nomem:
	curl_slist_free_all(l);
	return IH_ENOMEM;
}

int
api_http_call(struct api_http *h, const struct api_call *c,
    struct api_resp *r, char *err, size_t errlen)
{
	char cerr[CURL_ERROR_SIZE], shown[REDACT_URI_MAX];
	struct curl_slist *hl = NULL;
	CURLcode cc;
	long wait;
	int tries = 0, rc;

	memset(r, 0, sizeof(*r));
	rc = api_http_url_ok(c->url, err, errlen);
	if (rc != IH_OK)
		return rc;
	rc = header_list(c, &hl);
	if (rc != IH_OK) {
		snprintf(err, errlen, "cannot build the request's headers");
		return rc;
	}
	for (;;) {
		tries++;
		cc = call_once(h, c, r, hl, cerr);
		if (cc == CURLE_FILESIZE_EXCEEDED) {
			snprintf(err, errlen, "%s: answer over %zu bytes: "
			    "refused",
			    ih_redact(c->url, shown, sizeof(shown)),
			    h->body_max);
			rc = IH_ETOOBIG;
			break;
		}
		if (cc == CURLE_OUT_OF_MEMORY) {
			snprintf(err, errlen, "out of memory");
			rc = IH_ENOMEM;
			break;
		}
		wait = wait_for(h, r, cc, tries);
		if (cc == CURLE_OK && wait < 0) {
			rc = IH_OK;
			break;
		}
		if (cc == CURLE_ABORTED_BY_CALLBACK) {
			snprintf(err, errlen, "%s: stopped",
			    ih_redact(c->url, shown, sizeof(shown)));
			rc = IH_EIO;
			break;
		}
		if (cc == CURLE_OPERATION_TIMEDOUT)
			snprintf(err, errlen, "%s: no answer within %ld s "
			    "(IDEMHOOK_API_TIMEOUT; connecting: "
			    "IDEMHOOK_API_CONNECT_TIMEOUT, %ld s)",
			    ih_redact(c->url, shown, sizeof(shown)),
			    h->timeout_s, h->connect_timeout_s);
		else if (cc != CURLE_OK)
			snprintf(err, errlen, "%s: %s",
			    ih_redact(c->url, shown, sizeof(shown)),
			    cerr[0] != '\0' ? cerr : curl_easy_strerror(cc));
		else
			snprintf(err, errlen, "%s: HTTP %ld after %d tries",
			    ih_redact(c->url, shown, sizeof(shown)), r->status,
			    tries);
		if (tries >= h->max_tries || wait < 0) {
			rc = IH_EIO;
			break;
		}
		if (wait > h->wait_max_s) {
			snprintf(err, errlen, "%s: HTTP %ld, asked to wait %ld "
			    "s (more than %ld s)", ih_redact(c->url, shown,
			    sizeof(shown)), r->status, wait, h->wait_max_s);
			rc = IH_EIO;
			break;
		}
		if (h->stop != NULL && *h->stop) {
			rc = IH_EIO;
			break;
		}
		h->retries++;
		nap(h, wait);
	}
	curl_slist_free_all(hl);
	return rc;
}
