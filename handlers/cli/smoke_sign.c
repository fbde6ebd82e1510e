/*
 * smoke_sign.c -- idemhook smoke's test events, signed as each provider
 * signs (smoke_sign.h).  The receivers' own checks (stripe.h, github.h,
 * ...) verify the result before it is sent.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include "asaas.h"
#include "github.h"
#include "ih.h"
#include "providers.h"
#include "shopify.h"
#include "smoke.h"
#include "smoke_sign.h"
#include "standard.h"
#include "stripe.h"
#include "verify.h"

/* Base64 of a MAC: 44 characters and a NUL. */
#define B64_MAC_MAX	48

static int
random_hex(size_t n, char *out, size_t outlen)
{
	unsigned char raw[32];

	if (n > sizeof(raw) || 2 * n + 1 > outlen ||
	    RAND_bytes(raw, (int)n) != 1)
		return IH_EIO;
	verify_hex_encode(raw, n, out);
	return IH_OK;
}

/* The provider's JSON body for m, with its id, type and the mark. */
static int
make_body(struct smoke_msg *m, const struct provider *p, time_t now)
{
	char iso[32], sql[32], ver[SMOKE_MSG_LINE_MAX];
	struct tm tm;
	int n;

	if (gmtime_r(&now, &tm) == NULL ||
	    strftime(iso, sizeof(iso), "%Y-%m-%dT%H:%M:%SZ", &tm) == 0 ||
	    strftime(sql, sizeof(sql), "%Y-%m-%d %H:%M:%S", &tm) == 0)
		return IH_EINVAL;
	/* A version the body carries (Stripe's api_version) is signed. */
	ver[0] = '\0';
	if (m->version != NULL && p->version_key != NULL)
		snprintf(ver, sizeof(ver), "\"%s\":\"%s\",", p->version_key,
		    m->version);
	if (strcmp(m->provider, "stripe") == 0)
		n = snprintf(m->body, sizeof(m->body), "{\"id\":\"%s\","
		    "\"object\":\"event\",\"type\":\"" SMOKE_TYPE "\","
		    "\"created\":%lld,\"livemode\":false,%s\"data\":"
		    "{\"object\":{\"object\":\"" SMOKE_MARK "\"}},"
		    "\"" SMOKE_MARK "\":\"%s\"}", m->id, (long long)now, ver,
		    m->id);
	else if (strcmp(m->provider, "asaas") == 0)
		n = snprintf(m->body, sizeof(m->body), "{\"id\":\"%s\","
		    "\"event\":\"" SMOKE_TYPE "\",\"dateCreated\":\"%s\","
		    "\"" SMOKE_MARK "\":\"%s\"}", m->id, sql, m->id);
	else if (strcmp(m->provider, "standard") == 0)
		n = snprintf(m->body, sizeof(m->body), "{\"type\":\""
		    SMOKE_TYPE "\",\"timestamp\":\"%s\",\"data\":{},"
		    "\"" SMOKE_MARK "\":\"%s\"}", iso, m->id);
	else
		/* GitHub and Shopify: the type and id are headers. */
		n = snprintf(m->body, sizeof(m->body), "{\"" SMOKE_MARK
		    "\":\"%s\",\"type\":\"" SMOKE_TYPE "\",%s"
		    "\"created_at\":\"%s\"}", m->id, ver, iso);
	if (n < 0 || (size_t)n >= sizeof(m->body))
		return IH_ETOOBIG;
	m->body_len = (size_t)n;
	return IH_OK;
}

int
smoke_msg_new(struct smoke_msg *m, const char *provider, const char *version,
    time_t now, char *err, size_t errlen)
{
	static const char *const known[] = { "stripe", "github", "shopify",
	    "asaas", "standard", NULL };
	const struct provider *p;
	char hex[33];
	size_t i;
	int rc;

	memset(m, 0, sizeof(*m));
	p = providers_find(provider);
	for (i = 0; known[i] != NULL; i++)
		if (strcmp(known[i], provider) == 0)
			break;
	if (p == NULL || known[i] == NULL) {
		snprintf(err, errlen, "no smoke test for a provider called %s",
		    provider);
		return IH_EINVAL;
	}
	m->provider = p->name;
	m->version = version;
	rc = random_hex(16, hex, sizeof(hex));
	if (rc != IH_OK) {
		snprintf(err, errlen, "no random bytes for the event's id");
		return rc;
	}
	snprintf(m->id, sizeof(m->id), SMOKE_ID_PREFIX "%s", hex);
	rc = make_body(m, p, now);
	if (rc != IH_OK)
		snprintf(err, errlen, "cannot make the test event's body");
	return rc;
}

/* The HMAC of the parts, as hex or base64 into out. */
static int
mac_text(const void *key, size_t keylen, const struct verify_part *parts,
    size_t nparts, int b64, char *out, size_t outlen)
{
	unsigned char mac[VERIFY_SHA256_LEN];
	int rc;

	if (outlen < (b64 ? B64_MAC_MAX : 2 * VERIFY_SHA256_LEN + 1))
		return IH_ETOOBIG;
	rc = verify_hmac_sha256(key, keylen, parts, nparts, mac);
	if (rc == IH_OK && b64)
		(void)EVP_EncodeBlock((unsigned char *)out, mac, sizeof(mac));
	else if (rc == IH_OK)
		verify_hex_encode(mac, sizeof(mac), out);
	OPENSSL_cleanse(mac, sizeof(mac));
	return rc;
}

/* Appends "name: value" to m's headers. */
static int
add_header(struct smoke_msg *m, size_t *n, const char *name,
    const char *value)
{
	int w;

	if (*n >= SMOKE_MSG_HEADERS)
		return IH_ETOOBIG;
	w = snprintf(m->line[*n], sizeof(m->line[*n]), "%s: %s", name, value);
	if (w < 0 || (size_t)w >= sizeof(m->line[*n]))
		return IH_ETOOBIG;
	m->headers[*n] = m->line[*n];
	(*n)++;
	m->headers[*n] = NULL;
	return IH_OK;
}

/* The signature value of m's provider into m->sig. */
static int
sign_value(struct smoke_msg *m, const char *secret, size_t secret_len,
    const char *secret_var, char *err, size_t errlen)
{
	unsigned char key[STANDARD_KEY_MAX];
	char mac[B64_MAC_MAX + 2 * VERIFY_SHA256_LEN];
	struct verify_part parts[5];
	size_t keylen = 0;
	int rc = IH_OK;

	parts[0].p = m->body;
	parts[0].len = m->body_len;
	if (strcmp(m->provider, "stripe") == 0) {
		parts[0].p = m->ts;
		parts[0].len = strlen(m->ts);
		parts[1].p = ".";
		parts[1].len = 1;
		parts[2].p = m->body;
		parts[2].len = m->body_len;
		rc = mac_text(secret, secret_len, parts, 3, 0, mac,
		    sizeof(mac));
		if (rc == IH_OK)
			snprintf(m->sig, sizeof(m->sig), "t=%s,v1=%s", m->ts,
			    mac);
	} else if (strcmp(m->provider, "github") == 0) {
		rc = mac_text(secret, secret_len, parts, 1, 0, mac,
		    sizeof(mac));
		if (rc == IH_OK)
			snprintf(m->sig, sizeof(m->sig), "sha256=%s", mac);
	} else if (strcmp(m->provider, "shopify") == 0) {
		rc = mac_text(secret, secret_len, parts, 1, 1, m->sig,
		    sizeof(m->sig));
	} else if (strcmp(m->provider, "standard") == 0) {
		if (standard_decode_secret(secret, secret_len, key,
		    sizeof(key), &keylen) != IH_OK) {
			snprintf(err, errlen, "%s is not \"whsec_\" and "
			    "base64, as a Standard Webhooks secret is",
			    secret_var);
			rc = IH_ECONFIG;
			goto out;
		}
		parts[0].p = m->id;
		parts[0].len = strlen(m->id);
		parts[1].p = ".";
		parts[1].len = 1;
		parts[2].p = m->ts;
		parts[2].len = strlen(m->ts);
		parts[3].p = ".";
		parts[3].len = 1;
		parts[4].p = m->body;
		parts[4].len = m->body_len;
		rc = mac_text(key, keylen, parts, 5, 1, mac, sizeof(mac));
		if (rc == IH_OK)
			snprintf(m->sig, sizeof(m->sig), "v1,%s", mac);
	} else {
		/* Asaas signs nothing: the token itself authenticates. */
		m->auth_name = "asaas-access-token";
		m->auth_value = secret;
	}
	if (rc != IH_OK && rc != IH_ECONFIG)
		snprintf(err, errlen, "cannot compute the signature");
out:
	OPENSSL_cleanse(key, sizeof(key));
	OPENSSL_cleanse(mac, sizeof(mac));
	return rc;
}

int
smoke_msg_sign(struct smoke_msg *m, const char *secret, size_t secret_len,
    const char *secret_var, time_t now, char *err, size_t errlen)
{
	const struct provider *p = providers_find(m->provider);
	size_t n = 0;
	int rc;

	smoke_msg_clear(m);
	snprintf(m->ts, sizeof(m->ts), "%lld", (long long)now);
	rc = sign_value(m, secret, secret_len, secret_var, err, errlen);
	if (rc != IH_OK)
		return rc;
	rc = add_header(m, &n, "Content-Type", "application/json");
	if (rc == IH_OK)
		rc = add_header(m, &n, SMOKE_HEADER, "1");
	if (rc == IH_OK && strcmp(m->provider, "stripe") == 0)
		rc = add_header(m, &n, "Stripe-Signature", m->sig);
	if (rc == IH_OK && strcmp(m->provider, "github") == 0) {
		rc = add_header(m, &n, "X-Hub-Signature-256", m->sig);
		if (rc == IH_OK)
			rc = add_header(m, &n, "X-GitHub-Event", SMOKE_TYPE);
		if (rc == IH_OK)
			rc = add_header(m, &n, "X-GitHub-Delivery", m->id);
	}
	if (rc == IH_OK && strcmp(m->provider, "shopify") == 0) {
		rc = add_header(m, &n, "X-Shopify-Hmac-Sha256", m->sig);
		if (rc == IH_OK)
			rc = add_header(m, &n, "X-Shopify-Topic", SMOKE_TYPE);
		if (rc == IH_OK)
			rc = add_header(m, &n, "X-Shopify-Webhook-Id", m->id);
		if (rc == IH_OK)
			rc = add_header(m, &n, "X-Shopify-Event-Id", m->id);
	}
	if (rc == IH_OK && strcmp(m->provider, "standard") == 0) {
		rc = add_header(m, &n, "webhook-id", m->id);
		if (rc == IH_OK)
			rc = add_header(m, &n, "webhook-timestamp", m->ts);
		if (rc == IH_OK)
			rc = add_header(m, &n, "webhook-signature", m->sig);
	}
	/* An unsigned version header (Shopify's) only labels the event. */
	if (rc == IH_OK && m->version != NULL && p != NULL &&
	    p->version_header != NULL)
		rc = add_header(m, &n, p->version_header, m->version);
	if (rc != IH_OK)
		snprintf(err, errlen, "cannot build the request's headers");
	return rc;
}

int
smoke_msg_verify(const struct smoke_msg *m, const struct config *cfg,
    time_t now, const char **why)
{
	char *const *s = cfg->secrets;
	const size_t *sl = cfg->secret_len;
	size_t n = cfg->nsecrets;

	*why = "no such provider";
	if (strcmp(m->provider, "stripe") == 0)
		return stripe_verify_header(m->sig, m->body, m->body_len, s,
		    sl, n, now, cfg->tolerance_s, 1, why);
	if (strcmp(m->provider, "github") == 0)
		return github_verify_header(m->sig, m->body, m->body_len, s,
		    sl, n, why);
	if (strcmp(m->provider, "shopify") == 0)
		return shopify_verify_header(m->sig, m->body, m->body_len, s,
		    sl, n, why);
	if (strcmp(m->provider, "standard") == 0)
		return standard_verify_headers(m->id, m->ts, m->sig, m->body,
		    m->body_len, s, sl, n, now, cfg->tolerance_s, 1, why);
	if (strcmp(m->provider, "asaas") == 0)
		return asaas_verify_token(m->auth_value, s, sl, n, why);
	return IH_EAUTH;
}

void
smoke_msg_clear(struct smoke_msg *m)
{
	OPENSSL_cleanse(m->sig, sizeof(m->sig));
	OPENSSL_cleanse(m->line, sizeof(m->line));
	memset(m->headers, 0, sizeof(m->headers));
	m->auth_name = NULL;
	m->auth_value = NULL;
}
