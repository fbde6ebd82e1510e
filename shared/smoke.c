/* smoke.c -- is an event one of idemhook smoke's (smoke.h)? */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "ih.h"
#include "json.h"
#include "smoke.h"
#include "verify.h"

int
smoke_event(const struct event *ev, int *yes)
{
	static const char *const keys[1] = { SMOKE_MARK };
	struct json *js = NULL;
	char *mark = NULL;
	size_t mlen, ilen;
	int rc;

	*yes = 0;
	if (ev->event_type == NULL || strcmp(ev->event_type, SMOKE_TYPE) != 0 ||
	    ev->payload == NULL || ev->event_id == NULL)
		return IH_OK;
	rc = json_open(&js);
	if (rc != IH_OK)
		goto out;
	rc = json_fields(js, ev->payload, ev->payload_len, keys, 1, &mark);
	if (rc == IH_ENOMEM)
		goto out;
	/* A body that is no JSON object is no smoke event. */
	rc = IH_OK;
	if (mark == NULL)
		goto out;
	mlen = strlen(mark);
	ilen = strlen(ev->event_id);
	*yes = mlen > strlen(SMOKE_ID_PREFIX) &&
	    strncmp(mark, SMOKE_ID_PREFIX, strlen(SMOKE_ID_PREFIX)) == 0 &&
	    ilen >= mlen && strcmp(ev->event_id + ilen - mlen, mark) == 0;
out:
	free(mark);
	json_close(js);
	return rc;
}

int
smoke_wrong_secret(const char *provider, const void *secret,
    size_t secret_len, char *out, size_t outlen)
{
	static const char label[] = "idemhook smoke: a wrong secret";
	struct verify_part part = { label, sizeof(label) - 1 };
	unsigned char mac[VERIFY_SHA256_LEN];
	char b64[48];
	int rc;

	if (outlen < SMOKE_WRONG_MAX)
		return IH_ETOOBIG;
	rc = verify_hmac_sha256(secret, secret_len, &part, 1, mac);
	if (rc != IH_OK)
		goto out;
	if (strcmp(provider, "standard") == 0) {
		/* 24 bytes: 32 characters of base64, no padding. */
		(void)EVP_EncodeBlock((unsigned char *)b64, mac, 24);
		snprintf(out, outlen, "whsec_%s", b64);
	} else if (strcmp(provider, "stripe") == 0) {
		memcpy(out, "whsec_", 6);
		verify_hex_encode(mac, 16, out + 6);
	} else
		verify_hex_encode(mac, 20, out);
out:
	OPENSSL_cleanse(mac, sizeof(mac));
	OPENSSL_cleanse(b64, sizeof(b64));
	return rc;
}
