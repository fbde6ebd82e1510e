/*
 * api_github.c -- GitHub's API for catch-up (a hook's deliveries, and
 * redelivery) and health (the hook's active flag and last response).
 *
 * IDEMHOOK_GITHUB_HOOKS names the hooks, as the API's own paths:
 * "repos/OWNER/REPO/HOOK_ID" and "orgs/ORG/HOOK_ID", separated by
 * blanks or commas, and "app/HOOK_ID" for the GitHub App's own webhook
 * (/app/hook/...; HOOK_ID is its X-GitHub-Hook-ID, which the store's
 * event ids hold), whose API takes the App's JWT (api_github_app.h)
 * instead of IDEMHOOK_GITHUB_API_KEY.
 *
 * Catch-up pages through GET /{scope}/hooks/{id}/deliveries (newest
 * first, cursor in the Link header) until the deliveries leave the
 * window, groups the attempts by GUID, and for every event with no 2xx
 * attempt whose "<hook id>:<guid>" the store lacks, asks GitHub to
 * redeliver its last attempt (POST .../deliveries/{id}/attempts): the
 * redelivery is signed like any delivery, and verified and recorded by
 * the receiver.  Fetching the delivery instead would give a payload
 * re-serialized as JSON, which no signature covers.  An event whose
 * redeliveries failed GITHUB_GIVE_UP times in the window is reported,
 * not asked again.
 *
 * The same listing releases the store's held events of the hook (a body
 * already recorded that came again under a new GUID, provider.h's
 * hold_replays): one whose GUID GitHub lists with its event and action
 * was sent by GitHub and is made due (api_github_release() does only
 * this, for idemhook work); one it does not list stays held.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "api_common.h"
#include "api_github_app.h"
#include "api_github_held.h"
#include "api_http.h"
#include "api_providers.h"
#include "api_session.h"
#include "cli_args.h"
#include "cli_text.h"
#include "clock.h"
#include "ih.h"
#include "json.h"
#include "store.h"

#define GITHUB_KEEP_S		(3L * 86400)
#define GITHUB_GIVE_UP		3
#define GITHUB_HOOKS_MAX	16
#define GITHUB_ITEMS_MAX	100000

static const char *const gh_headers[] = {
	"Accept: application/vnd.github+json",
	"X-GitHub-Api-Version: 2022-11-28",
	NULL
};

/* One configured hook. */
struct hook {
	char	scope[256];	/* "repos/OWNER/REPO", "orgs/ORG", "app" */
	char	id[24];
	char	path[320];	/* "/SCOPE/hooks/ID", or "/app/hook" */
};


struct list {
	struct catchup	*cu;
	struct json	*js;
	struct gh_item	*items;
	size_t		 n, cap;
	int64_t		 from_ms;
	long		 in_window;	/* of this page */
};

static int
name_ok(const char *s, size_t n)
{
	size_t i;

	if (n == 0)
		return 0;
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '-' &&
		    s[i] != '_' && s[i] != '.')
			return 0;
	return 1;
}

/* Parses one "repos/O/R/ID" or "orgs/O/ID".  Returns IH_OK or EINVAL. */
static int
hook_parse(const char *s, size_t n, struct hook *h)
{
	const char *part[4];
	size_t len[4], k = 0, i, start = 0;

	for (i = 0; i <= n && k < 4; i++)
		if (i == n || s[i] == '/') {
			part[k] = s + start;
			len[k++] = i - start;
			start = i + 1;
		}
	if (i <= n || k < 2)
		return IH_EINVAL;
	for (i = 1; i < k; i++)
		if (!name_ok(part[i], len[i]))
			return IH_EINVAL;
	for (i = 0; i < len[k - 1]; i++)
		if (!isdigit((unsigned char)part[k - 1][i]))
			return IH_EINVAL;
	if (len[k - 1] >= sizeof(h->id) || n >= sizeof(h->scope))
		return IH_EINVAL;
	if (!(k == 4 && len[0] == 5 && strncmp(part[0], "repos", 5) == 0) &&
	    !(k == 3 && len[0] == 4 && strncmp(part[0], "orgs", 4) == 0) &&
	    !(k == 2 && len[0] == 3 && strncmp(part[0], "app", 3) == 0))
		return IH_EINVAL;
	memcpy(h->scope, s, (size_t)(part[k - 1] - s - 1));
	h->scope[part[k - 1] - s - 1] = '\0';
	memcpy(h->id, part[k - 1], len[k - 1]);
	h->id[len[k - 1]] = '\0';
	if (k == 2)
		snprintf(h->path, sizeof(h->path), "/app/hook");
	else
		snprintf(h->path, sizeof(h->path), "/%s/hooks/%s", h->scope,
		    h->id);
	return IH_OK;
}

/* IDEMHOOK_GITHUB_HOOKS.  Returns IH_OK, IH_ENOTFOUND or IH_ECONFIG. */
static int
hooks_of(struct catchup *cu, struct hook *hs, size_t *n)
{
	const char *v = cli_setting(cu->c, "IDEMHOOK_GITHUB_HOOKS");
	size_t len;

	*n = 0;
	if (v == NULL || *v == '\0') {
		snprintf(cu->err, sizeof(cu->err), "set IDEMHOOK_GITHUB_HOOKS "
		    "(repos/OWNER/REPO/HOOK_ID, orgs/ORG/HOOK_ID or "
		    "app/HOOK_ID ...)");
		return IH_ECONFIG;
	}
	while (*v != '\0') {
		len = api_list_word(&v);
		if (len == 0)
			break;
		if (*n == GITHUB_HOOKS_MAX || hook_parse(v, len,
		    &hs[*n]) != IH_OK) {
			snprintf(cu->err, sizeof(cu->err),
			    "IDEMHOOK_GITHUB_HOOKS: %.*s: not "
			    "repos/OWNER/REPO/HOOK_ID, orgs/ORG/HOOK_ID or "
			    "app/HOOK_ID (at most %d)", (int)(len < 80 ?
			    len : 80), v, GITHUB_HOOKS_MAX);
			return IH_ECONFIG;
		}
		(*n)++;
		v += len;
	}
	return IH_OK;
}

/* The Authorization value for h: the App's JWT, or the token. */
static int
auth_of(struct catchup *cu, const struct hook *h, char *auth, size_t len)
{
	if (h->path[1] == 'a')
		return api_github_app_auth(cu->c, clock_wall_s(), auth, len,
		    cu->err, sizeof(cu->err));
	if (*cu->key == '\0') {
		snprintf(cu->err, sizeof(cu->err), "%s/hooks/%s: set "
		    "IDEMHOOK_GITHUB_API_KEY (the App's JWT is for app/HOOK_ID "
		    "only)", h->scope, h->id);
		return IH_ECONFIG;
	}
	return api_bearer(cu->key, auth, len);
}

/* Says which credential GitHub refused for h. */
static int
refused(struct catchup *cu, const struct hook *h, const struct api_resp *r,
    const char *what)
{
	int rc = catchup_refused(cu, r, what);

	if (rc == IH_ECONFIG && h->path[1] == 'a')
		snprintf(cu->err, sizeof(cu->err), "%s: the API refused the "
		    "App's token (HTTP %ld): check IDEMHOOK_GITHUB_APP_ID and "
		    "IDEMHOOK_GITHUB_APP_KEY_FILE", what, r->status);
	return rc;
}

/* GETs url, whose answer must be 200.  *r is the caller's to free. */
static int
get(struct catchup *cu, const struct hook *h, const char *url,
    const char *what, struct api_resp *r)
{
	char auth[GITHUB_APP_AUTH_MAX];
	int rc;

	rc = auth_of(cu, h, auth, sizeof(auth));
	if (rc == IH_OK)
		rc = catchup_call(cu, "GET", url, "Authorization", auth,
		    gh_headers, NULL, r);
	OPENSSL_cleanse(auth, sizeof(auth));
	if (rc == IH_OK && r->status != 200)
		rc = refused(cu, h, r, what);
	return rc;
}

static int
on_item(void *arg, const char *item, size_t len)
{
	struct list *l = arg;
	struct json_want w[7];
	struct gh_item *it, *ni;
	long long code;
	size_t i;
	int rc;

	memset(w, 0, sizeof(w));
	w[0].path = "$.id";
	w[1].path = "$.guid";
	w[2].path = "$.delivered_at";
	w[3].path = "$.status_code";
	w[4].path = "$.redelivery";
	w[4].raw = JSON_WANT_BOOL;
	w[5].path = "$.event";
	w[6].path = "$.action";
	rc = json_extract(l->js, item, len, w, 7, 0);
	if (rc != IH_OK)
		return rc == IH_ENOMEM ? rc : IH_OK;
	if (l->n == l->cap && l->cap < GITHUB_ITEMS_MAX) {
		l->cap = l->cap ? l->cap * 2 : 256;
		ni = realloc(l->items, l->cap * sizeof(*ni));
		if (ni == NULL) {
			rc = IH_ENOMEM;
			goto out;
		}
		l->items = ni;
	}
	if (w[0].val == NULL || w[1].val == NULL || w[2].val == NULL ||
	    w[1].len >= sizeof(it->guid) || l->n == l->cap)
		goto out;
	it = &l->items[l->n];
	memset(it, 0, sizeof(*it));
	memcpy(it->guid, w[1].val, w[1].len + 1);
	snprintf(it->event, sizeof(it->event), "%s", w[5].val ? w[5].val :
	    "?");
	snprintf(it->action, sizeof(it->action), "%s", w[6].val ? w[6].val :
	    "");
	it->id = strtoll(w[0].val, NULL, 10);
	if (cli_parse_time(w[2].val, clock_wall_ms(), &it->at_ms) != 0)
		goto out;
	code = w[3].val != NULL ? strtoll(w[3].val, NULL, 10) : 0;
	it->ok = code >= 200 && code <= 299;
	it->redelivery = w[4].val != NULL && strcmp(w[4].val, "true") == 0;
	if (it->at_ms >= l->from_ms) {
		l->n++;
		l->in_window++;
	}
out:
	for (i = 0; i < 7; i++)
		free(w[i].val);
	return rc;
}

/* By GUID, then newest attempt first. */
static int
by_guid(const void *a, const void *b)
{
	const struct gh_item *x = a, *y = b;
	int c = strcmp(x->guid, y->guid);

	if (c != 0)
		return c;
	return x->id < y->id ? 1 : x->id > y->id ? -1 : 0;
}

/*
 * The answer is a JSON array, and the project's reader takes objects
 * only: it reads it as the member of a one-member object.
 */
static int
page_items(struct list *l, const struct api_resp *r, int *any)
{
	char *doc;
	size_t n = r->len + 8;
	int more, rc;

	doc = malloc(n);
	if (doc == NULL)
		return IH_ENOMEM;
	memcpy(doc, "{\"a\":", 5);
	memcpy(doc + 5, r->body, r->len);
	memcpy(doc + 5 + r->len, "}", 2);
	l->in_window = 0;
	rc = catchup_items(doc, r->len + 6, "$.a", NULL, on_item, l, &more);
	free(doc);
	*any = l->in_window > 0;
	return rc;
}

/* Asks for the redelivery of attempt id.  Returns IH_OK on 202. */
static int
redeliver(struct catchup *cu, const struct hook *h, int64_t id)
{
	struct api_resp r;
	char url[API_HTTP_URL_MAX], auth[GITHUB_APP_AUTH_MAX];
	int rc;

	memset(&r, 0, sizeof(r));
	rc = catchup_url(cu, url, sizeof(url), "%s/deliveries/%lld/attempts",
	    h->path, (long long)id);
	if (rc == IH_OK)
		rc = auth_of(cu, h, auth, sizeof(auth));
	if (rc == IH_OK)
		rc = catchup_call(cu, "POST", url, "Authorization", auth,
		    gh_headers, "", &r);
	OPENSSL_cleanse(auth, sizeof(auth));
	if (rc == IH_OK && r.status != 202)
		rc = refused(cu, h, &r, "POST .../attempts");
	api_resp_free(&r);
	return rc;
}

static int
have(struct catchup *cu, const struct hook *h, const char *guid,
    int *found)
{
	char eid[128];

	snprintf(eid, sizeof(eid), "%s:%s", h->id, guid);
	return catchup_have(cu, eid, found);
}

/* The events of the listed attempts: which need a redelivery. */
static int
settle(struct catchup *cu, const struct hook *h, struct list *l)
{
	struct gh_item *it, *last;
	size_t i = 0, j;
	long fails;
	int ok, found, rc = IH_OK;
	char when[CLI_TIME_MAX];

	qsort(l->items, l->n, sizeof(*l->items), by_guid);
	while (i < l->n && rc == IH_OK) {
		ok = 0;
		fails = 0;
		last = &l->items[i];
		for (j = i; j < l->n && strcmp(l->items[j].guid,
		    last->guid) == 0; j++) {
			it = &l->items[j];
			ok |= it->ok;
			fails += !it->ok && it->redelivery;
		}
		i = j;
		cu->seen++;
		if (ok)
			continue;
		rc = have(cu, h, last->guid, &found);
		if (rc != IH_OK || found)
			continue;
		cu->missing++;
		cli_format_time(last->at_ms, when, sizeof(when));
		if (fails >= GITHUB_GIVE_UP) {
			cu->failed++;
			if (!cu->json)
				cli_printf(stdout, "github: %s/hooks/%s: %s "
				    "(%s, %s): %ld redeliveries failed: not "
				    "asked again\n", h->scope, h->id,
				    last->guid, last->event, when, fails);
			continue;
		}
		if (!cu->dry_run)
			rc = redeliver(cu, h, last->id);
		if (rc == IH_OK && !cu->dry_run)
			cu->asked++;
		if (!cu->tty)
			continue;
		cli_printf(stderr, "\ngithub: %s/hooks/%s: %s (%s, %s): %s",
		    h->scope, h->id, last->guid, last->event, when,
		    cu->dry_run ? "missing" : rc == IH_OK ?
		    "redelivery asked" : "redelivery refused");
	}
	return rc;
}

/*
 * Lists hook h's deliveries in cu's window, then asks for the missing
 * ones when redeliver is set, and releases the held events of hl that
 * GitHub lists.
 */
static int
one_hook(struct catchup *cu, const struct hook *h,
    const struct gh_held_list *hl, int redeliver)
{
	struct list l;
	struct api_resp r;
	char url[API_HTTP_URL_MAX], base[API_HTTP_URL_MAX + 2];
	int rc, any;

	memset(&l, 0, sizeof(l));
	memset(&r, 0, sizeof(r));
	l.cu = cu;
	l.from_ms = cu->from_s * 1000;
	rc = json_open(&l.js);
	if (rc == IH_OK)
		rc = catchup_url(cu, url, sizeof(url), "%s/deliveries?"
		    "per_page=100", h->path);
	snprintf(base, sizeof(base), "%s/", cu->base);
	while (rc == IH_OK) {
		rc = get(cu, h, url, "GET .../deliveries", &r);
		if (rc != IH_OK)
			break;
		cu->pages++;
		rc = page_items(&l, &r, &any);
		if (rc == IH_EBODY) {
			snprintf(cu->err, sizeof(cu->err), "GET .../deliveries:"
			    " the answer is not a JSON array");
			rc = IH_EIO;
		}
		catchup_progress(cu);
		/* Newest first: a page with nothing in the window ends it. */
		if (rc != IH_OK || !any || r.next[0] == '\0')
			break;
		/* The key goes nowhere but the API's own base. */
		if (strncmp(r.next, base, strlen(base)) != 0) {
			snprintf(cu->err, sizeof(cu->err), "GET .../deliveries:"
			    " the next page is not under "
			    "IDEMHOOK_GITHUB_API_BASE");
			rc = IH_EIO;
			break;
		}
		memcpy(url, r.next, sizeof(url));
		api_resp_free(&r);
	}
	api_resp_free(&r);
	json_close(l.js);
	if (rc == IH_OK && redeliver)
		rc = settle(cu, h, &l);
	if (rc == IH_OK && hl->n > 0)
		rc = gh_held_release(cu, h->scope, h->id, l.items, l.n, hl);
	free(l.items);
	return rc;
}

int
api_github_catchup(struct catchup *cu)
{
	struct hook hs[GITHUB_HOOKS_MAX];
	struct gh_held_list hl;
	char when[CLI_TIME_MAX];
	size_t n, i;
	int rc;

	rc = hooks_of(cu, hs, &n);
	if (rc == IH_OK)
		rc = gh_held_read(cu, &hl);
	else
		hl.v = NULL;
	if (cu->to_s - cu->from_s > GITHUB_KEEP_S) {
		cu->from_s = cu->to_s - GITHUB_KEEP_S;
		cli_format_time(cu->from_s * 1000, when, sizeof(when));
		snprintf(cu->note, sizeof(cu->note), "GitHub redelivers for 3 "
		    "days: nothing before %s can be caught up", when);
	}
	for (i = 0; rc == IH_OK && i < n; i++)
		rc = one_hook(cu, &hs[i], &hl, 1);
	free(hl.v);
	return rc == IH_EINVAL || rc == IH_ETOOBIG ? IH_EIO : rc;
}

int
api_github_release(struct catchup *cu)
{
	struct hook hs[GITHUB_HOOKS_MAX];
	struct gh_held_list hl;
	int64_t oldest = INT64_MAX;
	size_t n = 0, i;
	int rc;

	rc = gh_held_read(cu, &hl);
	if (rc == IH_OK && hl.n > 0)
		rc = hooks_of(cu, hs, &n);
	for (i = 0; i < hl.n; i++)
		if (hl.v[i].received_at < oldest)
			oldest = hl.v[i].received_at;
	/* From the oldest held one, an hour early for clocks; 3 days kept. */
	cu->to_s = clock_wall_s();
	cu->from_s = oldest / 1000 - 3600;
	if (cu->to_s - cu->from_s > GITHUB_KEEP_S)
		cu->from_s = cu->to_s - GITHUB_KEEP_S;
	for (i = 0; rc == IH_OK && hl.n > 0 && i < n; i++)
		rc = one_hook(cu, &hs[i], &hl, 0);
	free(hl.v);
	return rc == IH_EINVAL || rc == IH_ETOOBIG ? IH_EIO : rc;
}

/*
 * The App hook: its configuration (GET /app/hook/config) has no active
 * flag nor last response, so its last delivery (GET .../deliveries)
 * stands for them.
 */
static int
app_health(struct catchup *cu, const struct hook *hk, struct json *js,
    struct health *h)
{
	struct json_want w[3];
	struct api_resp r;
	char url[API_HTTP_URL_MAX], *doc;
	long long code;
	size_t k;
	int rc;

	memset(&r, 0, sizeof(r));
	memset(w, 0, sizeof(w));
	rc = catchup_url(cu, url, sizeof(url), "/app/hook/config");
	if (rc == IH_OK)
		rc = get(cu, hk, url, "GET /app/hook/config", &r);
	w[0].path = "$.url";
	if (rc == IH_OK && json_extract(js, r.body, r.len, w, 1, 0) != IH_OK)
		rc = IH_EBODY;
	api_resp_free(&r);
	if (rc == IH_OK)
		rc = catchup_url(cu, url, sizeof(url), "/app/hook/deliveries?"
		    "per_page=1");
	if (rc == IH_OK)
		rc = get(cu, hk, url, "GET /app/hook/deliveries", &r);
	/* The answer is an array, read as a member (as page_items()). */
	w[1].path = "$.a[0].status_code";
	w[2].path = "$.a[0].status";
	doc = rc == IH_OK ? malloc(r.len + 8) : NULL;
	if (rc == IH_OK && doc == NULL)
		rc = IH_ENOMEM;
	if (rc == IH_OK) {
		memcpy(doc, "{\"a\":", 5);
		memcpy(doc + 5, r.body, r.len);
		memcpy(doc + 5 + r.len, "}", 2);
		if (json_extract(js, doc, r.len + 6, w + 1, 2, 0) != IH_OK)
			rc = IH_EBODY;
	}
	free(doc);
	api_resp_free(&r);
	if (rc == IH_EBODY) {
		snprintf(cu->err, sizeof(cu->err), "GET /app/hook/...: the "
		    "answer is not the JSON GitHub sends");
		rc = IH_EIO;
	}
	if (rc == IH_OK) {
		code = w[1].val != NULL ? strtoll(w[1].val, NULL, 10) : 0;
		health_add(h, w[0].val == NULL || *w[0].val == '\0', "github: "
		    "app/%s %s: %s", hk->id, w[0].val ? w[0].val : "-",
		    w[0].val && *w[0].val ? "the App's webhook" :
		    "the App has no webhook URL");
		health_add(h, code != 0 && (code < 200 || code > 299),
		    "github: app/%s: last response %s%s%s", hk->id, w[1].val ?
		    w[1].val : "-", w[2].val ? " " : "", w[2].val ? w[2].val :
		    "");
	}
	for (k = 0; k < 3; k++)
		free(w[k].val);
	return rc;
}

int
api_github_health(struct catchup *cu, struct health *h)
{
	struct hook hs[GITHUB_HOOKS_MAX];
	struct json_want w[5];
	struct api_resp r;
	struct json *js = NULL;
	char url[API_HTTP_URL_MAX];
	long long code;
	size_t n, i, k;
	int rc, bad;

	rc = hooks_of(cu, hs, &n);
	if (rc == IH_OK)
		rc = json_open(&js);
	for (i = 0; rc == IH_OK && i < n; i++) {
		memset(&r, 0, sizeof(r));
		if (hs[i].path[1] == 'a') {
			rc = app_health(cu, &hs[i], js, h);
			continue;
		}
		rc = catchup_url(cu, url, sizeof(url), "%s", hs[i].path);
		if (rc == IH_OK)
			rc = get(cu, &hs[i], url, "GET .../hooks/{id}", &r);
		memset(w, 0, sizeof(w));
		w[0].path = "$.active";
		w[0].raw = JSON_WANT_BOOL;
		w[1].path = "$.config.url";
		w[2].path = "$.last_response.code";
		w[3].path = "$.last_response.status";
		w[4].path = "$.last_response.message";
		if (rc == IH_OK && json_extract(js, r.body, r.len, w, 5, 0) !=
		    IH_OK) {
			snprintf(cu->err, sizeof(cu->err), "GET .../hooks/{id}:"
			    " the answer is not a JSON object");
			rc = IH_EIO;
		}
		api_resp_free(&r);
		if (rc != IH_OK)
			break;
		code = w[2].val != NULL ? strtoll(w[2].val, NULL, 10) : 0;
		bad = w[0].val == NULL || strcmp(w[0].val, "true") != 0;
		health_add(h, bad, "github: %s/hooks/%s %s: %s", hs[i].scope,
		    hs[i].id, w[1].val ? w[1].val : "?", bad ? "inactive "
		    "(GitHub sends it nothing)" : "active");
		bad = code != 0 && (code < 200 || code > 299);
		health_add(h, bad, "github: %s/hooks/%s: last response %s%s%s"
		    "%s%s", hs[i].scope, hs[i].id, w[2].val ? w[2].val : "-",
		    w[3].val ? " " : "", w[3].val ? w[3].val : "",
		    w[4].val ? ": " : "", w[4].val ? w[4].val : "");
		for (k = 0; k < 5; k++)
			free(w[k].val);
	}
	json_close(js);
	return rc == IH_EINVAL || rc == IH_ETOOBIG ? IH_EIO : rc;
}
