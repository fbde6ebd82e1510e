/* forward_http.c -- the forwarded POST, on libcurl. */
#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>

#include "forward.h"
#include "forward_http.h"
#include "ih.h"

static pthread_once_t	global_once = PTHREAD_ONCE_INIT;
static int		global_ok;

static void
global_init(void)
{
	global_ok = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK;
}

static int
is_loopback(const char *host)
{
	return strcmp(host, "127.0.0.1") == 0 || strcmp(host, "[::1]") == 0 ||
	    strcmp(host, "::1") == 0 || strcasecmp(host, "localhost") == 0;
}

int
forward_http_url_ok(const char *url, char *err, size_t errlen)
{
	char *scheme = NULL, *host = NULL, *user = NULL, *frag = NULL;
	CURLU *u;
	int rc = IH_ECONFIG;

	pthread_once(&global_once, global_init);
	u = curl_url();
	if (u == NULL)
		return IH_ENOMEM;
	if (strlen(url) >= FORWARD_URL_MAX ||
	    curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK) {
		snprintf(err, errlen, "is not a URL (such as "
		    "https://app.example/webhooks)");
		goto out;
	}
	/* A password in a setting's URL would reach every error line. */
	if (curl_url_get(u, CURLUPART_USER, &user, 0) == CURLUE_OK) {
		snprintf(err, errlen, "has user information: the "
		    "application is authenticated by the signature");
		goto out;
	}
	if (curl_url_get(u, CURLUPART_FRAGMENT, &frag, 0) == CURLUE_OK) {
		snprintf(err, errlen, "has a fragment (#...), which is "
		    "never sent");
		goto out;
	}
	if (strcasecmp(scheme, "https") == 0 ||
	    (strcasecmp(scheme, "http") == 0 && is_loopback(host)))
		rc = IH_OK;
	else
		snprintf(err, errlen, "must be https (plain http only to "
		    "a loopback host: 127.0.0.1, ::1, localhost)");
out:
	curl_free(scheme);
	curl_free(host);
	curl_free(user);
	curl_free(frag);
	curl_url_cleanup(u);
	return rc;
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
		nl = curl_slist_append(l, line);
		if (nl == NULL)
			goto fail;
		l = nl;
		p += n + (e != NULL);
	}
	/* No "Expect: 100-continue" round trip before the body. */
	nl = curl_slist_append(l, "Expect:");
	if (nl == NULL)
		goto fail;
	*out = nl;
	return IH_OK;
fail:
	curl_slist_free_all(l);
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
	pthread_once(&global_once, global_init);
	if (!global_ok)
		goto out;
	cu = curl_easy_init();
	if (cu == NULL || header_list(req->headers, &hl) != IH_OK)
		goto out;
	curl_easy_setopt(cu, CURLOPT_URL, req->url);
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
	curl_easy_setopt(cu, CURLOPT_TIMEOUT, req->timeout_s);
	curl_easy_setopt(cu, CURLOPT_CONNECTTIMEOUT, connect_s);
	curl_easy_setopt(cu, CURLOPT_USERAGENT, "idemhook (forward)");
	curl_easy_setopt(cu, CURLOPT_HTTPHEADER, hl);
	curl_easy_setopt(cu, CURLOPT_ERRORBUFFER, cerr);
	curl_easy_setopt(cu, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(cu, CURLOPT_WRITEDATA, &s);
	curl_easy_setopt(cu, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(cu, CURLOPT_HEADERDATA, r);
	curl_easy_setopt(cu, CURLOPT_POST, 1L);
	curl_easy_setopt(cu, CURLOPT_POSTFIELDS, req->body != NULL ?
	    (const char *)req->body : "");
	curl_easy_setopt(cu, CURLOPT_POSTFIELDSIZE_LARGE,
	    (curl_off_t)req->body_len);
	cc = curl_easy_perform(cu);
	if (cc == CURLE_OK || (cc == CURLE_WRITE_ERROR && s.over)) {
		curl_easy_getinfo(cu, CURLINFO_RESPONSE_CODE, &r->status);
		rc = IH_OK;
	} else {
		r->status = 0;
		snprintf(err, errlen, "%s", cerr[0] != '\0' ? cerr :
		    curl_easy_strerror(cc));
		rc = IH_EIO;
	}
out:
	if (rc == IH_ENOMEM)
		snprintf(err, errlen, "out of memory for the HTTP client");
	curl_slist_free_all(hl);
	if (cu != NULL)
		curl_easy_cleanup(cu);
	return rc;
}
