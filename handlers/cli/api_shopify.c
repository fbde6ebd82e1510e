/*
 * api_shopify.c -- Shopify's Admin GraphQL API for catch-up and health.
 *
 * Shopify keeps no delivery log an app can read, and removes a
 * subscription after repeated failures.  So catch-up and health compare
 * the live list (webhookSubscriptions, paged by cursor) with the topics
 * that should be subscribed (IDEMHOOK_SHOPIFY_TOPICS, REST names such as
 * "orders/create"), at IDEMHOOK_SHOPIFY_WEBHOOK_URL when set; each
 * missing topic is reported with its gap (the last delivery of that
 * topic the store holds), and with --repair re-created
 * (webhookSubscriptionCreate);
 * then the orders updated in the gap are fetched (REST orders.json, whose
 * order is the body of an orders/updated delivery) and each state the
 * store lacks is recorded as an orders/updated event with the webhook id
 * "reconcile:<id>:<updated_at>": the switch and the objects table take
 * it in, under their ordering guard.  Other resources are left to the
 * operator.  IDEMHOOK_SHOPIFY_API_BASE names the shop and the
 * API version (https://SHOP.myshopify.com/admin/api/2025-07); the token
 * travels in X-Shopify-Access-Token, as Shopify requires.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_common.h"
#include "api_http.h"
#include "api_providers.h"
#include "api_session.h"
#include "cli_args.h"
#include "cli_text.h"
#include "clock.h"
#include "ih.h"
#include "json.h"
#include "store_console.h"

#define SHOPIFY_TOPICS_MAX	32
#define SHOPIFY_TOPIC_LEN	64
#define SHOPIFY_PAGES_MAX	50

static const char *const sh_headers[] = {
	"Accept: application/json",
	"Content-Type: application/json",
	NULL
};

static const char list_query[] = "query($after: String) { "
    "webhookSubscriptions(first: 100, after: $after) { edges { node { "
    "id topic uri } } pageInfo { hasNextPage endCursor } } }";

static const char create_query[] = "mutation($topic: "
    "WebhookSubscriptionTopic!, $uri: String!) { webhookSubscriptionCreate("
    "topic: $topic, webhookSubscription: {uri: $uri, format: JSON}) { "
    "webhookSubscription { id } userErrors { field message } } }";

struct want {
	char	topic[SHOPIFY_TOPIC_LEN];	/* "orders/create" */
	char	gql[SHOPIFY_TOPIC_LEN];		/* "ORDERS_CREATE" */
	int	found;
};

struct subs {
	struct catchup	*cu;
	struct json	*js;
	struct want	 w[SHOPIFY_TOPICS_MAX];
	size_t		 n;
	const char	*url;		/* or NULL: any address */
	long		 listed;
};

/* IDEMHOOK_SHOPIFY_TOPICS.  Returns IH_OK or IH_ECONFIG. */
static int
topics_of(struct catchup *cu, struct subs *s)
{
	const char *v = cli_setting(cu->c, "IDEMHOOK_SHOPIFY_TOPICS");
	size_t len, i;
	char c;

	if (v == NULL || *v == '\0') {
		snprintf(cu->err, sizeof(cu->err), "set IDEMHOOK_SHOPIFY_TOPICS"
		    " (the topics that must be subscribed: orders/create ...)");
		return IH_ECONFIG;
	}
	while (*v != '\0') {
		len = api_list_word(&v);
		if (len == 0)
			break;
		if (s->n == SHOPIFY_TOPICS_MAX || len >= SHOPIFY_TOPIC_LEN) {
			snprintf(cu->err, sizeof(cu->err), "IDEMHOOK_SHOPIFY_"
			    "TOPICS: at most %d topics of %d characters",
			    SHOPIFY_TOPICS_MAX, SHOPIFY_TOPIC_LEN - 1);
			return IH_ECONFIG;
		}
		for (i = 0; i < len; i++) {
			c = v[i];
			if (!islower((unsigned char)c) && c != '_' &&
			    c != '/' && !isdigit((unsigned char)c)) {
				snprintf(cu->err, sizeof(cu->err),
				    "IDEMHOOK_SHOPIFY_TOPICS: %.*s is not a "
				    "topic such as orders/create", (int)len, v);
				return IH_ECONFIG;
			}
			s->w[s->n].topic[i] = c;
			s->w[s->n].gql[i] = c == '/' ? '_' :
			    (char)toupper((unsigned char)c);
		}
		s->w[s->n].topic[len] = '\0';
		s->w[s->n].gql[len] = '\0';
		s->n++;
		v += len;
	}
	return IH_OK;
}

/* A GraphQL request: {"query": q, "variables": {names[i]: vals[i]}}. */
static int
gql_body(const char *q, const char *const *names, const char *const *vals,
    size_t n, char **out)
{
	size_t len = 0, i;
	FILE *f;

	*out = NULL;
	f = open_memstream(out, &len);
	if (f == NULL)
		return IH_ENOMEM;
	fputs("{\"query\":", f);
	cli_put_json(f, q);
	fputs(",\"variables\":{", f);
	for (i = 0; i < n; i++) {
		fprintf(f, "%s\"%s\":", i ? "," : "", names[i]);
		cli_put_json(f, vals[i]);
	}
	fputs("}}", f);
	if (fclose(f) != 0) {
		free(*out);
		*out = NULL;
		return IH_ENOMEM;
	}
	return IH_OK;
}

/* POSTs a GraphQL body; an answer with "errors" is a failure. */
static int
gql(struct catchup *cu, struct json *js, const char *body, const char *what,
    struct api_resp *r)
{
	char url[API_HTTP_URL_MAX], *msg = NULL;
	int rc;

	rc = catchup_url(cu, url, sizeof(url), "/graphql.json");
	if (rc == IH_OK)
		rc = catchup_call(cu, "POST", url, "X-Shopify-Access-Token",
		    cu->key, sh_headers, body, r);
	if (rc == IH_OK && r->status != 200)
		return catchup_refused(cu, r, what);
	if (rc != IH_OK)
		return rc;
	if (json_path_text(js, r->body, r->len, "$.errors[0].message",
	    &msg) != IH_OK) {
		snprintf(cu->err, sizeof(cu->err), "%s: the answer is not "
		    "JSON", what);
		return IH_EIO;
	}
	if (msg != NULL) {
		snprintf(cu->err, sizeof(cu->err), "%s: %s", what, msg);
		free(msg);
		return IH_EIO;
	}
	return IH_OK;
}

static int
on_edge(void *arg, const char *item, size_t len)
{
	struct subs *s = arg;
	struct json_want w[2];
	size_t i;
	int rc;

	memset(w, 0, sizeof(w));
	w[0].path = "$.node.topic";
	w[1].path = "$.node.uri";
	rc = json_extract(s->js, item, len, w, 2, 0);
	if (rc != IH_OK)
		return rc == IH_ENOMEM ? rc : IH_OK;
	s->listed++;
	for (i = 0; w[0].val != NULL && i < s->n; i++)
		if (strcmp(w[0].val, s->w[i].gql) == 0 && (s->url == NULL ||
		    (w[1].val != NULL && strcmp(w[1].val, s->url) == 0)))
			s->w[i].found = 1;
	free(w[0].val);
	free(w[1].val);
	return IH_OK;
}

/* Lists the subscriptions and marks the wanted topics found. */
static int
list(struct catchup *cu, struct subs *s)
{
	static const char *const names[] = { "after" };
	const char *vals[1] = { NULL };
	struct api_resp r;
	char *body = NULL, *cursor = NULL;
	int rc, more = 0, pages;

	memset(&r, 0, sizeof(r));
	for (pages = 0, rc = IH_OK; rc == IH_OK && pages < SHOPIFY_PAGES_MAX;
	    pages++) {
		vals[0] = cursor;
		rc = gql_body(list_query, names, vals, 1, &body);
		if (rc == IH_OK)
			rc = gql(cu, s->js, body, "webhookSubscriptions", &r);
		free(body);
		body = NULL;
		free(cursor);
		cursor = NULL;
		if (rc != IH_OK)
			break;
		cu->pages++;
		rc = catchup_items(r.body, r.len,
		    "$.data.webhookSubscriptions.edges",
		    "$.data.webhookSubscriptions.pageInfo.hasNextPage",
		    on_edge, s, &more);
		if (rc == IH_OK && more)
			rc = json_path_text(s->js, r.body, r.len,
			    "$.data.webhookSubscriptions.pageInfo.endCursor",
			    &cursor);
		api_resp_free(&r);
		if (rc != IH_OK || !more || cursor == NULL)
			break;
	}
	free(cursor);
	api_resp_free(&r);
	if (rc == IH_EBODY) {
		snprintf(cu->err, sizeof(cu->err), "webhookSubscriptions: the "
		    "answer is not the expected JSON");
		rc = IH_EIO;
	}
	return rc;
}

static int
create(struct catchup *cu, struct subs *s, const struct want *w)
{
	static const char *const names[] = { "topic", "uri" };
	const char *vals[2];
	struct api_resp r;
	char *body = NULL, *id = NULL, *msg = NULL;
	int rc;

	memset(&r, 0, sizeof(r));
	vals[0] = w->gql;
	vals[1] = s->url;
	rc = gql_body(create_query, names, vals, 2, &body);
	if (rc == IH_OK)
		rc = gql(cu, s->js, body, "webhookSubscriptionCreate", &r);
	free(body);
	if (rc == IH_OK)
		rc = json_path_text(s->js, r.body, r.len, "$.data."
		    "webhookSubscriptionCreate.webhookSubscription.id", &id);
	if (rc == IH_OK && id == NULL) {
		(void)json_path_text(s->js, r.body, r.len, "$.data."
		    "webhookSubscriptionCreate.userErrors[0].message", &msg);
		snprintf(cu->err, sizeof(cu->err), "webhookSubscriptionCreate "
		    "%s: %s", w->topic, msg != NULL ? msg : "refused");
		rc = IH_EIO;
	}
	free(id);
	free(msg);
	api_resp_free(&r);
	return rc == IH_EBODY ? IH_EIO : rc;
}

struct orders {
	struct catchup	*cu;
	struct json	*js;
};

/*
 * One order as the REST API returns it, the shape of an orders/updated
 * delivery's body: recorded as such an event, with the webhook id
 * "reconcile:<order id>:<updated_at>", so that each state is recorded
 * once and the objects table's ordering guard places it.
 */
static int
on_order(void *arg, const char *item, size_t len)
{
	struct orders *o = arg;
	struct json_want w[2];
	const char *hdrs[7];
	char wid[256], id[256];
	int rc;

	memset(w, 0, sizeof(w));
	w[0].path = "$.id";
	w[1].path = "$.updated_at";
	rc = json_extract(o->js, item, len, w, 2, 0);
	if (rc == IH_OK && w[0].val != NULL && w[1].val != NULL) {
		snprintf(wid, sizeof(wid), "reconcile:%s:%s", w[0].val,
		    w[1].val);
		hdrs[0] = "X-Shopify-Topic";
		hdrs[1] = "orders/updated";
		hdrs[2] = "X-Shopify-Webhook-Id";
		hdrs[3] = wid;
		hdrs[4] = "X-Shopify-Triggered-At";
		hdrs[5] = w[1].val;
		hdrs[6] = NULL;
		rc = catchup_offer(o->cu, item, len, hdrs, id, sizeof(id));
	}
	free(w[0].val);
	free(w[1].val);
	return rc == IH_EBODY ? IH_OK : rc;
}

/*
 * Orders updated since since_ms (GET orders.json, status any, paged by
 * the Link header, never outside the API base), recorded as above.
 */
static int
reconcile(struct catchup *cu, struct json *js, int64_t since_ms)
{
	struct orders o;
	struct api_resp r;
	char url[API_HTTP_URL_MAX], base[API_HTTP_URL_MAX + 2];
	char when[CLI_TIME_MAX], ewhen[3 * CLI_TIME_MAX];
	int rc, more, pages;

	memset(&r, 0, sizeof(r));
	o.cu = cu;
	o.js = js;
	cli_format_time(since_ms, when, sizeof(when));
	rc = api_http_escape(when, ewhen, sizeof(ewhen));
	if (rc == IH_OK)
		rc = catchup_url(cu, url, sizeof(url), "/orders.json?status=any"
		    "&limit=250&updated_at_min=%s", ewhen);
	snprintf(base, sizeof(base), "%s/", cu->base);
	for (pages = 0; rc == IH_OK && pages < SHOPIFY_PAGES_MAX; pages++) {
		rc = catchup_call(cu, "GET", url, "X-Shopify-Access-Token",
		    cu->key, sh_headers, NULL, &r);
		if (rc == IH_OK && r.status != 200)
			rc = catchup_refused(cu, &r, "GET orders.json");
		if (rc != IH_OK)
			break;
		cu->pages++;
		rc = catchup_items(r.body, r.len, "$.orders", NULL, on_order,
		    &o, &more);
		if (rc == IH_OK)
			rc = catchup_flush(cu);
		if (rc != IH_OK || r.next[0] == '\0')
			break;
		if (strncmp(r.next, base, strlen(base)) != 0) {
			snprintf(cu->err, sizeof(cu->err), "GET orders.json: "
			    "the next page is not under "
			    "IDEMHOOK_SHOPIFY_API_BASE");
			rc = IH_EIO;
			break;
		}
		memcpy(url, r.next, sizeof(url));
		api_resp_free(&r);
	}
	api_resp_free(&r);
	if (rc == IH_EBODY) {
		snprintf(cu->err, sizeof(cu->err), "GET orders.json: the "
		    "answer is not the expected JSON");
		rc = IH_EIO;
	}
	return rc;
}

/*
 * The gap of a missing topic: since its own last delivery the store
 * holds (another topic's deliveries say nothing of this one's), into
 * out; *last_ms is that delivery's time, 0 when none is recorded.
 */
static void
gap(struct catchup *cu, const char *topic, char *out, size_t len,
    int64_t *last_ms)
{
	char when[CLI_TIME_MAX], err[STORE_ERR_MAX];
	int64_t last = 0;

	*last_ms = 0;
	if (store_console_last_of_type(cu->st, "shopify", topic, &last, err,
	    sizeof(err)) != IH_OK || last == 0) {
		snprintf(out, len, "no %s delivery is recorded", topic);
		return;
	}
	*last_ms = last;
	cli_format_time(last, when, sizeof(when));
	snprintf(out, len, "the last %s delivery was recorded at %s", topic,
	    when);
}

/* Topic i is missing: reports it, and re-creates it with --repair. */
static int
missing(struct catchup *cu, struct subs *s, size_t i, const char *g)
{
	int rc = IH_OK;

	cu->missing++;
	if (cu->repair && !cu->dry_run && s->url == NULL) {
		snprintf(cu->err, sizeof(cu->err), "--repair needs "
		    "IDEMHOOK_SHOPIFY_WEBHOOK_URL (the receiver's public URL)");
		return IH_ECONFIG;
	}
	if (cu->repair && !cu->dry_run)
		rc = create(cu, s, &s->w[i]);
	if (rc == IH_OK && cu->repair && !cu->dry_run)
		cu->asked++;
	if (!cu->json)
		cli_printf(stdout, "shopify: %s: not subscribed%s; %s\n",
		    s->w[i].topic, rc != IH_OK ? "" : cu->repair &&
		    !cu->dry_run ? ", re-created" : " (--repair re-creates it)",
		    g);
	return rc;
}

static int
run(struct catchup *cu, struct health *h)
{
	struct subs s;
	char g[256], first[256];
	int64_t last, since = -1;
	size_t i;
	int rc;

	memset(&s, 0, sizeof(s));
	s.cu = cu;
	s.url = cli_setting(cu->c, "IDEMHOOK_SHOPIFY_WEBHOOK_URL");
	if (s.url != NULL && *s.url == '\0')
		s.url = NULL;
	if (cu->base[0] == '\0') {
		snprintf(cu->err, sizeof(cu->err), "set IDEMHOOK_SHOPIFY_API_"
		    "BASE=https://SHOP.myshopify.com/admin/api/2025-07");
		return IH_ECONFIG;
	}
	first[0] = '\0';
	rc = topics_of(cu, &s);
	if (rc == IH_OK)
		rc = json_open(&s.js);
	if (rc == IH_OK)
		rc = list(cu, &s);
	for (i = 0; rc == IH_OK && i < s.n; i++) {
		if (!s.w[i].found) {
			gap(cu, s.w[i].topic, g, sizeof(g), &last);
			/* The earliest gap: a topic never delivered is one. */
			if (since < 0 || last < since) {
				since = last;
				snprintf(first, sizeof(first), "%s", g);
			}
		}
		if (h != NULL) {
			health_add(h, !s.w[i].found, "shopify: %s: %s%s%s",
			    s.w[i].topic, s.w[i].found ? "subscribed" :
			    "not subscribed", s.w[i].found ? "" : "; ",
			    s.w[i].found ? "" : g);
			continue;
		}
		cu->seen++;
		if (!s.w[i].found)
			rc = missing(cu, &s, i, g);
	}
	if (cu->missing > 0)
		snprintf(cu->note, sizeof(cu->note), "the earliest gap: %s: "
		    "reconcile what changed since (--repair records the "
		    "orders updated since)", first);
	/* The gap's orders, once the subscriptions are back. */
	if (rc == IH_OK && cu->asked > 0)
		rc = reconcile(cu, s.js, since > cu->from_s * 1000 ? since :
		    cu->from_s * 1000);
	json_close(s.js);
	return rc == IH_EINVAL || rc == IH_ETOOBIG ? IH_EIO : rc;
}

int
api_shopify_catchup(struct catchup *cu)
{
	return run(cu, NULL);
}

int
api_shopify_health(struct catchup *cu, struct health *h)
{
	return run(cu, h);
}
