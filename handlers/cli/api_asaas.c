/*
 * api_asaas.c -- Asaas's webhook API for catch-up and health.
 *
 * Asaas has no API that lists events or deliveries, but it keeps every
 * event of a webhook in a queue for 14 days, and after 15 failures in a
 * row it interrupts that queue: new events wait, unsent.  Catch-up reads
 * each webhook (GET /webhooks, paged by offset while hasMore) and
 * reports an interrupted queue; with --repair it resumes it with
 * PUT /webhooks/{id} {"interrupted": false}, and Asaas then sends what it
 * held, in order, through the receiver, which dedups as usual.  Health
 * reports interrupted queues, disabled webhooks and penalized events
 * (penalizedRequestsCount).  The key travels in the access_token header,
 * as Asaas requires.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "api_http.h"
#include "api_providers.h"
#include "api_session.h"
#include "cli_text.h"
#include "ih.h"
#include "json.h"

#define ASAAS_PAGE	100
#define ASAAS_PAGES_MAX	100

static const char *const as_headers[] = {
	"Accept: application/json",
	"Content-Type: application/json",
	NULL
};

struct hooks {
	struct catchup	*cu;
	struct health	*h;	/* health, or NULL for catch-up */
	struct json	*js;
	long		 n;
	int		 rc;
};

static int
call(struct catchup *cu, const char *method, const char *url,
    const char *body, struct api_resp *r)
{
	return catchup_call(cu, method, url, "access_token", cu->key,
	    as_headers, body, r);
}

/* Resumes webhook id's queue.  Returns IH_OK on 200. */
static int
resume(struct catchup *cu, const char *id)
{
	struct api_resp r;
	char url[API_HTTP_URL_MAX], eid[256];
	int rc;

	memset(&r, 0, sizeof(r));
	rc = api_http_escape(id, eid, sizeof(eid));
	if (rc == IH_OK)
		rc = catchup_url(cu, url, sizeof(url), "/webhooks/%s", eid);
	if (rc == IH_OK)
		rc = call(cu, "PUT", url, "{\"interrupted\":false}", &r);
	if (rc == IH_OK && r.status != 200)
		rc = catchup_refused(cu, &r, "PUT /webhooks/{id}");
	api_resp_free(&r);
	return rc;
}

static int
on_hook(void *arg, const char *item, size_t len)
{
	struct hooks *hk = arg;
	struct catchup *cu = hk->cu;
	struct json_want w[6];
	long long pen;
	size_t i;
	int rc, interrupted, enabled;

	memset(w, 0, sizeof(w));
	w[0].path = "$.id";
	w[1].path = "$.url";
	w[2].path = "$.interrupted";
	w[2].raw = JSON_WANT_BOOL;
	w[3].path = "$.enabled";
	w[3].raw = JSON_WANT_BOOL;
	w[4].path = "$.penalizedRequestsCount";
	w[5].path = "$.name";
	rc = json_extract(hk->js, item, len, w, 6, 0);
	if (rc != IH_OK)
		return rc == IH_ENOMEM ? rc : IH_OK;
	if (w[0].val == NULL)
		goto out;
	hk->n++;
	interrupted = w[2].val != NULL && strcmp(w[2].val, "true") == 0;
	enabled = w[3].val == NULL || strcmp(w[3].val, "false") != 0;
	pen = w[4].val != NULL ? strtoll(w[4].val, NULL, 10) : 0;
	if (hk->h != NULL) {
		health_add(hk->h, interrupted, "asaas: webhook %s %s: queue %s",
		    w[0].val, w[1].val ? w[1].val : "?", interrupted ?
		    "interrupted (events wait unsent; catch-up --repair "
		    "resumes it)" : "running");
		health_add(hk->h, !enabled, "asaas: webhook %s: %s", w[0].val,
		    enabled ? "enabled" : "disabled");
		health_add(hk->h, pen > 0, "asaas: webhook %s: %lld event(s) "
		    "under penalty", w[0].val, pen);
		goto out;
	}
	cu->seen++;
	if (!interrupted)
		goto out;
	cu->missing++;
	if (cu->repair && !cu->dry_run) {
		rc = resume(cu, w[0].val);
		if (rc == IH_OK)
			cu->asked++;
	}
	if (!cu->json)
		cli_printf(stdout, "asaas: webhook %s (%s) %s: queue "
		    "interrupted%s\n", w[0].val, w[5].val ? w[5].val : "",
		    w[1].val ? w[1].val : "?", rc != IH_OK ?
		    ": resume refused" : cu->repair && !cu->dry_run ?
		    ": resumed, Asaas sends what it held" :
		    ": run with --repair to resume it");
out:
	for (i = 0; i < 6; i++)
		free(w[i].val);
	return rc;
}

static int
walk(struct catchup *cu, struct health *h)
{
	struct hooks hk;
	struct api_resp r;
	char url[API_HTTP_URL_MAX];
	long offset = 0, pages;
	int rc, more = 0;

	memset(&hk, 0, sizeof(hk));
	memset(&r, 0, sizeof(r));
	hk.cu = cu;
	hk.h = h;
	rc = json_open(&hk.js);
	for (pages = 0; rc == IH_OK && pages < ASAAS_PAGES_MAX; pages++) {
		rc = catchup_url(cu, url, sizeof(url), "/webhooks?offset=%ld"
		    "&limit=%d", offset, ASAAS_PAGE);
		if (rc == IH_OK)
			rc = call(cu, "GET", url, NULL, &r);
		if (rc == IH_OK && r.status != 200)
			rc = catchup_refused(cu, &r, "GET /webhooks");
		if (rc != IH_OK)
			break;
		cu->pages++;
		rc = catchup_items(r.body, r.len, "$.data", "$.hasMore",
		    on_hook, &hk, &more);
		if (rc == IH_EBODY) {
			snprintf(cu->err, sizeof(cu->err), "GET /webhooks: the "
			    "answer is not a JSON list");
			rc = IH_EIO;
		}
		api_resp_free(&r);
		if (!more)
			break;
		offset += ASAAS_PAGE;
	}
	api_resp_free(&r);
	json_close(hk.js);
	if (rc == IH_OK && h != NULL && hk.n == 0)
		health_add(h, 1, "asaas: no webhook configured: Asaas sends "
		    "nothing");
	return rc == IH_EINVAL || rc == IH_ETOOBIG ? IH_EIO : rc;
}

int
api_asaas_catchup(struct catchup *cu)
{
	snprintf(cu->note, sizeof(cu->note), "Asaas lists no events: an "
	    "interrupted queue is resumed, and Asaas keeps events 14 days");
	return walk(cu, NULL);
}

int
api_asaas_health(struct catchup *cu, struct health *h)
{
	return walk(cu, h);
}
