/* console_proxy.c -- the client's address behind a proxy (console_proxy.h). */
#include <arpa/inet.h>
#include <netinet/in.h>

#include <stdio.h>
#include <string.h>

#include "console_proxy.h"
#include "ih.h"

/* Parses s as an IP address into a (16 bytes) and *family. */
static int
addr_parse(const char *s, unsigned char a[16], int *family)
{
	memset(a, 0, 16);
	if (inet_pton(AF_INET, s, a) == 1) {
		*family = AF_INET;
		return 1;
	}
	if (inet_pton(AF_INET6, s, a) == 1) {
		*family = AF_INET6;
		return 1;
	}
	return 0;
}

int
console_trusted_proxy_check(const char *v, char *err, size_t errlen)
{
	unsigned char a[16];
	int family;

	if (v != NULL && addr_parse(v, a, &family))
		return IH_OK;
	snprintf(err, errlen, "IDEMHOOK_CONSOLE_TRUSTED_PROXY must be the "
	    "proxy's one IP address (192.0.2.10 or 2001:db8::10), not a "
	    "name, a list or a network");
	return IH_ECONFIG;
}

/* The last hop of xff, trimmed, into hop; 0 when none fits. */
static int
last_hop(const char *xff, char *hop, size_t len)
{
	const char *p = strrchr(xff, ',');
	size_t n;

	p = p != NULL ? p + 1 : xff;
	while (*p == ' ' || *p == '\t')
		p++;
	n = strlen(p);
	while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t'))
		n--;
	if (n == 0 || n >= len)
		return 0;
	memcpy(hop, p, n);
	hop[n] = '\0';
	return 1;
}

int
console_client_addr(const char *remote, const char *xff, const char *trusted,
    char *out, size_t outlen, char *err, size_t errlen)
{
	unsigned char r[16], t[16], h[16];
	char hop[CONSOLE_ADDR_MAX];
	int rf = 0, tf = 0, hf = 0;

	snprintf(out, outlen, "%s", remote != NULL ? remote : "-");
	if (trusted == NULL || *trusted == '\0')
		return IH_OK;
	if (console_trusted_proxy_check(trusted, err, errlen) != IH_OK)
		return IH_ECONFIG;
	if (!addr_parse(trusted, t, &tf) || remote == NULL ||
	    !addr_parse(remote, r, &rf) || rf != tf ||
	    memcmp(r, t, 16) != 0 || xff == NULL)
		return IH_OK;
	if (last_hop(xff, hop, sizeof(hop)) && addr_parse(hop, h, &hf))
		snprintf(out, outlen, "%s", hop);
	return IH_OK;
}
