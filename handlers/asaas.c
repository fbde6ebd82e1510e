/*
 * asaas.c -- the Asaas endpoint.
 *
 * Asaas signs nothing: every call carries the webhook's static token in
 * the asaas-access-token header.  It is compared in constant time with
 * each configured token (several during a rotation), every one of them
 * tried whatever the outcome.  There is no timestamp.
 *
 * The event id is the body's "id" (it may contain '&'), the type its
 * "event" ("PAYMENT_RECEIVED"), and the payment's "payment"."id", when
 * present, is the order key, so that one payment's events can be read
 * in order.
 *
 * Asaas counts only a literal 200 as success and pauses the webhook's
 * whole queue after 15 failures.  So an authenticated body that cannot
 * be used (not JSON, no id or event) is not refused: keep_unusable makes
 * the library store it as quarantined and answer 200.
 */
#include <string.h>

#include "asaas.h"
#include "dispatch.h"
#include "ih.h"
#include "log.h"
#include "object.h"
#include "provider.h"
#include "serve.h"
#include "verify.h"

int
asaas_verify_token(const char *token, char *const *tokens,
    const size_t *token_len, size_t ntokens, const char **why)
{
	size_t i, len;
	int match = 0;

	if (token == NULL || *token == '\0') {
		*why = "missing asaas-access-token header";
		return IH_EAUTH;
	}
	len = strlen(token);
	for (i = 0; i < ntokens; i++)
		match |= token_len[i] > 0 &&
		    verify_equal(token, len, tokens[i], token_len[i]);
	if (!match) {
		*why = "asaas-access-token matches no configured token";
		return IH_EAUTH;
	}
	return IH_OK;
}

static int
asaas_verify(const struct provider_req *pr, const char **why)
{
	return asaas_verify_token(request_header(pr->req,
	    "asaas-access-token"), pr->cfg->secrets, pr->cfg->secret_len,
	    pr->cfg->nsecrets, why);
}

static int
asaas_identify(const struct provider_req *pr, struct ident *id,
    const char **why)
{
	int rc;

	rc = ident_from_body(pr, "id", "event", id, why);
	if (rc != IH_OK)
		return rc;
	/* Not every event concerns a payment: no order key then. */
	rc = provider_path_text(pr, "$.payment.id", &id->order_key);
	if (rc == IH_ENOMEM)
		return rc;
	return IH_OK;
}

/*
 * The payment events Asaas documents.  Adding behaviour for one is a
 * change to its case below.
 */
enum asaas_type {
	AS_UNKNOWN = 0,
	AS_PAYMENT_CREATED,
	AS_PAYMENT_UPDATED,
	AS_PAYMENT_DELETED,
	AS_PAYMENT_RESTORED,
	AS_PAYMENT_CONFIRMED,
	AS_PAYMENT_RECEIVED,
	AS_PAYMENT_OVERDUE,
	AS_PAYMENT_ANTICIPATED,
	AS_PAYMENT_REFUNDED,
	AS_PAYMENT_PARTIALLY_REFUNDED,
	AS_PAYMENT_REFUND_IN_PROGRESS,
	AS_PAYMENT_AUTHORIZED,
	AS_PAYMENT_CREDIT_CARD_CAPTURE_REFUSED,
	AS_PAYMENT_CHARGEBACK_REQUESTED,
	AS_PAYMENT_CHARGEBACK_DISPUTE,
	AS_PAYMENT_AWAITING_CHARGEBACK_REVERSAL,
	AS_PAYMENT_AWAITING_RISK_ANALYSIS,
	AS_PAYMENT_APPROVED_BY_RISK_ANALYSIS,
	AS_PAYMENT_REPROVED_BY_RISK_ANALYSIS,
	AS_PAYMENT_RECEIVED_IN_CASH_UNDONE,
	AS_PAYMENT_DUNNING_REQUESTED,
	AS_PAYMENT_DUNNING_RECEIVED,
	AS_PAYMENT_BANK_SLIP_VIEWED,
	AS_PAYMENT_CHECKOUT_VIEWED
};

static const struct dispatch_type asaas_types[] = {
	{ "PAYMENT_CREATED",		AS_PAYMENT_CREATED },
	{ "PAYMENT_UPDATED",		AS_PAYMENT_UPDATED },
	{ "PAYMENT_DELETED",		AS_PAYMENT_DELETED },
	{ "PAYMENT_RESTORED",		AS_PAYMENT_RESTORED },
	{ "PAYMENT_CONFIRMED",		AS_PAYMENT_CONFIRMED },
	{ "PAYMENT_RECEIVED",		AS_PAYMENT_RECEIVED },
	{ "PAYMENT_OVERDUE",		AS_PAYMENT_OVERDUE },
	{ "PAYMENT_ANTICIPATED",	AS_PAYMENT_ANTICIPATED },
	{ "PAYMENT_REFUNDED",		AS_PAYMENT_REFUNDED },
	{ "PAYMENT_PARTIALLY_REFUNDED",	AS_PAYMENT_PARTIALLY_REFUNDED },
	{ "PAYMENT_REFUND_IN_PROGRESS",	AS_PAYMENT_REFUND_IN_PROGRESS },
	{ "PAYMENT_AUTHORIZED",		AS_PAYMENT_AUTHORIZED },
	{ "PAYMENT_CREDIT_CARD_CAPTURE_REFUSED",
	    AS_PAYMENT_CREDIT_CARD_CAPTURE_REFUSED },
	{ "PAYMENT_CHARGEBACK_REQUESTED", AS_PAYMENT_CHARGEBACK_REQUESTED },
	{ "PAYMENT_CHARGEBACK_DISPUTE",	AS_PAYMENT_CHARGEBACK_DISPUTE },
	{ "PAYMENT_AWAITING_CHARGEBACK_REVERSAL",
	    AS_PAYMENT_AWAITING_CHARGEBACK_REVERSAL },
	{ "PAYMENT_AWAITING_RISK_ANALYSIS", AS_PAYMENT_AWAITING_RISK_ANALYSIS },
	{ "PAYMENT_APPROVED_BY_RISK_ANALYSIS",
	    AS_PAYMENT_APPROVED_BY_RISK_ANALYSIS },
	{ "PAYMENT_REPROVED_BY_RISK_ANALYSIS",
	    AS_PAYMENT_REPROVED_BY_RISK_ANALYSIS },
	{ "PAYMENT_RECEIVED_IN_CASH_UNDONE",
	    AS_PAYMENT_RECEIVED_IN_CASH_UNDONE },
	{ "PAYMENT_DUNNING_REQUESTED",	AS_PAYMENT_DUNNING_REQUESTED },
	{ "PAYMENT_DUNNING_RECEIVED",	AS_PAYMENT_DUNNING_RECEIVED },
	{ "PAYMENT_BANK_SLIP_VIEWED",	AS_PAYMENT_BANK_SLIP_VIEWED },
	{ "PAYMENT_CHECKOUT_VIEWED",	AS_PAYMENT_CHECKOUT_VIEWED },
};

static enum asaas_type
asaas_type_of(const char *name)
{
	return (enum asaas_type)dispatch_type_of(asaas_types,
	    sizeof(asaas_types) / sizeof(asaas_types[0]), name);
}

/*
 * The object an event sets: "payment" for PAYMENT_* events and
 * "subscription" for SUBSCRIPTION_* ones, by its "id", with its
 * "status", at the event's "dateCreated" (whole seconds).  PAYMENT_DELETED
 * and SUBSCRIPTION_DELETED leave a tombstone (PAYMENT_RESTORED, later,
 * lifts it).  Events of one payment are still processed in arrival
 * order (its order key); the guard keeps the row right whatever that is.
 */
static const char *const asaas_terminal[] = {
	"CONFIRMED", "RECEIVED", "RECEIVED_IN_CASH", "REFUNDED", "INACTIVE",
	"EXPIRED", NULL
};

/* The objects events set, by the event type's prefix: a table. */
static const struct {
	const char		*prefix;
	struct object_rule	 rule;
} asaas_objects[] = {
	{ "PAYMENT_", { .kind = "payment", .id_path = "$.payment.id",
	    .status_path = "$.payment.status", .time_path = "$.dateCreated",
	    .object_path = "$.payment", .terminal = asaas_terminal } },
	{ "SUBSCRIPTION_", { .kind = "subscription",
	    .id_path = "$.subscription.id",
	    .status_path = "$.subscription.status",
	    .time_path = "$.dateCreated", .object_path = "$.subscription",
	    .terminal = asaas_terminal } },
};

static int
asaas_map_rule(const struct event *ev, struct object_rule *r,
    char kind[OBJECT_KIND_MAX])
{
	size_t i, n = sizeof(asaas_objects) / sizeof(asaas_objects[0]);

	(void)kind;
	for (i = 0; i < n; i++)
		if (object_prefix(ev->event_type, asaas_objects[i].prefix))
			break;
	if (i == n)
		return 0;
	*r = asaas_objects[i].rule;
	r->deleted = object_suffix(ev->event_type, "_DELETED");
	return 1;
}

/*
 * The body names the type: the one pass reads the paths of both rules
 * (the event's "dateCreated" once), and the switch takes its type's.
 */
static size_t
asaas_map_paths(const struct provider_req *pr, struct object_rule *r,
    size_t max)
{
	size_t i, n = sizeof(asaas_objects) / sizeof(asaas_objects[0]);

	(void)pr;
	for (i = 0; i < n && i < max; i++)
		r[i] = asaas_objects[i].rule;
	return i;
}

static int
asaas_map(const struct event *ev, struct object_found *f)
{
	return provider_map(&asaas_provider, ev, f);
}

static int
asaas_handle(const struct event *ev, struct dispatch_ctx *ctx,
    char *err, size_t errlen)
{
	const char *kind;
	int rc;

	/* The object's current state, in the same transaction. */
	rc = dispatch_object(ctx, ev, asaas_map, err, errlen);
	if (rc != IH_OK)
		return rc;

	switch (asaas_type_of(ev->event_type)) {
	case AS_PAYMENT_CONFIRMED:
		/* Paid; the balance is not yet available. */
		kind = "payment_confirmed";
		break;
	case AS_PAYMENT_RECEIVED:
		kind = "payment_received";
		break;
	case AS_PAYMENT_RECEIVED_IN_CASH_UNDONE:
	case AS_PAYMENT_REFUNDED:
	case AS_PAYMENT_PARTIALLY_REFUNDED:
	case AS_PAYMENT_REFUND_IN_PROGRESS:
		kind = "money_returned";
		break;
	case AS_PAYMENT_CHARGEBACK_REQUESTED:
	case AS_PAYMENT_CHARGEBACK_DISPUTE:
	case AS_PAYMENT_AWAITING_CHARGEBACK_REVERSAL:
		kind = "chargeback";
		break;
	case AS_PAYMENT_OVERDUE:
	case AS_PAYMENT_CREDIT_CARD_CAPTURE_REFUSED:
	case AS_PAYMENT_REPROVED_BY_RISK_ANALYSIS:
		kind = "payment_failed_or_late";
		break;
	case AS_PAYMENT_CREATED:
	case AS_PAYMENT_UPDATED:
	case AS_PAYMENT_DELETED:
	case AS_PAYMENT_RESTORED:
		kind = "payment_changed";
		break;
	case AS_PAYMENT_ANTICIPATED:
	case AS_PAYMENT_AUTHORIZED:
	case AS_PAYMENT_AWAITING_RISK_ANALYSIS:
	case AS_PAYMENT_APPROVED_BY_RISK_ANALYSIS:
	case AS_PAYMENT_DUNNING_REQUESTED:
	case AS_PAYMENT_DUNNING_RECEIVED:
	case AS_PAYMENT_BANK_SLIP_VIEWED:
	case AS_PAYMENT_CHECKOUT_VIEWED:
		kind = "recorded";
		break;
	case AS_UNKNOWN:
	default:
		kind = "recorded_unknown_type";
		break;
	}
	return dispatch_record(ctx, ev, kind, err, errlen);
}

/* The token is a bearer secret: it is never stored with the event. */
static const char *const asaas_kept[] = { NULL };

/* What asaas_identify reads, in the one pass with the object. */
static const char *const asaas_body_keys[] = { "id", "event",
    "$.payment.id", NULL };

const struct provider asaas_provider = {
	.name = "asaas",
	.secret_var = "IDEMHOOK_ASAAS_TOKEN",
	.kept_headers = asaas_kept,
	.sig_header = "asaas-access-token",
	.verify = asaas_verify,
	.identify = asaas_identify,
	.handle = asaas_handle,
	.map_object = asaas_map,
	.map_rule = asaas_map_rule,
	.map_paths = asaas_map_paths,
	.keep_unusable = 1,
	.body_keys = asaas_body_keys,
};
