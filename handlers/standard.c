/*
 * standard.c -- the Standard Webhooks endpoint, for any sender that
 * follows the specification (Svix and others).
 *
 * webhook-id: <id>	webhook-timestamp: <unix seconds>
 * webhook-signature: v1,<base64> [v1,<base64> ...]
 * The MAC is HMAC-SHA256 over "<id>.<timestamp>.<raw body>", keyed with
 * the secret's decoded bytes: the secret is "whsec_" and base64, and is
 * accepted without the prefix too.  Any v1 matching any configured
 * secret accepts (senders sign once per live secret while rotating);
 * other versions, such as ed25519's v1a, are skipped, never accepted.
 * The timestamp must lie within the tolerance in both directions.  The
 * specification forbids '.' in the id, which would make the signed
 * content ambiguous, so such an id is refused.
 *
 * The event id is webhook-id, the same on every retry; the type is the
 * body's "type".
 */
#include <string.h>

#include <openssl/crypto.h>

#include "dispatch.h"
#include "ih.h"
#include "log.h"
#include "object.h"
#include "provider.h"
#include "serve.h"
#include "standard.h"
#include "verify.h"

#define STANDARD_PREFIX		"whsec_"
#define STANDARD_PREFIX_LEN	6

int
standard_parse_header(const char *h, size_t len, struct standard_sig *sig)
{
	const char *p = h, *end = h + len, *item, *sp, *comma;

	memset(sig, 0, sizeof(*sig));
	while (p < end) {
		item = p;
		sp = memchr(p, ' ', (size_t)(end - p));
		if (sp == NULL)
			sp = end;
		p = sp < end ? sp + 1 : end;
		comma = memchr(item, ',', (size_t)(sp - item));
		if (comma == NULL || comma - item != 2 || item[0] != 'v' ||
		    item[1] != '1')
			continue;
		if (sig->nv1 == STANDARD_MAX_V1)
			return IH_EINVAL;
		/* A malformed v1 can never match; skip it. */
		if (verify_b64_decode(comma + 1, (size_t)(sp - comma - 1),
		    sig->v1[sig->nv1].mac, VERIFY_SHA256_LEN,
		    &sig->v1[sig->nv1].len) == IH_OK &&
		    sig->v1[sig->nv1].len == VERIFY_SHA256_LEN)
			sig->nv1++;
	}
	return IH_OK;
}

int
standard_decode_secret(const char *s, size_t len, unsigned char *out,
    size_t cap, size_t *outlen)
{
	if (len >= STANDARD_PREFIX_LEN &&
	    memcmp(s, STANDARD_PREFIX, STANDARD_PREFIX_LEN) == 0) {
		s += STANDARD_PREFIX_LEN;
		len -= STANDARD_PREFIX_LEN;
	}
	return verify_b64_decode(s, len, out, cap, outlen);
}

int
standard_verify_headers(const char *id, const char *ts, const char *sigs,
    const void *body, size_t len, char *const *secrets,
    const size_t *secret_len, size_t nsecrets, time_t now, long tolerance,
    int check_time, const char **why)
{
	unsigned char keys[CONFIG_MAX_SECRETS][STANDARD_KEY_MAX];
	char *keyp[CONFIG_MAX_SECRETS];
	size_t keylen[CONFIG_MAX_SECRETS], nkeys = 0, i, idlen;
	struct standard_sig sig;
	struct verify_part parts[5];
	long long t;
	int rc = IH_EAUTH;

	if (id == NULL || ts == NULL || sigs == NULL) {
		*why = "missing webhook-id, webhook-timestamp or "
		    "webhook-signature header";
		goto out;
	}
	idlen = strlen(id);
	if (idlen == 0 || idlen > STANDARD_ID_MAX ||
	    memchr(id, '.', idlen) != NULL) {
		*why = "malformed webhook-id header";
		goto out;
	}
	if (standard_parse_header(sigs, strlen(sigs), &sig) != IH_OK) {
		*why = "malformed webhook-signature header";
		goto out;
	}
	if (sig.nv1 == 0) {
		*why = "no v1 signature in webhook-signature";
		goto out;
	}
	for (i = 0; i < nsecrets && i < CONFIG_MAX_SECRETS; i++) {
		if (standard_decode_secret(secrets[i], secret_len[i],
		    keys[nkeys], sizeof(keys[nkeys]), &keylen[nkeys]) != IH_OK)
			continue;
		keyp[nkeys] = (char *)keys[nkeys];
		nkeys++;
	}
	if (nkeys == 0) {
		*why = "no configured secret is whsec_ and base64";
		goto out;
	}
	parts[0].p = id;
	parts[0].len = idlen;
	parts[1].p = ".";
	parts[1].len = 1;
	parts[2].p = ts;
	parts[2].len = strlen(ts);
	parts[3].p = ".";
	parts[3].len = 1;
	parts[4].p = body;
	parts[4].len = len;
	if (verify_any(keyp, keylen, nkeys, parts, 5, sig.v1, sig.nv1) !=
	    IH_OK) {
		*why = "no v1 signature matches a configured secret";
		goto out;
	}
	rc = verify_timestamp(ts, parts[2].len, now, tolerance, &t);
	if (rc == IH_EINVAL) {
		*why = "malformed webhook-timestamp header";
		rc = IH_EAUTH;
		goto out;
	}
	if (rc != IH_OK && check_time) {
		*why = "timestamp outside tolerance";
		rc = IH_ESTALE;
		goto out;
	}
	rc = IH_OK;
out:
	OPENSSL_cleanse(keys, sizeof(keys));
	return rc;
}

static int
standard_verify(const struct provider_req *pr, const char **why)
{
	return standard_verify_headers(request_header(pr->req, "webhook-id"),
	    request_header(pr->req, "webhook-timestamp"),
	    request_header(pr->req, "webhook-signature"), pr->req->body,
	    pr->req->body_len, pr->cfg->secrets, pr->cfg->secret_len,
	    pr->cfg->nsecrets, pr->now, pr->cfg->tolerance_s,
	    pr->check_time, why);
}

static int
standard_identify(const struct provider_req *pr, struct ident *id,
    const char **why)
{
	const char *wid;
	int rc;

	/* verify has checked that webhook-id is there and short. */
	wid = request_header(pr->req, "webhook-id");
	if (wid == NULL || *wid == '\0') {
		*why = "missing webhook-id header";
		return IH_EBODY;
	}
	rc = ident_set(&id->event_id, wid, strlen(wid));
	if (rc != IH_OK)
		return rc;
	return ident_from_body(pr, NULL, "type", id, why);
}

/*
 * The specification names no event types: each sender has its own.
 * Name a sender's types here and give them cases below.
 */
enum standard_type {
	SW_UNKNOWN = 0
};

static const struct dispatch_type standard_types[] = {
	{ NULL,	SW_UNKNOWN }	/* end */
};

static enum standard_type
standard_type_of(const char *name)
{
	return (enum standard_type)dispatch_type_of(standard_types,
	    sizeof(standard_types) / sizeof(standard_types[0]), name);
}

/*
 * The object an event sets: the payload's "data", by its "id", of the
 * kind named by the type's first segment ("invoice" for "invoice.paid"),
 * with its "status", at the payload's "timestamp" (never the
 * webhook-timestamp header, which is the attempt's time).  A type
 * ending in ".deleted" leaves a tombstone.
 */
static const char *const standard_terminal[] = { "canceled", "cancelled",
	"refunded", NULL };

static const struct object_rule standard_rule = {
	.id_path = "$.data.id",
	.status_path = "$.data.status",
	.time_path = "$.timestamp",
	.object_path = "$.data",
	.terminal = standard_terminal
};

static int
standard_map_rule(const struct event *ev, struct object_rule *r,
    char kind[OBJECT_KIND_MAX])
{
	size_t n;

	n = strcspn(ev->event_type, ".");
	if (n == 0 || ev->event_type[n] != '.' || n >= OBJECT_KIND_MAX)
		return 0;
	memcpy(kind, ev->event_type, n);
	kind[n] = '\0';
	*r = standard_rule;
	r->kind = kind;
	r->deleted = object_suffix(ev->event_type, ".deleted");
	return 1;
}

/*
 * The paths are the same for every type, which names only the kind and
 * the tombstone: both apply after the one pass.
 */
static size_t
standard_map_paths(const struct provider_req *pr, struct object_rule *r,
    size_t max)
{
	(void)pr;
	if (max == 0)
		return 0;
	*r = standard_rule;
	return 1;
}

static int
standard_map(const struct event *ev, struct object_found *f)
{
	return provider_map(&standard_provider, ev, f);
}

static int
standard_handle(const struct event *ev, struct dispatch_ctx *ctx,
    char *err, size_t errlen)
{
	const char *kind;
	int rc;

	/* The object's current state, in the same transaction. */
	rc = dispatch_object(ctx, ev, standard_map, err, errlen);
	if (rc != IH_OK)
		return rc;

	switch (standard_type_of(ev->event_type)) {
	case SW_UNKNOWN:
	default:
		kind = "recorded_unknown_type";
		break;
	}
	return dispatch_record(ctx, ev, kind, err, errlen);
}

static const char *const standard_kept[] = {
	"webhook-id",
	"webhook-timestamp",
	"webhook-signature",
	NULL
};

/* What standard_identify reads, in the one pass with the object. */
static const char *const standard_body_keys[] = { "type", NULL };

const struct provider standard_provider = {
	.name = "standard",
	.secret_var = "IDEMHOOK_STANDARD_SECRET",
	.kept_headers = standard_kept,
	.sig_header = "webhook-signature",
	.verify = standard_verify,
	.identify = standard_identify,
	.handle = standard_handle,
	.map_object = standard_map,
	.map_rule = standard_map_rule,
	.map_paths = standard_map_paths,
	.keep_unusable = 0,
	.body_keys = standard_body_keys,
};
