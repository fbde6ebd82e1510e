/* allow.c -- CIDR ranges against the client's address. */
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "allow.h"
#include "ih.h"

/* An address as 16 bytes; IPv4 as its IPv4-mapped IPv6 form. */
struct allow_addr {
	unsigned char	b[16];
};

/* Parses an IPv4 or IPv6 address; *bits is 32 or 128.  0 or -1. */
static int
parse_addr(const char *s, struct allow_addr *a, int *bits)
{
	struct in_addr v4;

	memset(a, 0, sizeof(*a));
	if (inet_pton(AF_INET, s, &v4) == 1) {
		a->b[10] = 0xff;
		a->b[11] = 0xff;
		memcpy(a->b + 12, &v4, 4);
		*bits = 32;
		return 0;
	}
	if (inet_pton(AF_INET6, s, a->b) == 1) {
		*bits = 128;
		return 0;
	}
	return -1;
}

/* Do a and b agree on their first prefix bits (of 128)? */
static int
same_prefix(const struct allow_addr *a, const struct allow_addr *b,
    int prefix)
{
	int i, rest;

	for (i = 0; prefix >= 8; i++, prefix -= 8)
		if (a->b[i] != b->b[i])
			return 0;
	if (prefix == 0)
		return 1;
	rest = 0xff << (8 - prefix) & 0xff;
	return (a->b[i] & rest) == (b->b[i] & rest);
}

/* Parses one "addr[/prefix]" entry into net and a prefix of 128 bits. */
static int
parse_entry(const char *e, struct allow_addr *net, int *prefix)
{
	char buf[ALLOW_ENTRY_MAX + 1], *slash, *end;
	long p;
	int bits;

	if (strlen(e) > ALLOW_ENTRY_MAX)
		return -1;
	memcpy(buf, e, strlen(e) + 1);
	slash = strchr(buf, '/');
	if (slash != NULL)
		*slash = '\0';
	if (parse_addr(buf, net, &bits) != 0)
		return -1;
	p = bits;
	if (slash != NULL) {
		if (slash[1] < '0' || slash[1] > '9')
			return -1;
		errno = 0;
		p = strtol(slash + 1, &end, 10);
		if (errno != 0 || *end != '\0' || p < 0 || p > bits)
			return -1;
	}
	/* An IPv4 prefix counts from the mapped form's 96 leading bits. */
	*prefix = (int)p + (bits == 32 ? 96 : 0);
	return 0;
}

int
allow_check(const char *list, const char *addr, int *allowed, char *err,
    size_t errlen)
{
	struct allow_addr client, net;
	char entry[ALLOW_ENTRY_MAX + 1];
	const char *p = list, *start;
	size_t len;
	int have_client = 0, bits, prefix, n = 0;

	*allowed = 0;
	if (addr != NULL && parse_addr(addr, &client, &bits) == 0)
		have_client = 1;
	for (;;) {
		while (*p == ',' || *p == ' ' || *p == '\t')
			p++;
		if (*p == '\0')
			break;
		start = p;
		while (*p != '\0' && *p != ',' && *p != ' ' && *p != '\t')
			p++;
		len = (size_t)(p - start);
		if (len > ALLOW_ENTRY_MAX) {
			snprintf(err, errlen, "allow-list entry longer than "
			    "%d bytes", ALLOW_ENTRY_MAX);
			return IH_ECONFIG;
		}
		memcpy(entry, start, len);
		entry[len] = '\0';
		if (parse_entry(entry, &net, &prefix) != 0) {
			snprintf(err, errlen, "allow-list entry \"%s\" is not "
			    "an address or CIDR range", entry);
			return IH_ECONFIG;
		}
		n++;
		if (have_client && same_prefix(&client, &net, prefix))
			*allowed = 1;
	}
	if (n == 0) {
		snprintf(err, errlen, "allow-list is empty");
		return IH_ECONFIG;
	}
	return IH_OK;
}
