/*
 * shopify.c -- the Shopify endpoint.
 *
 * X-Shopify-Hmac-Sha256: <base64>
 * The MAC is HMAC-SHA256 over the raw body, keyed with the app's client
 * secret as bytes.  One signature per request; after a rotation Shopify
 * may sign with the old secret for up to an hour, so every configured
 * secret is tried.  Nothing is timestamped: redeliveries are recognised
 * by their id alone.  A bad HMAC is answered 401, as Shopify requires of
 * the mandatory compliance topics.
 *
 * An empty body is refused with 401 even when its HMAC matches: Shopify
 * never sends one (every topic is a JSON object), and shopify-api-js,
 * the reference verifier, fails such a request the same way, so this
 * endpoint accepts exactly what the reference accepts.
 *
 * The event id is X-Shopify-Webhook-Id, unique per delivery and the key
 * Shopify's current documentation says to deduplicate on;
 * X-Shopify-Event-Id, shared by every subscription the same merchant
 * action reaches, is kept with the event for correlation.  The type is
 * X-Shopify-Topic ("orders/create"), and X-Shopify-Sub-Topic, when sent,
 * is the subtype.  The body must be a JSON object.
 *
 * The HMAC covers the body only: the topic and the ids are unsigned
 * headers.  Shopify legitimately repeats a body under a new Webhook-Id
 * for the same topic (one delivery per subscription), and one merchant
 * action may reach several topics of one object (orders/create,
 * orders/paid), all with its X-Shopify-Event-Id.  That is all it
 * repeats: a known body never becomes a delete, app or compliance topic,
 * or another object, whatever headers come with it (shopify_repeat_ok).
 * The three mandatory compliance topics, whose consequences are the
 * gravest (erasing data), also need a body of their documented shape:
 * top-level shop_id and shop_domain, with data_request.id for
 * customers/data_request, customer.id and no data_request for
 * customers/redact, and neither for shop/redact.
 */
#include <stdlib.h>
#include <string.h>

#include "dispatch.h"
#include "ih.h"
#include "log.h"
#include "object.h"
#include "provider.h"
#include "serve.h"
#include "shopify.h"
#include "verify.h"

/* Base64 of 32 bytes: 44 characters with one '='. */
#define SHOPIFY_HMAC_B64_LEN	44

int
shopify_parse_hmac(const char *h, size_t len, struct verify_mac *mac)
{
	if (len != SHOPIFY_HMAC_B64_LEN ||
	    verify_b64_decode(h, len, mac->mac, sizeof(mac->mac),
	    &mac->len) != IH_OK || mac->len != VERIFY_SHA256_LEN)
		return IH_EINVAL;
	return IH_OK;
}

int
shopify_verify_header(const char *header, const void *body, size_t len,
    char *const *secrets, const size_t *secret_len, size_t nsecrets,
    const char **why)
{
	int rc;

	rc = verify_body_mac(header, shopify_parse_hmac, body, len, secrets,
	    secret_len, nsecrets, why);
	/* Shopify's own library refuses an empty body, signed or not. */
	if (rc == IH_OK && len == 0) {
		*why = "empty body";
		rc = IH_EAUTH;
	}
	return rc;
}

static int
shopify_verify(const struct provider_req *pr, const char **why)
{
	return shopify_verify_header(request_header(pr->req,
	    "X-Shopify-Hmac-Sha256"), pr->req->body, pr->req->body_len,
	    pr->cfg->secrets, pr->cfg->secret_len, pr->cfg->nsecrets, why);
}

/* Copies header name into *dst; IH_EBODY when absent, empty or long. */
static int
shopify_header(const struct provider_req *pr, const char *name,
    char **dst)
{
	const char *v;
	size_t len;

	v = request_header(pr->req, name);
	if (v == NULL)
		return IH_EBODY;
	len = strlen(v);
	if (len == 0 || len > JSON_VALUE_MAX)
		return IH_EBODY;
	return ident_set(dst, v, len);
}

int
shopify_check_topic(const char *topic, int has_shop, int has_data_request,
    int has_customer, const char **why)
{
	int ok;

	if (strcmp(topic, "customers/data_request") == 0)
		ok = has_shop && has_data_request;
	else if (strcmp(topic, "customers/redact") == 0)
		ok = has_shop && has_customer && !has_data_request;
	else if (strcmp(topic, "shop/redact") == 0)
		ok = has_shop && !has_customer && !has_data_request;
	else
		return IH_OK;
	if (!ok) {
		*why = "X-Shopify-Topic names a compliance topic the body "
		    "does not match";
		return IH_EBODY;
	}
	return IH_OK;
}

/* Is topic one of the three mandatory compliance topics? */
static int
shopify_is_compliance(const char *topic)
{
	return strcmp(topic, "customers/data_request") == 0 ||
	    strcmp(topic, "customers/redact") == 0 ||
	    strcmp(topic, "shop/redact") == 0;
}

/*
 * May a body first recorded under one topic also come under another?
 * Not as a delete (a tombstone), an app topic (app/uninstalled), a
 * compliance topic, or from one of those: each says what the body is.
 */
static int
shopify_topic_shared(const char *topic)
{
	return strchr(topic, '/') != NULL && !shopify_is_compliance(topic) &&
	    strncmp(topic, "app/", 4) != 0 &&
	    !object_suffix(topic, "/delete");
}

int
shopify_repeat_ok(const struct store_first *first,
    const struct event *ev, const char **why)
{
	/* Another subscription of the topic. */
	if (object_name_is(first->event_type, ev->event_type))
		return 1;
	if (!shopify_topic_shared(first->event_type) ||
	    !shopify_topic_shared(ev->event_type)) {
		*why = "a body never changes into or out of a delete, app or "
		    "compliance topic";
		return 0;
	}
	if (!object_same_kind(first->event_type, ev->event_type)) {
		*why = "under another object kind";
		return 0;
	}
	/* The unsigned Event-Id only narrows: the same merchant action. */
	if (!first->same_action) {
		*why = "under another topic and another X-Shopify-Event-Id";
		return 0;
	}
	return 1;
}

/* Sets *has to whether the body has a string or number at path. */
static int
shopify_has(const struct provider_req *pr, const char *path, int *has)
{
	char *v = NULL;
	int rc;

	rc = provider_path_text(pr, path, &v);
	*has = v != NULL;
	free(v);
	return rc;
}

static int
shopify_identify(const struct provider_req *pr, struct ident *id,
    const char **why)
{
	static const char *const keys[] = { "shop_id", "shop_domain" };
	char *vals[2] = { NULL, NULL };
	int rc, has_dr = 0, has_cust = 0;

	rc = shopify_header(pr, "X-Shopify-Webhook-Id", &id->event_id);
	if (rc != IH_OK) {
		*why = "missing X-Shopify-Webhook-Id header";
		goto out;
	}
	rc = shopify_header(pr, "X-Shopify-Topic", &id->event_type);
	if (rc != IH_OK) {
		*why = "missing X-Shopify-Topic header";
		goto out;
	}
	/* Optional: absent or unusable simply leaves no subtype. */
	rc = shopify_header(pr, "X-Shopify-Sub-Topic", &id->subtype);
	if (rc == IH_ENOMEM)
		goto out;
	rc = provider_fields(pr, keys, 2, vals);
	if (rc != IH_OK) {
		*why = "body is not a JSON object";
		if (rc != IH_ENOMEM)
			rc = IH_EBODY;
		goto out;
	}
	if (shopify_is_compliance(id->event_type)) {
		rc = shopify_has(pr, "$.data_request.id", &has_dr);
		if (rc == IH_OK)
			rc = shopify_has(pr, "$.customer.id", &has_cust);
		if (rc == IH_ENOMEM)
			goto out;
		rc = shopify_check_topic(id->event_type, vals[0] != NULL &&
		    vals[1] != NULL, has_dr, has_cust, why);
	}
out:
	free(vals[0]);
	free(vals[1]);
	return rc;
}

/*
 * The topics Shopify's documentation names, with the three mandatory
 * compliance topics.  Adding behaviour for one is a change to its case
 * below.
 */
enum shopify_type {
	SH_UNKNOWN = 0,
	SH_ORDERS_CREATE,
	SH_ORDERS_UPDATED,
	SH_ORDERS_PAID,
	SH_PRODUCTS_CREATE,
	SH_PRODUCTS_UPDATE,
	SH_APP_UNINSTALLED,
	SH_CUSTOMERS_DATA_REQUEST,
	SH_CUSTOMERS_REDACT,
	SH_SHOP_REDACT
};

static const struct dispatch_type shopify_types[] = {
	{ "orders/create",		SH_ORDERS_CREATE },
	{ "orders/updated",		SH_ORDERS_UPDATED },
	{ "orders/paid",		SH_ORDERS_PAID },
	{ "products/create",		SH_PRODUCTS_CREATE },
	{ "products/update",		SH_PRODUCTS_UPDATE },
	{ "app/uninstalled",		SH_APP_UNINSTALLED },
	{ "customers/data_request",	SH_CUSTOMERS_DATA_REQUEST },
	{ "customers/redact",		SH_CUSTOMERS_REDACT },
	{ "shop/redact",		SH_SHOP_REDACT },
};

static enum shopify_type
shopify_type_of(const char *name)
{
	return (enum shopify_type)dispatch_type_of(shopify_types,
	    sizeof(shopify_types) / sizeof(shopify_types[0]), name);
}

/*
 * The object an event sets: the body itself, by the topic's first
 * segment (orders, products, ...) and the body's "id"; its status is
 * "financial_status" (orders), else "status" (products); its time is the
 * signed body's "updated_at", else its "created_at" (refunds), else the
 * time it was received, never the unsigned X-Shopify-Triggered-At.  A
 * "*\/delete" topic leaves a tombstone.  Compliance and app topics set
 * no object.
 */
static const struct dispatch_type shopify_kinds[] = {
	{ "orders", 1 }, { "products", 2 }, { "customers", 3 },
	{ "draft_orders", 4 }, { "collections", 5 }, { "fulfillments", 6 },
	{ "refunds", 7 }, { "checkouts", 8 }, { "inventory_items", 9 },
};

static const char *const shopify_terminal[] = { "refunded", "voided",
	NULL };

static const struct object_rule shopify_rule = {
	.id_path = "$.id",
	.status_path = "$.financial_status",
	.status_path2 = "$.status",
	.time_path = "$.updated_at",
	.time_path2 = "$.created_at",
	.terminal = shopify_terminal
};

/* The kind of an object of topic (its first segment), or NULL: none. */
static const char *
shopify_kind_of(const char *topic)
{
	char kind[OBJECT_KIND_MAX];
	size_t n;
	int k;

	if (topic == NULL)
		return NULL;
	n = strcspn(topic, "/");
	if (topic[n] != '/' || n >= sizeof(kind) ||
	    strcmp(topic, "customers/redact") == 0 ||
	    strcmp(topic, "customers/data_request") == 0)
		return NULL;
	memcpy(kind, topic, n);
	kind[n] = '\0';
	k = dispatch_type_of(shopify_kinds,
	    sizeof(shopify_kinds) / sizeof(shopify_kinds[0]), kind);
	return k == 0 ? NULL : shopify_kinds[k - 1].name;
}

static int
shopify_map_rule(const struct event *ev, struct object_rule *r,
    char kind[OBJECT_KIND_MAX])
{
	(void)kind;
	*r = shopify_rule;
	r->kind = shopify_kind_of(ev->event_type);
	if (r->kind == NULL)
		return 0;
	r->deleted = object_suffix(ev->event_type, "/delete");
	return 1;
}

/* The rule of the topic X-Shopify-Topic names, read with the body. */
static size_t
shopify_map_paths(const struct provider_req *pr, struct object_rule *r,
    size_t max)
{
	if (max == 0)
		return 0;
	*r = shopify_rule;
	r->kind = shopify_kind_of(request_header(pr->req,
	    "X-Shopify-Topic"));
	return r->kind != NULL;
}

static int
shopify_map(const struct event *ev, struct object_found *f)
{
	return provider_map(&shopify_provider, ev, f);
}

static int
shopify_handle(const struct event *ev, struct dispatch_ctx *ctx,
    char *err, size_t errlen)
{
	const char *kind;
	int rc;

	/* The object's current state, in the same transaction. */
	rc = dispatch_object(ctx, ev, shopify_map, err, errlen);
	if (rc != IH_OK)
		return rc;

	switch (shopify_type_of(ev->event_type)) {
	case SH_ORDERS_CREATE:
	case SH_ORDERS_UPDATED:
	case SH_ORDERS_PAID:
		kind = "order_changed";
		break;
	case SH_PRODUCTS_CREATE:
	case SH_PRODUCTS_UPDATE:
		kind = "product_changed";
		break;
	case SH_APP_UNINSTALLED:
		kind = "app_uninstalled";
		break;
	case SH_CUSTOMERS_DATA_REQUEST:
		/* Compliance: the customer's data must be sent to the shop. */
		kind = "compliance_customer_data_requested";
		break;
	case SH_CUSTOMERS_REDACT:
		/* Compliance: erase the customer's data. */
		kind = "compliance_customer_data_to_erase";
		break;
	case SH_SHOP_REDACT:
		/* Compliance: 48 h after uninstall, erase the shop's data. */
		kind = "compliance_shop_data_to_erase";
		break;
	case SH_UNKNOWN:
	default:
		kind = "recorded_unknown_type";
		break;
	}
	return dispatch_record(ctx, ev, kind, err, errlen);
}

/* Enough to verify and name the event again, and to correlate it. */
static const char *const shopify_kept[] = {
	"X-Shopify-Hmac-Sha256",
	"X-Shopify-Topic",
	"X-Shopify-Sub-Topic",
	"X-Shopify-Webhook-Id",
	"X-Shopify-Event-Id",
	"X-Shopify-Shop-Domain",
	"X-Shopify-Triggered-At",
	"X-Shopify-API-Version",
	NULL
};

/* What shopify_identify reads, in the one pass with the object. */
static const char *const shopify_body_keys[] = { "shop_id", "shop_domain",
    "$.data_request.id", "$.customer.id", NULL };

const struct provider shopify_provider = {
	.name = "shopify",
	.secret_var = "IDEMHOOK_SHOPIFY_SECRET",
	.kept_headers = shopify_kept,
	.sig_header = "X-Shopify-Hmac-Sha256",
	.type_unsigned = 1,
	.same_action_header = "X-Shopify-Event-Id",
	.repeat_ok = shopify_repeat_ok,
	.hold_replays = 0,
	.verify = shopify_verify,
	.identify = shopify_identify,
	.handle = shopify_handle,
	.map_object = shopify_map,
	.map_rule = shopify_map_rule,
	.map_paths = shopify_map_paths,
	.keep_unusable = 0,
	.body_keys = shopify_body_keys,
	/* Unsigned: it labels and may hold an event, never releases one. */
	.version_header = "X-Shopify-API-Version",
};
