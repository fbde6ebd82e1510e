/* version.c -- each event's API version, where its provider keeps it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ih.h"
#include "json.h"
#include "request.h"
#include "version.h"

int
version_of(const struct provider *p, const struct provider_req *pr,
    char *out, size_t outlen)
{
	const char *keys[1], *h;
	char *val = NULL;
	int rc;

	out[0] = '\0';
	if (p->version_key != NULL) {
		keys[0] = p->version_key;
		rc = provider_fields(pr, keys, 1, &val);
		if (rc == IH_ENOMEM)
			return rc;
		if (val != NULL && version_ok(val, strlen(val)))
			snprintf(out, outlen, "%s", val);
		free(val);
	} else if (p->version_header != NULL) {
		h = request_header(pr->req, p->version_header);
		if (h != NULL && version_ok(h, strlen(h)))
			snprintf(out, outlen, "%s", h);
	}
	return IH_OK;
}

int
version_replaces(const struct provider *p, const char *list, const char *v)
{
	return list != NULL && p->version_key != NULL &&
	    version_expected(list, v);
}
