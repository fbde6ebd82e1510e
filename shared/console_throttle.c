/* console_throttle.c -- the console's sign-in budgets (console_throttle.h). */
#include <stdio.h>
#include <string.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/evp.h>

#include "console_auth.h"
#include "console_throttle.h"
#include "ih.h"
#include "store_signin.h"

#define CLIENT_WINDOW_MS	(CONSOLE_CLIENT_WINDOW_S * 1000LL)
#define USER_WINDOW_MS		(CONSOLE_USER_WINDOW_S * 1000LL)
#define ADDR_MAX		64

/* The hex SHA-256 of the parts, each ended by a NUL, into out. */
static void
key_of(const char *scope, const char *a, const char *b, char out[65])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char md[32];
	unsigned int n = sizeof(md);
	EVP_MD_CTX *ctx;
	int i, ok;

	ctx = EVP_MD_CTX_new();
	ok = ctx != NULL && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) == 1 &&
	    EVP_DigestUpdate(ctx, scope, strlen(scope) + 1) == 1 &&
	    EVP_DigestUpdate(ctx, a, strlen(a) + 1) == 1 &&
	    EVP_DigestUpdate(ctx, b, strlen(b) + 1) == 1 &&
	    EVP_DigestFinal_ex(ctx, md, &n) == 1;
	EVP_MD_CTX_free(ctx);
	if (!ok)
		memset(md, 0, sizeof(md));
	for (i = 0; i < 32; i++) {
		out[2 * i] = hex[md[i] >> 4];
		out[2 * i + 1] = hex[md[i] & 15];
	}
	out[64] = '\0';
}

/*
 * The client as budgeted: an IPv4 address as it is, an IPv6 one by its
 * /64 (one host holds a whole /64), a mapped IPv4 one as IPv4.
 */
static void
client_of(const char *addr, char out[ADDR_MAX])
{
	struct in6_addr a6;

	if (addr == NULL || *addr == '\0')
		addr = "-";
	snprintf(out, ADDR_MAX, "%s", addr);
	if (strchr(addr, ':') == NULL || inet_pton(AF_INET6, addr, &a6) != 1)
		return;
	if (IN6_IS_ADDR_V4MAPPED(&a6)) {
		if (inet_ntop(AF_INET, &a6.s6_addr[12], out, ADDR_MAX) == NULL)
			snprintf(out, ADDR_MAX, "-");
		return;
	}
	memset(&a6.s6_addr[8], 0, 8);
	if (inet_ntop(AF_INET6, &a6, out, ADDR_MAX) == NULL)
		snprintf(out, ADDR_MAX, "-");
}

/* Whole seconds from now until the window that began at start ends. */
static long
seconds_left(int64_t start, int64_t window_ms, int64_t now_ms)
{
	int64_t left = start + window_ms - now_ms;

	if (left < 1000)
		return 1;
	return (long)((left + 999) / 1000);
}

int
console_throttle_check(struct store *st, const char *addr, const char *name,
    int64_t now_ms, struct console_gate *g, char *err, size_t errlen)
{
	struct store_signin cb, ub;
	char client[ADDR_MAX];
	int rc;

	memset(g, 0, sizeof(*g));
	client_of(addr, client);
	key_of("console client", client, name, g->client_key);
	key_of("console user", "", name, g->user_key);
	rc = store_signin_charge(st, g->client_key, now_ms, CLIENT_WINDOW_MS,
	    CONSOLE_CLIENT_TRIES, &cb, err, errlen);
	if (rc != IH_OK)
		return rc;
	if (!cb.charged) {
		g->retry_s = seconds_left(cb.window_ms, CLIENT_WINDOW_MS,
		    now_ms);
		return IH_OK;
	}
	/* A window begins: a moment to drop the budgets long past. */
	if (cb.failures == 1) {
		rc = store_signin_prune(st, now_ms - USER_WINDOW_MS -
		    CLIENT_WINDOW_MS, err, errlen);
		if (rc != IH_OK)
			return rc;
	}
	rc = store_signin_charge(st, g->user_key, now_ms, USER_WINDOW_MS,
	    CONSOLE_USER_TRIES, &ub, err, errlen);
	if (rc != IH_OK)
		return rc;
	g->user_charged = ub.charged;
	/* A spent user budget still lets a client with a clean record in. */
	if (ub.charged || cb.failures == 1)
		g->verify = 1;
	else
		g->retry_s = seconds_left(ub.window_ms, USER_WINDOW_MS,
		    now_ms);
	return IH_OK;
}

int
console_throttle_passed(struct store *st, const struct console_gate *g,
    char *err, size_t errlen)
{
	int rc;

	rc = store_signin_refund(st, g->client_key, 1, err, errlen);
	if (rc == IH_OK && g->user_charged)
		rc = store_signin_refund(st, g->user_key, 0, err, errlen);
	return rc;
}

int
console_throttle_signin(struct store *st, const char *addr, const char *name,
    const char *hash, const char *pw, size_t pwlen, int64_t now_ms,
    enum console_verdict *v, long *retry_s, char *err, size_t errlen)
{
	struct console_gate g;
	int rc;

	*v = CONSOLE_WRONG;
	*retry_s = 0;
	rc = console_throttle_check(st, addr, name, now_ms, &g, err, errlen);
	if (rc != IH_OK)
		return rc;
	if (!g.verify) {
		*v = CONSOLE_WAIT;
		*retry_s = g.retry_s;
		return IH_OK;
	}
	if (hash == NULL)
		return IH_OK;
	rc = console_verify_password(hash, pw, pwlen);
	if (rc == IH_EAUTH)
		return IH_OK;
	if (rc != IH_OK)
		return rc;
	*v = CONSOLE_SIGNED_IN;
	return console_throttle_passed(st, &g, err, errlen);
}
