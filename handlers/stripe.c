/*
 * stripe.c -- the Stripe endpoint.
 *
 * Stripe-Signature: t=<unix seconds>,v1=<hex>[,v1=<hex>...][,v0=<hex>]
 * The MAC is HMAC-SHA256 over "<t>.<raw body>", keyed with the whole
 * whsec_... endpoint secret as bytes.  Any v1 matching any configured
 * secret accepts (Stripe sends one v1 per live secret while rolling);
 * v0 and unknown schemes are ignored, never accepted.  The timestamp must
 * lie within the tolerance in both directions.  The event is the body's
 * "id"; its type is the body's "type".
 *
 * A thin event (an event destination's "v2.core.event", signed the same
 * way with the destination's own secret) carries no data: it is recorded
 * for idemhook work to fetch (store_thin.h), and the switch sees it only
 * once fetched (STRIPE_FETCHED_PREFIX in stripe.h).
 */
#include <stdlib.h>
#include <string.h>

#include "dispatch.h"
#include "ih.h"
#include "log.h"
#include "object.h"
#include "provider.h"
#include "serve.h"
#include "stripe.h"
#include "verify.h"

int
stripe_parse_header(const char *h, size_t len, struct stripe_sig *sig)
{
	const char *p = h, *end = h + len, *item, *eq, *comma;
	size_t klen, vlen;

	memset(sig, 0, sizeof(*sig));
	while (p < end) {
		item = p;
		comma = memchr(p, ',', (size_t)(end - p));
		if (comma == NULL)
			comma = end;
		p = comma + 1;
		eq = memchr(item, '=', (size_t)(comma - item));
		if (eq == NULL)
			continue;
		klen = (size_t)(eq - item);
		vlen = (size_t)(comma - eq - 1);
		if (klen == 1 && item[0] == 't') {
			if (sig->t != NULL)
				return IH_EINVAL;
			sig->t = eq + 1;
			sig->tlen = vlen;
		} else if (klen == 2 && item[0] == 'v' && item[1] == '1') {
			if (sig->nv1 == STRIPE_MAX_V1)
				return IH_EINVAL;
			/* A malformed v1 can never match; skip it. */
			if (verify_hex_decode(eq + 1, vlen,
			    sig->v1[sig->nv1].mac, VERIFY_SHA256_LEN,
			    &sig->v1[sig->nv1].len) == IH_OK)
				sig->nv1++;
		}
	}
	if (sig->t == NULL || sig->tlen == 0)
		return IH_EINVAL;
	return IH_OK;
}

int
stripe_verify_header(const char *header, const void *body, size_t len,
    char *const *secrets, const size_t *secret_len, size_t nsecrets,
    time_t now, long tolerance, int check_time, const char **why)
{
	struct stripe_sig sig;
	struct verify_part parts[3];
	long long ts;
	int rc;

	if (header == NULL) {
		*why = "missing Stripe-Signature header";
		return IH_EAUTH;
	}
	if (stripe_parse_header(header, strlen(header), &sig) != IH_OK) {
		*why = "malformed Stripe-Signature header";
		return IH_EAUTH;
	}
	if (sig.nv1 == 0) {
		*why = "no v1 signature in Stripe-Signature";
		return IH_EAUTH;
	}
	parts[0].p = sig.t;
	parts[0].len = sig.tlen;
	parts[1].p = ".";
	parts[1].len = 1;
	parts[2].p = body;
	parts[2].len = len;
	rc = verify_any(secrets, secret_len, nsecrets, parts, 3, sig.v1,
	    sig.nv1);
	if (rc != IH_OK) {
		*why = "no v1 signature matches a configured secret";
		return IH_EAUTH;
	}
	rc = verify_timestamp(sig.t, sig.tlen, now, tolerance, &ts);
	if (rc == IH_EINVAL) {
		*why = "malformed timestamp in Stripe-Signature";
		return IH_EAUTH;
	}
	if (rc != IH_OK && check_time) {
		*why = "timestamp outside tolerance";
		return IH_ESTALE;
	}
	return IH_OK;
}

static int
stripe_verify(const struct provider_req *pr, const char **why)
{
	return stripe_verify_header(request_header(pr->req,
	    "Stripe-Signature"), pr->req->body, pr->req->body_len,
	    pr->cfg->secrets, pr->cfg->secret_len, pr->cfg->nsecrets,
	    pr->now, pr->cfg->tolerance_s, pr->check_time, why);
}

/*
 * Stripe's SDKs tell a thin notification by its "object" (stripe-node's
 * parseEventNotification; https://docs.stripe.com/api/v2/core/events/object).
 */
static int
stripe_needs_fetch(const struct provider_req *pr, int *yes)
{
	const char *keys[1] = { "object" };
	char *val = NULL;
	int rc;

	*yes = 0;
	rc = provider_fields(pr, keys, 1, &val);
	if (rc == IH_ENOMEM)
		return rc;
	*yes = val != NULL && strcmp(val, STRIPE_THIN_OBJECT) == 0;
	free(val);
	return IH_OK;
}

static int
stripe_identify(const struct provider_req *pr, struct ident *id,
    const char **why)
{
	return ident_from_body(pr, "id", "type", id, why);
}

/*
 * The event types Stripe's documentation names.  Adding behaviour for
 * one is a change to its case below.
 */
enum stripe_type {
	ST_UNKNOWN = 0,
	ST_PAYMENT_INTENT_SUCCEEDED,
	ST_PAYMENT_INTENT_PAYMENT_FAILED,
	ST_PAYMENT_METHOD_ATTACHED,
	ST_CUSTOMER_CREATED,
	ST_CUSTOMER_SUBSCRIPTION_CREATED,
	ST_CUSTOMER_SUBSCRIPTION_UPDATED,
	ST_CUSTOMER_SUBSCRIPTION_DELETED,
	ST_INVOICE_CREATED,
	ST_INVOICE_PAID,
	ST_INVOICE_PAYMENT_FAILED,
	ST_CHARGE_CREATED,
	ST_CHARGE_REFUNDED,
	ST_CHARGE_DISPUTE_CREATED,
	ST_CHECKOUT_SESSION_COMPLETED,
	ST_BALANCE_AVAILABLE
};

static const struct dispatch_type stripe_types[] = {
	{ "payment_intent.succeeded",	   ST_PAYMENT_INTENT_SUCCEEDED },
	{ "payment_intent.payment_failed", ST_PAYMENT_INTENT_PAYMENT_FAILED },
	{ "payment_method.attached",	   ST_PAYMENT_METHOD_ATTACHED },
	{ "customer.created",		   ST_CUSTOMER_CREATED },
	{ "customer.subscription.created", ST_CUSTOMER_SUBSCRIPTION_CREATED },
	{ "customer.subscription.updated", ST_CUSTOMER_SUBSCRIPTION_UPDATED },
	{ "customer.subscription.deleted", ST_CUSTOMER_SUBSCRIPTION_DELETED },
	{ "invoice.created",		   ST_INVOICE_CREATED },
	{ "invoice.paid",		   ST_INVOICE_PAID },
	{ "invoice.payment_failed",	   ST_INVOICE_PAYMENT_FAILED },
	{ "charge.created",		   ST_CHARGE_CREATED },
	{ "charge.refunded",		   ST_CHARGE_REFUNDED },
	{ "charge.dispute.created",	   ST_CHARGE_DISPUTE_CREATED },
	{ "checkout.session.completed",	   ST_CHECKOUT_SESSION_COMPLETED },
	{ "balance.available",		   ST_BALANCE_AVAILABLE },
};

static enum stripe_type
stripe_type_of(const char *name)
{
	/*
	 * A thin event of a v1 resource is named with the prefix "v1."
	 * ("v1.customer.created" for "customer.created"): the same case.
	 */
	if (strncmp(name, "v1.", 3) == 0)
		name += 3;
	return (enum stripe_type)dispatch_type_of(stripe_types,
	    sizeof(stripe_types) / sizeof(stripe_types[0]), name);
}

/*
 * The object an event sets: data.object, by its "object" (the kind:
 * subscription, invoice, ...) and "id", with its "status", at the
 * event's "created" (whole seconds, so ties are common).  A "*.deleted"
 * event leaves a tombstone.  Terminal statuses, in rising rank, break
 * ties of "created" so that a state at its end is never set back.
 */
static const char *const stripe_terminal[] = {
	"succeeded", "paid", "complete", "expired", "void", "uncollectible",
	"failed", "won", "lost", "refunded", "incomplete_expired", "canceled",
	NULL
};

static const struct object_rule stripe_rule = {
	.kind_path = "$.data.object.object",
	.id_path = "$.data.object.id",
	.status_path = "$.data.object.status",
	.time_path = "$.created",
	.object_path = "$.data.object",
	.terminal = stripe_terminal
};

/*
 * A fetched thin event: the related object as Stripe returned it, at the
 * time it was fetched.  That state is the object's at the fetch, not at
 * the event, so the fetch's time orders it: a later fetch never holds an
 * older state.
 */
static const struct object_rule stripe_fetched_rule = {
	.kind_path = "$.related_object.object",
	.id_path = "$.related_object.id",
	.status_path = "$.related_object.status",
	.time_path = "$.fetched_at",
	.object_path = "$.related_object",
	.terminal = stripe_terminal
};

static int
stripe_map_rule(const struct event *ev, struct object_rule *r,
    char kind[OBJECT_KIND_MAX])
{
	size_t plen = sizeof(STRIPE_FETCHED_PREFIX) - 1;

	(void)kind;
	*r = stripe_rule;
	if (ev->payload_len >= plen &&
	    memcmp(ev->payload, STRIPE_FETCHED_PREFIX, plen) == 0)
		*r = stripe_fetched_rule;
	r->deleted = ev->event_type != NULL &&
	    object_suffix(ev->event_type, ".deleted");
	return 1;
}

/* The paths are the same for every type: `.deleted` applies after. */
static size_t
stripe_map_paths(const struct provider_req *pr, struct object_rule *r,
    size_t max)
{
	struct event ev;
	char kind[OBJECT_KIND_MAX];

	if (max == 0)
		return 0;
	memset(&ev, 0, sizeof(ev));
	ev.payload = pr->req->body;
	ev.payload_len = pr->req->body_len;
	return (size_t)stripe_map_rule(&ev, r, kind);
}

static int
stripe_map(const struct event *ev, struct object_found *f)
{
	return provider_map(&stripe_provider, ev, f);
}

/*
 * The switch.  Each case names the local effect it records; the effect
 * row commits with the event's move to done, so it happens exactly once.
 * Real work (fulfil an order, email a receipt) goes in these cases, or in
 * an action configured with IDEMHOOK_STRIPE_ACTION.
 */
static int
stripe_handle(const struct event *ev, struct dispatch_ctx *ctx,
    char *err, size_t errlen)
{
	const char *kind;
	int rc;

	/* The object's current state, in the same transaction. */
	rc = dispatch_object(ctx, ev, stripe_map, err, errlen);
	if (rc != IH_OK)
		return rc;

	switch (stripe_type_of(ev->event_type)) {
	case ST_PAYMENT_INTENT_SUCCEEDED:
	case ST_INVOICE_PAID:
	case ST_CHECKOUT_SESSION_COMPLETED:
		kind = "payment_completed";
		break;
	case ST_PAYMENT_INTENT_PAYMENT_FAILED:
	case ST_INVOICE_PAYMENT_FAILED:
		kind = "payment_failed";
		break;
	case ST_CHARGE_REFUNDED:
	case ST_CHARGE_DISPUTE_CREATED:
		kind = "money_returned";
		break;
	case ST_CUSTOMER_SUBSCRIPTION_CREATED:
	case ST_CUSTOMER_SUBSCRIPTION_UPDATED:
	case ST_CUSTOMER_SUBSCRIPTION_DELETED:
		kind = "subscription_changed";
		break;
	case ST_PAYMENT_METHOD_ATTACHED:
	case ST_CUSTOMER_CREATED:
	case ST_INVOICE_CREATED:
	case ST_CHARGE_CREATED:
	case ST_BALANCE_AVAILABLE:
		kind = "recorded";
		break;
	case ST_UNKNOWN:
	default:
		kind = "recorded_unknown_type";
		break;
	}
	return dispatch_record(ctx, ev, kind, err, errlen);
}

static const char *const stripe_kept[] = { "Stripe-Signature", NULL };

/* What stripe_identify and stripe_needs_fetch read: one pass for both. */
static const char *const stripe_body_keys[] = { "id", "type", "object",
    NULL };

const struct provider stripe_provider = {
	.name = "stripe",
	.secret_var = "IDEMHOOK_STRIPE_SECRET",
	.kept_headers = stripe_kept,
	.sig_header = "Stripe-Signature",
	.verify = stripe_verify,
	.identify = stripe_identify,
	.handle = stripe_handle,
	.map_object = stripe_map,
	.map_rule = stripe_map_rule,
	.map_paths = stripe_map_paths,
	.keep_unusable = 0,
	/* Signed: the endpoint's pinned version, rendered into the body. */
	.version_key = "api_version",
	.source_account_key = "account",
	.needs_fetch = stripe_needs_fetch,
	.body_keys = stripe_body_keys,
};
