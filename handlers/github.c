/*
 * github.c -- the GitHub endpoint.
 *
 * X-Hub-Signature-256: sha256=<hex>
 * The MAC is HMAC-SHA256 over the raw body, keyed with the hook's secret
 * as bytes.  GitHub has one secret per hook and no multi-signature
 * header, so rotation means trying every configured secret.  There is no
 * signed timestamp: redeliveries are recognised by their id alone.
 *
 * The body is JSON, or (the REST API's default) a form whose "payload"
 * field holds the URL-encoded JSON.  The signature covers the raw bytes
 * either way; the form is decoded only after it has been verified.
 *
 * The type is X-GitHub-Event and the body's "action" its subtype.  One
 * X-GitHub-Delivery GUID reaches every hook subscribed to the event, so
 * the event id is "<X-GitHub-Hook-ID>:<X-GitHub-Delivery>", with "-" for
 * a missing hook id.  A "ping" is recorded and answered 200 like any
 * other event.
 *
 * The signature covers the body only: X-GitHub-Event and
 * X-GitHub-Delivery are not signed.  Where the body names its own type
 * (a ping carries "zen" and "hook_id"), the header must agree.  One
 * delivery GUID carries one body and one type, to every hook subscribed
 * (a new event id per hook) and on every redelivery (a duplicate).  But
 * an event with no timestamp nor counter (a member removed from a team,
 * re-added, removed again) repeats byte for byte under a new GUID, which
 * only GitHub's deliveries API can tell from a captured body replayed.
 * So a body already recorded, under another GUID or type, is recorded
 * held (provider.h, hold_replays) and runs nothing until that API lists
 * its GUID with its type and action (idemhook catch-up, work) or the
 * operator releases it: the unsigned GUID names an event and makes a
 * redelivery a duplicate, but never alone makes a known body run again.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "dispatch.h"
#include "form.h"
#include "github.h"
#include "ih.h"
#include "log.h"
#include "object.h"
#include "provider.h"
#include "serve.h"
#include "verify.h"

#define GITHUB_SIG_PREFIX	"sha256="
#define GITHUB_SIG_PREFIX_LEN	7
#define GITHUB_FORM_TYPE	"application/x-www-form-urlencoded"
#define GITHUB_FORM_TYPE_LEN	33

int
github_parse_signature(const char *h, size_t len, struct verify_mac *mac)
{
	if (len != GITHUB_SIG_PREFIX_LEN + 2 * VERIFY_SHA256_LEN ||
	    memcmp(h, GITHUB_SIG_PREFIX, GITHUB_SIG_PREFIX_LEN) != 0)
		return IH_EINVAL;
	if (verify_hex_decode(h + GITHUB_SIG_PREFIX_LEN,
	    len - GITHUB_SIG_PREFIX_LEN, mac->mac, sizeof(mac->mac),
	    &mac->len) != IH_OK)
		return IH_EINVAL;
	return IH_OK;
}

int
github_verify_header(const char *header, const void *body, size_t len,
    char *const *secrets, const size_t *secret_len, size_t nsecrets,
    const char **why)
{
	return verify_body_mac(header, github_parse_signature, body, len,
	    secrets, secret_len, nsecrets, why);
}

int
github_is_form(const char *ct)
{
	size_t n;

	if (ct == NULL)
		return 0;
	while (*ct == ' ' || *ct == '\t')
		ct++;
	if (strncasecmp(ct, GITHUB_FORM_TYPE, GITHUB_FORM_TYPE_LEN) != 0)
		return 0;
	/* Only parameters ("; charset=...") or blanks may follow. */
	for (n = GITHUB_FORM_TYPE_LEN; ct[n] == ' ' || ct[n] == '\t'; n++)
		continue;
	return ct[n] == '\0' || ct[n] == ';';
}

int
github_event_id(const char *hook_id, const char *delivery, char **out)
{
	size_t hlen, dlen;
	char *s;

	*out = NULL;
	if (hook_id == NULL || *hook_id == '\0')
		hook_id = "-";
	if (delivery == NULL || *delivery == '\0')
		return IH_EBODY;
	hlen = strlen(hook_id);
	dlen = strlen(delivery);
	if (hlen > GITHUB_HOOK_ID_MAX || dlen > GITHUB_DELIVERY_MAX ||
	    memchr(hook_id, ':', hlen) != NULL)
		return IH_EBODY;
	s = malloc(hlen + 1 + dlen + 1);
	if (s == NULL)
		return IH_ENOMEM;
	memcpy(s, hook_id, hlen);
	s[hlen] = ':';
	memcpy(s + hlen + 1, delivery, dlen);
	s[hlen + 1 + dlen] = '\0';
	*out = s;
	return IH_OK;
}

static int
github_verify(const struct provider_req *pr, const char **why)
{
	return github_verify_header(request_header(pr->req,
	    "X-Hub-Signature-256"), pr->req->body, pr->req->body_len,
	    pr->cfg->secrets, pr->cfg->secret_len, pr->cfg->nsecrets, why);
}

int
github_check_type(const char *event, const char *zen, const char *hook_id,
    const char *header_hook_id, const char **why)
{
	int is_ping = strcmp(event, "ping") == 0;

	if (!is_ping && zen != NULL && hook_id != NULL) {
		*why = "X-GitHub-Event contradicts the body, which is a ping";
		return IH_EBODY;
	}
	if (is_ping && zen == NULL) {
		*why = "X-GitHub-Event is ping but the body has no zen";
		return IH_EBODY;
	}
	if (is_ping && hook_id != NULL && header_hook_id != NULL &&
	    *header_hook_id != '\0' && strcmp(hook_id, header_hook_id) != 0) {
		*why = "the ping's hook_id differs from X-GitHub-Hook-ID";
		return IH_EBODY;
	}
	return IH_OK;
}

static int
github_identify(const struct provider_req *pr, struct ident *id,
    const char **why)
{
	static const char *const keys[] = { "action", "zen", "hook_id" };
	const char *event;
	const void *doc;
	char *form = NULL, *vals[3] = { NULL, NULL, NULL };
	size_t len;
	int rc = IH_EBODY;

	event = request_header(pr->req, "X-GitHub-Event");
	if (event == NULL || *event == '\0' ||
	    strlen(event) > JSON_VALUE_MAX) {
		*why = "missing X-GitHub-Event header";
		goto out;
	}
	rc = github_event_id(request_header(pr->req, "X-GitHub-Hook-ID"),
	    request_header(pr->req, "X-GitHub-Delivery"), &id->event_id);
	if (rc != IH_OK) {
		*why = "missing or malformed X-GitHub-Delivery or Hook-ID";
		goto out;
	}
	rc = ident_set(&id->event_type, event, strlen(event));
	if (rc != IH_OK)
		goto out;

	doc = pr->req->body;
	len = pr->req->body_len;
	if (github_is_form(pr->req->content_type)) {
		rc = form_field((const char *)pr->req->body,
		    pr->req->body_len, "payload", pr->req->body_len, &form,
		    &len);
		if (rc == IH_ENOMEM)
			goto out;
		if (rc != IH_OK) {
			*why = "form body has no well-formed \"payload\"";
			rc = IH_EBODY;
			goto out;
		}
		doc = form;
	}
	/* A JSON body was read with the object, in one pass (provider.h). */
	rc = form != NULL ? json_fields(pr->json, doc, len, keys, 3, vals) :
	    provider_fields(pr, keys, 3, vals);
	if (rc != IH_OK) {
		*why = "payload is not a JSON object";
		if (rc != IH_ENOMEM)
			rc = IH_EBODY;
		goto out;
	}
	rc = github_check_type(event, vals[1], vals[2],
	    request_header(pr->req, "X-GitHub-Hook-ID"), why);
	if (rc != IH_OK)
		goto out;
	id->subtype = vals[0];
	vals[0] = NULL;
out:
	free(vals[0]);
	free(vals[1]);
	free(vals[2]);
	free(form);
	return rc;
}

/*
 * The events GitHub's documentation names as common.  Adding behaviour
 * for one is a change to its case below.
 */
enum github_type {
	GH_UNKNOWN = 0,
	GH_PING,
	GH_PUSH,
	GH_PULL_REQUEST,
	GH_PULL_REQUEST_REVIEW,
	GH_ISSUES,
	GH_ISSUE_COMMENT,
	GH_CREATE,
	GH_DELETE,
	GH_RELEASE,
	GH_CHECK_RUN,
	GH_CHECK_SUITE,
	GH_INSTALLATION,
	GH_INSTALLATION_REPOSITORIES
};

static const struct dispatch_type github_types[] = {
	{ "ping",			GH_PING },
	{ "push",			GH_PUSH },
	{ "pull_request",		GH_PULL_REQUEST },
	{ "pull_request_review",	GH_PULL_REQUEST_REVIEW },
	{ "issues",			GH_ISSUES },
	{ "issue_comment",		GH_ISSUE_COMMENT },
	{ "create",			GH_CREATE },
	{ "delete",			GH_DELETE },
	{ "release",			GH_RELEASE },
	{ "check_run",			GH_CHECK_RUN },
	{ "check_suite",		GH_CHECK_SUITE },
	{ "installation",		GH_INSTALLATION },
	{ "installation_repositories",	GH_INSTALLATION_REPOSITORIES },
};

static enum github_type
github_type_of(const char *name)
{
	return (enum github_type)dispatch_type_of(github_types,
	    sizeof(github_types) / sizeof(github_types[0]), name);
}

/*
 * The object an event sets: the issue of "issues" events, the pull
 * request of "pull_request" events and the check run of "check_run"
 * events, by its "id", with its "state" ("status" for a check run), at
 * its "updated_at" (a check run has none: "completed_at", else
 * "started_at").  An issue "deleted" leaves a tombstone.  Other events
 * set no object.
 */
static const char *const github_terminal[] = { "completed", "closed",
	NULL };

/* The events that set an object, and how; a table, one row an event. */
static const struct {
	enum github_type	 type;
	const char		*tombstone;	/* the subtype that deletes */
	struct object_rule	 rule;
} github_objects[] = {
	{ GH_ISSUES, "deleted", { .kind = "issue",
	    .id_path = "$.issue.id", .status_path = "$.issue.state",
	    .time_path = "$.issue.updated_at", .object_path = "$.issue",
	    .terminal = github_terminal } },
	{ GH_PULL_REQUEST, NULL, { .kind = "pull_request",
	    .id_path = "$.pull_request.id",
	    .status_path = "$.pull_request.state",
	    .time_path = "$.pull_request.updated_at",
	    .object_path = "$.pull_request", .terminal = github_terminal } },
	{ GH_CHECK_RUN, NULL, { .kind = "check_run",
	    .id_path = "$.check_run.id", .status_path = "$.check_run.status",
	    .time_path = "$.check_run.completed_at",
	    .time_path2 = "$.check_run.started_at",
	    .object_path = "$.check_run", .terminal = github_terminal } },
};

/* The row of github_objects for an event of type name, or -1. */
static long
github_object_of(const char *name)
{
	enum github_type type;
	size_t i;

	if (name == NULL)
		return -1;
	type = github_type_of(name);
	for (i = 0; i < sizeof(github_objects) / sizeof(github_objects[0]); i++)
		if (github_objects[i].type == type)
			return (long)i;
	return -1;
}

static int
github_map_rule(const struct event *ev, struct object_rule *r,
    char kind[OBJECT_KIND_MAX])
{
	long i = github_object_of(ev->event_type);

	(void)kind;
	if (i < 0)
		return 0;
	*r = github_objects[i].rule;
	r->deleted = object_name_is(ev->subtype, github_objects[i].tombstone);
	return 1;
}

/*
 * The rule of the type X-GitHub-Event names, read with the body's own
 * members; the subtype ("action") that deletes applies after.  A form's
 * JSON is not the body's bytes: its object is left to the switch.
 */
static size_t
github_map_paths(const struct provider_req *pr, struct object_rule *r,
    size_t max)
{
	long i;

	if (max == 0 || github_is_form(pr->req->content_type))
		return 0;
	i = github_object_of(request_header(pr->req, "X-GitHub-Event"));
	if (i < 0)
		return 0;
	*r = github_objects[i].rule;
	return 1;
}

static int
github_map(const struct event *ev, struct object_found *f)
{
	return provider_map(&github_provider, ev, f);
}

static int
github_handle(const struct event *ev, struct dispatch_ctx *ctx,
    char *err, size_t errlen)
{
	const char *kind;
	int rc;

	/* The object's current state, in the same transaction. */
	rc = dispatch_object(ctx, ev, github_map, err, errlen);
	if (rc != IH_OK)
		return rc;

	switch (github_type_of(ev->event_type)) {
	case GH_PING:
		kind = "hook_created_or_pinged";
		break;
	case GH_PUSH:
	case GH_CREATE:
	case GH_DELETE:
		kind = "refs_changed";
		break;
	case GH_PULL_REQUEST:
	case GH_PULL_REQUEST_REVIEW:
		kind = "pull_request_activity";
		break;
	case GH_ISSUES:
	case GH_ISSUE_COMMENT:
		kind = "issue_activity";
		break;
	case GH_RELEASE:
		kind = "release_activity";
		break;
	case GH_CHECK_RUN:
	case GH_CHECK_SUITE:
		kind = "check_activity";
		break;
	case GH_INSTALLATION:
	case GH_INSTALLATION_REPOSITORIES:
		kind = "app_installation_changed";
		break;
	case GH_UNKNOWN:
	default:
		kind = "recorded_unknown_type";
		break;
	}
	return dispatch_record(ctx, ev, kind, err, errlen);
}

/* The GUID of an event id "<hook id>:<GUID>" (hook ids have no ':'). */
static const char *
github_guid(const char *event_id)
{
	const char *c = strchr(event_id, ':');

	return c != NULL ? c + 1 : event_id;
}

int
github_repeat_ok(const struct store_first *first,
    const struct event *ev, const char **why)
{
	if (!object_name_is(first->event_type, ev->event_type)) {
		*why = "under another X-GitHub-Event";
		return 0;
	}
	if (!object_name_is(github_guid(first->event_id),
	    github_guid(ev->event_id))) {
		*why = "under a new X-GitHub-Delivery";
		return 0;
	}
	/* The same event for another hook. */
	return 1;
}

/* Enough to verify and name the event again from the stored row. */
static const char *const github_kept[] = {
	"X-Hub-Signature-256",
	"X-GitHub-Event",
	"X-GitHub-Delivery",
	"X-GitHub-Hook-ID",
	"X-GitHub-Hook-Installation-Target-Type",
	"X-GitHub-Hook-Installation-Target-ID",
	NULL
};

/* What github_identify reads of a JSON body, in the one pass. */
static const char *const github_body_keys[] = { "action", "zen",
    "hook_id", NULL };

const struct provider github_provider = {
	.name = "github",
	.secret_var = "IDEMHOOK_GITHUB_SECRET",
	.kept_headers = github_kept,
	.sig_header = "X-Hub-Signature-256",
	.type_unsigned = 1,
	.repeat_ok = github_repeat_ok,
	.hold_replays = 1,
	.verify = github_verify,
	.identify = github_identify,
	.handle = github_handle,
	.map_object = github_map,
	.map_rule = github_map_rule,
	.map_paths = github_map_paths,
	.keep_unusable = 0,
	.body_keys = github_body_keys,
};
