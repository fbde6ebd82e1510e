/*
 * smoke_sign.h -- the deliveries of idemhook smoke (cli_smoke.c): one
 * test event of a provider (smoke.h), its body, and the headers that
 * sign it in that provider's own scheme, with the HMAC and encodings of
 * verify.h (OpenSSL):
 *
 *   stripe    Stripe-Signature: t=<now>,v1=<hex HMAC of "t.body">
 *   github    X-Hub-Signature-256: sha256=<hex HMAC of the body>,
 *             X-GitHub-Event, X-GitHub-Delivery
 *   shopify   X-Shopify-Hmac-Sha256: <base64 HMAC of the body>,
 *             X-Shopify-Topic, X-Shopify-Webhook-Id, X-Shopify-Event-Id
 *   asaas     asaas-access-token: the token itself (smoke_msg.auth_*)
 *   standard  webhook-id, webhook-timestamp, webhook-signature:
 *             v1,<base64 HMAC of "id.ts.body" keyed with the decoded
 *             whsec_ secret>
 *
 * Each request also carries SMOKE_HEADER (smoke.h); the refused copy is
 * signed with smoke_wrong_secret(), which the receiver checks before it
 * leaves that copy out of the bad-signature alarm's count.
 * A version the settings expect (IDEMHOOK_<PROVIDER>_API_VERSIONS) is
 * put where the provider carries it, so that the event is processed,
 * not held.  Every struct smoke_msg is the caller's, fixed in size; the
 * only secret it refers to is auth_value, borrowed, never copied.
 * Messages in err name settings, never a secret's value.
 */
#ifndef IH_SMOKE_SIGN_H
#define IH_SMOKE_SIGN_H

#include <stddef.h>
#include <time.h>

#include "config.h"

#define SMOKE_MSG_ID_MAX	64
#define SMOKE_MSG_BODY_MAX	1024
#define SMOKE_MSG_HEADERS	8
#define SMOKE_MSG_LINE_MAX	256
/* A wrong secret of any provider's shape, with its NUL. */

struct smoke_msg {
	const char	*provider;
	const char	*version;	/* or NULL */
	char		 id[SMOKE_MSG_ID_MAX];	/* idemhook_smoke_<hex> */
	char		 body[SMOKE_MSG_BODY_MAX];
	size_t		 body_len;
	/* Filled by smoke_msg_sign(). */
	char		 ts[24];
	char		 sig[SMOKE_MSG_LINE_MAX];
	char		 line[SMOKE_MSG_HEADERS][SMOKE_MSG_LINE_MAX];
	const char	*headers[SMOKE_MSG_HEADERS + 1];
	const char	*auth_name;	/* or NULL */
	const char	*auth_value;	/* borrowed: the token */
};

/*
 * Makes a new test event of provider (a new random id) at now into m,
 * with version (NULL: none) where the provider carries its version.
 * Returns IH_OK, IH_EINVAL for a provider with no smoke test (message in
 * err), or IH_EIO when no random bytes could be had.
 */
int	smoke_msg_new(struct smoke_msg *m, const char *provider,
	    const char *version, time_t now, char *err, size_t errlen);

/*
 * Signs m with secret (secret_len bytes) at now, filling its headers.
 * Returns IH_OK, or IH_ECONFIG when the secret cannot be one of the
 * provider's (a Standard Webhooks secret that is not base64), with the
 * setting secret_var named in err.
 */
int	smoke_msg_sign(struct smoke_msg *m, const char *secret,
	    size_t secret_len, const char *secret_var, time_t now, char *err,
	    size_t errlen);

/*
 * Checks m as its provider's receiver would, with cfg's secrets and
 * tolerance at now.  Returns IH_OK, or IH_EAUTH with a static *why.
 */
int	smoke_msg_verify(const struct smoke_msg *m, const struct config *cfg,
	    time_t now, const char **why);

/* Wipes m's signature and headers. */
void	smoke_msg_clear(struct smoke_msg *m);

#endif
