/* api_github_app.c -- a GitHub App's JWT, RS256 by OpenSSL's EVP. */
#include <stdio.h>
#include <string.h>

#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include "api_github_app.h"
#include "ih.h"

/* The token lives this long, and starts this far back (drift). */
#define JWT_LIFE_S	540
#define JWT_BACK_S	60

/*
 * Base64url without padding (RFC 7515): EVP_EncodeBlock, then the
 * URL-safe alphabet.  Returns the length written, or 0 when out is
 * too small.
 */
static size_t
b64url(const unsigned char *in, size_t n, char *out, size_t outlen)
{
	size_t len, i;

	if (n > 0x3fffffff || outlen < 4 * ((n + 2) / 3) + 1)
		return 0;
	len = (size_t)EVP_EncodeBlock((unsigned char *)out, in, (int)n);
	while (len > 0 && out[len - 1] == '=')
		len--;
	out[len] = '\0';
	for (i = 0; i < len; i++)
		if (out[i] == '+')
			out[i] = '-';
		else if (out[i] == '/')
			out[i] = '_';
	return len;
}

/* The App's ID: digits, or a client ID (letters, digits, '.'). */
static int
id_ok(const char *s)
{
	size_t i;

	for (i = 0; s[i] != '\0'; i++)
		if (!((s[i] >= '0' && s[i] <= '9') ||
		    (s[i] >= 'a' && s[i] <= 'z') ||
		    (s[i] >= 'A' && s[i] <= 'Z') || s[i] == '.'))
			return 0;
	return i > 0 && i < 64;
}

/*
 * The pass phrase of an encrypted key: none.  Without this callback
 * OpenSSL asks for one on the terminal, which would hold a cron job or
 * wait for whoever runs the command; the key must be stored unencrypted
 * (owner-only, as idemhook check audits it).
 */
static int
no_pass(char *buf, int size, int rwflag, void *u)
{
	(void)buf;
	(void)size;
	(void)rwflag;
	*(int *)u = 1;
	return -1;
}

static EVP_PKEY *
key_read(const char *path, char *err, size_t errlen)
{
	EVP_PKEY *k = NULL;
	BIO *b;
	int asked = 0;

	b = BIO_new_file(path, "r");
	if (b != NULL)
		k = PEM_read_bio_PrivateKey(b, NULL, no_pass, &asked);
	BIO_free(b);
	if (k == NULL && asked)
		snprintf(err, errlen, "IDEMHOOK_GITHUB_APP_KEY_FILE: %s is "
		    "encrypted, and no pass phrase is asked for: store the key "
		    "unencrypted, owner-only (openssl pkey -in %s -out NEW; "
		    "chmod 600 NEW)", path, path);
	else if (k == NULL)
		snprintf(err, errlen, "IDEMHOOK_GITHUB_APP_KEY_FILE: cannot "
		    "read a private key (PEM) from %s", path);
	else if (EVP_PKEY_base_id(k) != EVP_PKEY_RSA) {
		snprintf(err, errlen, "IDEMHOOK_GITHUB_APP_KEY_FILE: %s is "
		    "not an RSA key, as GitHub Apps' keys are", path);
		EVP_PKEY_free(k);
		k = NULL;
	}
	return k;
}

int
api_github_app_auth(struct cli *c, int64_t now_s, char *out, size_t outlen,
    char *err, size_t errlen)
{
	static const char head[] = "{\"alg\":\"RS256\",\"typ\":\"JWT\"}";
	const char *id = cli_setting(c, "IDEMHOOK_GITHUB_APP_ID");
	const char *path = cli_setting(c, "IDEMHOOK_GITHUB_APP_KEY_FILE");
	unsigned char sig[1024];
	char claims[160];
	size_t n, len, siglen = sizeof(sig);
	EVP_MD_CTX *md = NULL;
	EVP_PKEY *k = NULL;
	int rc = IH_ECONFIG, m;

	if (id == NULL || !id_ok(id) || path == NULL || path[0] != '/') {
		snprintf(err, errlen, "the App hook needs "
		    "IDEMHOOK_GITHUB_APP_ID (the App's ID) and "
		    "IDEMHOOK_GITHUB_APP_KEY_FILE (the "
		    "absolute path of its private key)");
		return IH_ECONFIG;
	}
	m = snprintf(claims, sizeof(claims), "{\"iat\":%lld,\"exp\":%lld,"
	    "\"iss\":\"%s\"}", (long long)(now_s - JWT_BACK_S),
	    (long long)(now_s + JWT_LIFE_S), id);
	if (m < 0 || (size_t)m >= sizeof(claims))
		return IH_ETOOBIG;
	n = (size_t)snprintf(out, outlen, "Bearer ");
	len = b64url((const unsigned char *)head, sizeof(head) - 1, out + n,
	    outlen - n);
	if (len == 0)
		goto big;
	n += len;
	if (n + 1 >= outlen)
		goto big;
	out[n++] = '.';
	len = b64url((const unsigned char *)claims, (size_t)m, out + n,
	    outlen - n);
	if (len == 0)
		goto big;
	n += len;
	k = key_read(path, err, errlen);
	if (k == NULL)
		goto out;
	/* The signature covers "header.claims", the bytes after "Bearer ". */
	md = EVP_MD_CTX_new();
	rc = IH_ENOMEM;
	if (md == NULL || EVP_DigestSignInit(md, NULL, EVP_sha256(), NULL,
	    k) != 1 || EVP_DigestSign(md, sig, &siglen, (const unsigned char *)
	    out + 7, n - 7) != 1) {
		snprintf(err, errlen, "IDEMHOOK_GITHUB_APP_KEY_FILE: cannot "
		    "sign with the key");
		rc = IH_ECONFIG;
		goto out;
	}
	if (n + 1 >= outlen)
		goto big;
	out[n++] = '.';
	len = b64url(sig, siglen, out + n, outlen - n);
	if (len == 0)
		goto big;
	rc = IH_OK;
	goto out;
big:
	snprintf(err, errlen, "the App's token is over %zu bytes", outlen);
	rc = IH_ETOOBIG;
out:
	OPENSSL_cleanse(sig, sizeof(sig));
	EVP_MD_CTX_free(md);
	EVP_PKEY_free(k);
	if (rc != IH_OK)
		OPENSSL_cleanse(out, outlen);
	return rc;
}
