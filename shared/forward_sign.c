/* forward_sign.c -- each provider's signature, made afresh per attempt. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "forward_sign.h"
#include "headers.h"
#include "ih.h"
#include "verify.h"

/* The headers that sign or authenticate: never passed on re-signed. */
static const char *const secret_headers[] = {
	"Stripe-Signature", "X-Hub-Signature-256", "X-Hub-Signature",
	"X-Shopify-Hmac-Sha256", "webhook-id", "webhook-timestamp",
	"webhook-signature", "asaas-access-token",
};

int
forward_sign_is_secret_header(const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < sizeof(secret_headers) / sizeof(secret_headers[0]);
	    i++)
		if (strlen(secret_headers[i]) == len &&
		    strncasecmp(secret_headers[i], name, len) == 0)
			return 1;
	return 0;
}

/* Appends one "Name: value\n" line to out at *used. */
static int
add(char *out, size_t cap, size_t *used, const char *name, size_t nlen,
    const char *value, size_t vlen)
{
	size_t i;

	for (i = 0; i < vlen; i++)
		if ((unsigned char)value[i] < 0x20 && value[i] != '\t')
			return IH_EINVAL;
	for (i = 0; i < nlen; i++)
		if ((unsigned char)name[i] <= 0x20 || name[i] == ':')
			return IH_EINVAL;
	if (nlen == 0 || *used + nlen + vlen + 4 > cap)
		return nlen == 0 ? IH_EINVAL : IH_ETOOBIG;
	memcpy(out + *used, name, nlen);
	memcpy(out + *used + nlen, ": ", 2);
	memcpy(out + *used + nlen + 2, value, vlen);
	out[*used + nlen + 2 + vlen] = '\n';
	*used += nlen + vlen + 3;
	out[*used] = '\0';
	return IH_OK;
}

static int
add_str(char *out, size_t cap, size_t *used, const char *name,
    const char *value)
{
	return add(out, cap, used, name, strlen(name), value, strlen(value));
}

int
forward_sign_sw_key(const char *secret, size_t len, unsigned char *key,
    size_t *keylen)
{
	if (secret == NULL || len <= 6 || strncmp(secret, "whsec_", 6) != 0)
		return IH_EINVAL;
	if (verify_b64_decode(secret + 6, len - 6, key, FORWARD_SW_KEY_MAX,
	    keylen) != IH_OK || *keylen == 0)
		return IH_EINVAL;
	return IH_OK;
}

static void
b64(const unsigned char *mac, char *out)
{
	EVP_EncodeBlock((unsigned char *)out, mac, VERIFY_SHA256_LEN);
}

/* Standard Webhooks: v1,base64(HMAC(key, "id.ts.body")). */
static int
sign_standard(const struct forward_sign_in *in, const char *ts, char *out,
    size_t cap, size_t *used)
{
	unsigned char key[FORWARD_SW_KEY_MAX], mac[VERIFY_SHA256_LEN];
	char sig[3 + 4 * ((VERIFY_SHA256_LEN + 2) / 3) + 1];
	struct verify_part parts[5];
	size_t keylen = 0;
	int rc;

	rc = forward_sign_sw_key(in->secret, in->secret_len, key, &keylen);
	if (rc != IH_OK)
		goto out;
	parts[0].p = in->event_id;
	parts[0].len = strlen(in->event_id);
	parts[1].p = ".";
	parts[1].len = 1;
	parts[2].p = ts;
	parts[2].len = strlen(ts);
	parts[3].p = ".";
	parts[3].len = 1;
	parts[4].p = in->body;
	parts[4].len = in->body_len;
	rc = verify_hmac_sha256(key, keylen, parts, 5, mac);
	if (rc != IH_OK)
		goto out;
	memcpy(sig, "v1,", 3);
	b64(mac, sig + 3);
	rc = add_str(out, cap, used, "webhook-id", in->event_id);
	if (rc == IH_OK)
		rc = add_str(out, cap, used, "webhook-timestamp", ts);
	if (rc == IH_OK)
		rc = add_str(out, cap, used, "webhook-signature", sig);
out:
	OPENSSL_cleanse(key, sizeof(key));
	return rc;
}

/* The provider's own scheme, over the raw body. */
static int
sign_provider(const struct forward_sign_in *in, const char *ts, char *out,
    size_t cap, size_t *used)
{
	unsigned char mac[VERIFY_SHA256_LEN];
	char hex[2 * VERIFY_SHA256_LEN + 1], line[160];
	struct verify_part parts[3];
	const char *p = in->provider;
	int rc;

	if (strcmp(p, "standard") == 0)
		return sign_standard(in, ts, out, cap, used);
	if (strcmp(p, "asaas") == 0)
		return add(out, cap, used, "asaas-access-token", 18,
		    in->secret, in->secret_len);
	parts[0].p = ts;
	parts[0].len = strlen(ts);
	parts[1].p = ".";
	parts[1].len = 1;
	parts[2].p = in->body;
	parts[2].len = in->body_len;
	if (strcmp(p, "stripe") == 0)
		rc = verify_hmac_sha256(in->secret, in->secret_len, parts, 3,
		    mac);
	else if (strcmp(p, "github") == 0 || strcmp(p, "shopify") == 0)
		rc = verify_hmac_sha256(in->secret, in->secret_len,
		    &parts[2], 1, mac);
	else
		return IH_EINVAL;
	if (rc != IH_OK)
		return rc;
	if (strcmp(p, "shopify") == 0) {
		b64(mac, line);
		return add_str(out, cap, used, "X-Shopify-Hmac-Sha256", line);
	}
	verify_hex_encode(mac, sizeof(mac), hex);
	if (strcmp(p, "github") == 0) {
		snprintf(line, sizeof(line), "sha256=%s", hex);
		return add_str(out, cap, used, "X-Hub-Signature-256", line);
	}
	snprintf(line, sizeof(line), "t=%s,v1=%s", ts, hex);
	return add_str(out, cap, used, "Stripe-Signature", line);
}

int
forward_sign_headers(const struct forward_sign_in *in, char *out, size_t cap)
{
	struct headers_field f;
	const char *pos = in->kept != NULL ? in->kept : "";
	char ts[32];
	size_t used = 0;
	int rc;

	if (cap == 0)
		return IH_ETOOBIG;
	out[0] = '\0';
	snprintf(ts, sizeof(ts), "%lld", (long long)in->now);
	rc = add_str(out, cap, &used, "Content-Type", "application/json");
	if (rc == IH_OK && in->key != NULL)
		rc = add_str(out, cap, &used, "Idempotency-Key", in->key);
	while (rc == IH_OK && headers_next(&pos, &f)) {
		if (!f.valued)
			continue;
		if (in->mode != FORWARD_SIGN_AS_RECEIVED &&
		    forward_sign_is_secret_header(f.name, f.name_len))
			continue;
		rc = add(out, cap, &used, f.name, f.name_len, f.value,
		    f.value_len);
	}
	if (rc != IH_OK || in->mode == FORWARD_SIGN_AS_RECEIVED)
		return rc;
	if (in->secret == NULL)
		return IH_EINVAL;
	if (in->mode == FORWARD_SIGN_STANDARD)
		return sign_standard(in, ts, out, cap, &used);
	return sign_provider(in, ts, out, cap, &used);
}
