/*
 * api_stripe.c -- Stripe's API for catch-up (GET /v1/events) and health
 * (GET /v1/webhook_endpoints and GET /v2/core/event_destinations).
 *
 * The events list is paged newest first with starting_after while
 * has_more is true, over created[gte] .. created[lte].  Each event's
 * object is rendered in the API version it was created with, the same
 * shape a webhook of that version carries, and it is recorded under its
 * own id: a delivery of the same event later is a duplicate.  The window
 * starts STRIPE_OVERLAP_S early, since events of the same second (and
 * the previous run's last seconds) may straddle its edge; Stripe keeps
 * events STRIPE_KEEP_S only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "api_common.h"
#include "api_http.h"
#include "api_providers.h"
#include "api_session.h"
#include "cli_args.h"
#include "ih.h"
#include "json.h"
#include "stripe.h"

#define STRIPE_KEEP_S		(30L * 86400)
/* The event destinations' pages read at most (Stripe's page size). */
#define STRIPE_DEST_PAGES	10
#define STRIPE_DEST_PATH	"/v2/core/event_destinations"
/* What a next page's URL may hold: its query goes into ours as it is. */
#define STRIPE_URL_CHARS	"ABCDEFGHIJKLMNOPQRSTUVWXYZ" \
	"abcdefghijklmnopqrstuvwxyz0123456789-._~%&=?/+"
#define STRIPE_OVERLAP_S	300
#define STRIPE_PAGE		100

struct page {
	struct catchup	*cu;
	char		 last[256];	/* the page's last id */
	long		 n;
};

static int
on_event(void *arg, const char *item, size_t len)
{
	struct page *pg = arg;
	int rc;

	pg->n++;
	rc = catchup_offer(pg->cu, item, len, NULL, pg->last,
	    sizeof(pg->last));
	/* An unusable event is counted and skipped, not the whole run. */
	return rc == IH_EBODY ? IH_OK : rc;
}

int
api_stripe_catchup(struct catchup *cu)
{
	static const char *const hdrs[] = { "Accept: application/json",
	    NULL };
	struct api_resp r;
	struct page pg;
	char url[API_HTTP_URL_MAX], after[3 * 256], auth[512];
	char when[CLI_TIME_MAX];
	int64_t from = cu->from_s - STRIPE_OVERLAP_S;
	int rc, more;

	memset(&r, 0, sizeof(r));
	if (cu->to_s - from > STRIPE_KEEP_S) {
		from = cu->to_s - STRIPE_KEEP_S;
		cli_format_time(from * 1000, when, sizeof(when));
		snprintf(cu->note, sizeof(cu->note), "Stripe keeps events 30 "
		    "days: nothing before %s can be caught up", when);
	}
	cu->from_s = from;
	rc = api_bearer(cu->key, auth, sizeof(auth));
	after[0] = '\0';
	while (rc == IH_OK) {
		rc = catchup_url(cu, url, sizeof(url), "/v1/events?limit=%d"
		    "&created%%5Bgte%%5D=%lld&created%%5Blte%%5D=%lld%s%s",
		    STRIPE_PAGE, (long long)from, (long long)cu->to_s,
		    after[0] ? "&starting_after=" : "", after);
		if (rc != IH_OK)
			break;
		rc = catchup_call(cu, "GET", url, "Authorization", auth, hdrs,
		    NULL, &r);
		if (rc == IH_OK && r.status != 200)
			rc = catchup_refused(cu, &r, "GET /v1/events");
		if (rc != IH_OK)
			break;
		cu->pages++;
		memset(&pg, 0, sizeof(pg));
		pg.cu = cu;
		rc = catchup_items(r.body, r.len, "$.data", "$.has_more",
		    on_event, &pg, &more);
		if (rc == IH_EBODY)
			snprintf(cu->err, sizeof(cu->err), "GET /v1/events: "
			    "the answer is not a JSON list");
		api_resp_free(&r);
		/* Each page is recorded before the next is asked for. */
		if (rc == IH_OK)
			rc = catchup_flush(cu);
		catchup_progress(cu);
		if (rc != IH_OK || !more || pg.n == 0)
			break;
		if (pg.last[0] == '\0' || api_http_escape(pg.last, after,
		    sizeof(after)) != IH_OK) {
			rc = IH_EIO;
			snprintf(cu->err, sizeof(cu->err), "GET /v1/events: "
			    "no id to page on");
		}
	}
	api_resp_free(&r);
	OPENSSL_cleanse(auth, sizeof(auth));
	return rc == IH_EBODY || rc == IH_EINVAL || rc == IH_ETOOBIG ?
	    IH_EIO : rc;
}

struct endpoints {
	struct catchup	*cu;
	struct health	*h;
	struct json	*js;
	long		 n;
};

static int
on_endpoint(void *arg, const char *item, size_t len)
{
	static const char *const keys[] = { "id", "url", "status",
	    "api_version" };
	struct endpoints *e = arg;
	char *v[4] = { NULL, NULL, NULL, NULL };
	int rc, bad;
	size_t i;

	rc = json_fields(e->js, item, len, keys, 4, v);
	if (rc != IH_OK)
		return rc == IH_ENOMEM ? rc : IH_OK;
	e->n++;
	bad = v[2] == NULL || strcmp(v[2], "enabled") != 0;
	health_add(e->h, bad, "stripe: endpoint %s %s: %s%s, API version %s",
	    v[0] ? v[0] : "?", v[1] ? v[1] : "?", v[2] ? v[2] : "no status",
	    bad ? " (Stripe sends it nothing; catch up once it is enabled)" :
	    "", v[3] ? v[3] : "the account's default");
	for (i = 0; i < 4; i++)
		free(v[i]);
	return IH_OK;
}

/* An event destination's members that health reads. */
enum { D_ID, D_NAME, D_STATUS, D_REASON, D_PAYLOAD, D_TYPE, D_N };

static int
on_destination(void *arg, const char *item, size_t len)
{
	static const char *const paths[D_N] = { "$.id", "$.name", "$.status",
	    "$.status_details.disabled.reason", "$.event_payload", "$.type" };
	struct endpoints *e = arg;
	struct json_want w[D_N];
	size_t i;
	int rc, bad;

	memset(w, 0, sizeof(w));
	for (i = 0; i < D_N; i++)
		w[i].path = paths[i];
	rc = json_extract(e->js, item, len, w, D_N, 0);
	if (rc != IH_OK)
		return rc == IH_ENOMEM ? rc : IH_OK;
	e->n++;
	bad = w[D_STATUS].val == NULL ||
	    strcmp(w[D_STATUS].val, "enabled") != 0;
	health_add(e->h, bad, "stripe: event destination %s \"%s\" (%s "
	    "events, %s): %s%s%s%s%s", w[D_ID].val ? w[D_ID].val : "?",
	    w[D_NAME].val ? w[D_NAME].val : "", w[D_PAYLOAD].val ?
	    w[D_PAYLOAD].val : "?", w[D_TYPE].val ? w[D_TYPE].val : "?",
	    w[D_STATUS].val ? w[D_STATUS].val : "no status",
	    w[D_REASON].val ? " (reason: " : "", w[D_REASON].val ?
	    w[D_REASON].val : "", w[D_REASON].val ? ")" : "", !bad ? "" :
	    w[D_PAYLOAD].val != NULL && strcmp(w[D_PAYLOAD].val, "thin") ==
	    0 ? " (Stripe sends it nothing; catch-up lists snapshot events "
	    "only, not thin ones)" : " (Stripe sends it nothing; catch up "
	    "once it is enabled)");
	for (i = 0; i < D_N; i++)
		free(w[i].val);
	return IH_OK;
}

/*
 * The event destinations (thin events, and snapshot ones made in
 * Workbench), paged through next_page_url, with a v2 Stripe-Version.  A
 * key that may not read them (401, 403) or an API without them (404) is
 * said, not a problem: endpoints alone may be in use.  Adds the number
 * of destinations to *n.
 */
static int
stripe_destinations(struct catchup *cu, struct health *h, const char *auth,
    long *n)
{
	static const char *const hdrs[] = { "Accept: application/json",
	    "Stripe-Version: " STRIPE_V2_VERSION, NULL };
	struct endpoints e;
	struct api_resp r;
	char url[API_HTTP_URL_MAX], *next = NULL;
	int rc, more, page;

	memset(&e, 0, sizeof(e));
	memset(&r, 0, sizeof(r));
	e.cu = cu;
	e.h = h;
	rc = json_open(&e.js);
	if (rc == IH_OK)
		rc = catchup_url(cu, url, sizeof(url), STRIPE_DEST_PATH);
	for (page = 0; rc == IH_OK && page < STRIPE_DEST_PAGES; page++) {
		rc = catchup_call(cu, "GET", url, "Authorization", auth, hdrs,
		    NULL, &r);
		if (rc != IH_OK)
			break;
		if (r.status == 401 || r.status == 403 || r.status == 404) {
			health_add(h, 0, "stripe: event destinations not "
			    "checked: HTTP %ld to GET " STRIPE_DEST_PATH
			    " (%s)", r.status, r.status == 404 ?
			    "no such list here" : "the key may not read "
			    "them; v2 takes secret keys");
			break;
		}
		if (r.status != 200) {
			rc = catchup_refused(cu, &r, "GET " STRIPE_DEST_PATH);
			break;
		}
		rc = catchup_items(r.body, r.len, "$.data", NULL,
		    on_destination, &e, &more);
		if (rc == IH_OK)
			rc = json_path_text(e.js, r.body, r.len,
			    "$.next_page_url", &next);
		if (rc != IH_OK) {
			snprintf(cu->err, sizeof(cu->err), "GET "
			    STRIPE_DEST_PATH ": the answer is not a JSON list");
			rc = rc == IH_ENOMEM ? rc : IH_EIO;
			break;
		}
		api_resp_free(&r);
		/* The next page: a path of the same list, or its full URL. */
		if (next == NULL)
			break;
		if (strncmp(next, cu->base, strlen(cu->base)) == 0)
			memmove(next, next + strlen(cu->base),
			    strlen(next + strlen(cu->base)) + 1);
		if (strncmp(next, STRIPE_DEST_PATH "?",
		    sizeof(STRIPE_DEST_PATH)) != 0 || strspn(next,
		    STRIPE_URL_CHARS) != strlen(next)) {
			health_add(h, 0, "stripe: event destinations: a "
			    "next page that is not of this list, not read");
			break;
		}
		rc = catchup_url(cu, url, sizeof(url), "%s", next);
		free(next);
		next = NULL;
	}
	free(next);
	api_resp_free(&r);
	json_close(e.js);
	*n += e.n;
	return rc;
}

int
api_stripe_health(struct catchup *cu, struct health *h)
{
	static const char *const hdrs[] = { "Accept: application/json",
	    NULL };
	struct endpoints e;
	struct api_resp r;
	char url[API_HTTP_URL_MAX], auth[512];
	int rc, more;

	memset(&e, 0, sizeof(e));
	e.cu = cu;
	e.h = h;
	memset(&r, 0, sizeof(r));
	rc = api_bearer(cu->key, auth, sizeof(auth));
	if (rc == IH_OK)
		rc = catchup_url(cu, url, sizeof(url),
		    "/v1/webhook_endpoints?limit=100");
	if (rc == IH_OK)
		rc = catchup_call(cu, "GET", url, "Authorization", auth, hdrs,
		    NULL, &r);
	if (rc != IH_OK)
		goto out;
	if (r.status != 200) {
		rc = catchup_refused(cu, &r, "GET /v1/webhook_endpoints");
		goto out;
	}
	rc = json_open(&e.js);
	if (rc == IH_OK)
		rc = catchup_items(r.body, r.len, "$.data", "$.has_more",
		    on_endpoint, &e, &more);
	json_close(e.js);
	api_resp_free(&r);
	if (rc != IH_OK) {
		snprintf(cu->err, sizeof(cu->err), "GET /v1/webhook_endpoints:"
		    " the answer is not a JSON list");
		rc = IH_EIO;
		goto out;
	}
	/* Then the event destinations, which thin events come from. */
	rc = stripe_destinations(cu, h, auth, &e.n);
	if (rc == IH_OK && e.n == 0)
		health_add(h, 1, "stripe: no webhook endpoint nor event "
		    "destination: Stripe sends nothing");
out:
	api_resp_free(&r);
	OPENSSL_cleanse(auth, sizeof(auth));
	return rc == IH_EBODY || rc == IH_EINVAL || rc == IH_ETOOBIG ?
	    IH_EIO : rc;
}
