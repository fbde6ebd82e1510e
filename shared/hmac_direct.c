/*
 * hmac_direct.c -- HMAC-SHA256 through OpenSSL's HMAC_CTX and SHA-256
 * functions, without a provider fetch (see the .h).
 */
/* OpenSSL 3.0 deprecates these interfaces; they are used on purpose. */
#define OPENSSL_SUPPRESS_DEPRECATED

#include <limits.h>
#include <stddef.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/objects.h>
#include <openssl/sha.h>

#include "ih.h"
#include "hmac_direct.h"

#ifndef OPENSSL_NO_DEPRECATED_3_0

static int
sha256_init(EVP_MD_CTX *c)
{
	return SHA256_Init(EVP_MD_CTX_get0_md_data(c));
}

static int
sha256_update(EVP_MD_CTX *c, const void *p, size_t n)
{
	return SHA256_Update(EVP_MD_CTX_get0_md_data(c), p, n);
}

static int
sha256_final(EVP_MD_CTX *c, unsigned char *md)
{
	return SHA256_Final(md, EVP_MD_CTX_get0_md_data(c));
}

/*
 * A digest method made by the caller is run as it is (OpenSSL's
 * "legacy" path): no fetch, no provider.
 */
static EVP_MD *
sha256_method(void)
{
	EVP_MD *md;

	md = EVP_MD_meth_new(NID_sha256, NID_undef);
	if (md == NULL)
		return NULL;
	if (EVP_MD_meth_set_result_size(md, SHA256_DIGEST_LENGTH) != 1 ||
	    EVP_MD_meth_set_input_blocksize(md, SHA256_CBLOCK) != 1 ||
	    EVP_MD_meth_set_app_datasize(md, (int)sizeof(SHA256_CTX)) != 1 ||
	    EVP_MD_meth_set_init(md, sha256_init) != 1 ||
	    EVP_MD_meth_set_update(md, sha256_update) != 1 ||
	    EVP_MD_meth_set_final(md, sha256_final) != 1) {
		EVP_MD_meth_free(md);
		return NULL;
	}
	return md;
}

int
hmac_direct_sha256(const void *key, size_t keylen,
    const struct verify_part *parts, size_t nparts,
    unsigned char out[VERIFY_SHA256_LEN])
{
	EVP_MD *md = NULL;
	HMAC_CTX *ctx = NULL;
	unsigned int outlen = 0;
	size_t i;
	int rc = IH_EINVAL;
	static const unsigned char empty[1];

	if (keylen > INT_MAX)
		goto out;
	md = sha256_method();
	ctx = HMAC_CTX_new();
	if (md == NULL || ctx == NULL ||
	    HMAC_Init_ex(ctx, keylen ? key : empty, (int)keylen, md,
	    NULL) != 1)
		goto out;
	for (i = 0; i < nparts; i++)
		if (parts[i].len > 0 &&
		    HMAC_Update(ctx, parts[i].p, parts[i].len) != 1)
			goto out;
	if (HMAC_Final(ctx, out, &outlen) != 1 ||
	    outlen != VERIFY_SHA256_LEN)
		goto out;
	rc = IH_OK;
out:
	/* HMAC_CTX_free() cleanses the keyed states. */
	HMAC_CTX_free(ctx);
	EVP_MD_meth_free(md);
	return rc;
}

#else

int
hmac_direct_sha256(const void *key, size_t keylen,
    const struct verify_part *parts, size_t nparts,
    unsigned char out[VERIFY_SHA256_LEN])
{
	(void)key;
	(void)keylen;
	(void)parts;
	(void)nparts;
	(void)out;
	return IH_ENOTFOUND;
}

#endif
