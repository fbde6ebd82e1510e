/*
 * api_stripe.c -- Stripe's API for catch-up (GET /v1/events) and health
 * (GET /v1/webhook_endpoints).
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
#include <string.h>

#include <openssl/crypto.h>

#include "api_common.h"
#include "api_http.h"
#include "api_providers.h"
#include "api_session.h"
#include "cli_args.h"
#include "ih.h"
#include "json.h"

#define STRIPE_KEEP_S		(30L * 86400)
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
	rc = api_bearer(cu->key, auth, sizeof(auth));
	if (rc == IH_OK)
		rc = catchup_url(cu, url, sizeof(url),
		    "/v1/webhook_endpoints?limit=100");
	if (rc == IH_OK)
		rc = catchup_call(cu, "GET", url, "Authorization", auth, hdrs,
		    NULL, &r);
	OPENSSL_cleanse(auth, sizeof(auth));
	if (rc != IH_OK)
		return rc;
	if (r.status != 200) {
		rc = catchup_refused(cu, &r, "GET /v1/webhook_endpoints");
		api_resp_free(&r);
		return rc;
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
		return IH_EIO;
	}
	if (e.n == 0)
		health_add(h, 1, "stripe: no webhook endpoint: Stripe sends "
		    "nothing");
	return IH_OK;
}
