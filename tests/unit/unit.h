/*
 * unit.h -- a fake request for the handler unit tests: CGI variables
 * from a table and a body given as pointer plus length, so a provider's
 * verify and identify run exactly as under serve.c.
 */
#ifndef IH_UNIT_H
#define IH_UNIT_H

#include <stdint.h>
#include <string.h>

#include "config.h"
#include "json.h"
#include "provider.h"
#include "request.h"

#define UNIT_MAX_VARS	16

struct unit_req {
	const char		*names[UNIT_MAX_VARS];
	const char		*values[UNIT_MAX_VARS];
	size_t			 n;
	struct request		 req;
	struct config		 cfg;
	struct provider_req	 pr;
};

static inline const char *
unit_param(void *arg, const char *name)
{
	struct unit_req *u = arg;
	size_t i;

	for (i = 0; i < u->n; i++)
		if (strcmp(u->names[i], name) == 0)
			return u->values[i];
	return NULL;
}

static inline size_t
unit_read(void *arg, void *buf, size_t len)
{
	(void)arg;
	(void)buf;
	(void)len;
	return 0;
}

/* Starts a request with body and the secrets (NULL-terminated). */
static inline void
unit_begin(struct unit_req *u, struct json *js, const char *body,
    size_t len, const char *const *secrets)
{
	struct request_io io;

	memset(u, 0, sizeof(*u));
	io.param = unit_param;
	io.read = unit_read;
	io.arg = u;
	u->names[u->n] = "REQUEST_METHOD";
	u->values[u->n++] = "POST";
	request_begin(&u->req, &io);
	u->req.body = (unsigned char *)(uintptr_t)body;
	u->req.body_len = len;
	for (; secrets != NULL && *secrets != NULL &&
	    u->cfg.nsecrets < CONFIG_MAX_SECRETS; secrets++) {
		u->cfg.secrets[u->cfg.nsecrets] = (char *)(uintptr_t)*secrets;
		u->cfg.secret_len[u->cfg.nsecrets++] = strlen(*secrets);
	}
	u->cfg.tolerance_s = CONFIG_DEFAULT_TOLERANCE;
	u->pr.req = &u->req;
	u->pr.cfg = &u->cfg;
	u->pr.now = 0;
	u->pr.check_time = 1;
	u->pr.json = js;
}

/* Sets a CGI variable ("HTTP_X_GITHUB_EVENT", "CONTENT_TYPE"). */
static inline void
unit_set(struct unit_req *u, const char *name, const char *value)
{
	if (u->n < UNIT_MAX_VARS) {
		u->names[u->n] = name;
		u->values[u->n++] = value;
	}
	if (strcmp(name, "CONTENT_TYPE") == 0)
		u->req.content_type = value;
}

#endif
