/*
 * cli_verify.c -- idemhook verify: the stored request turned back into
 * the one the provider's verify() expects, and checked again against
 * the secrets configured now.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "cli_args.h"
#include "cli_events.h"
#include "cli_verify.h"
#include "cli_text.h"
#include "clock.h"
#include "headers.h"
#include "ih.h"
#include "json.h"
#include "provider.h"
#include "providers.h"
#include "request.h"
#include "store.h"

#define VERIFY_HEADERS_MAX	16
#define VERIFY_TEXT_MAX		8192

/* A stored event turned back into the request verify() expects. */
struct stored_req {
	char		 text[VERIFY_TEXT_MAX];
	size_t		 n;
	/* "HTTP_" + the header name in CGI form. */
	char		 var[VERIFY_HEADERS_MAX][HEADERS_CGI_NAME_MAX];
	const char	*value[VERIFY_HEADERS_MAX];
	unsigned char	*body;	/* a copy of the payload, then NUL */
	size_t		 body_len;
	int		 found;
	int		 purged;
	char		 err[STORE_ERR_MAX];
};

/* The CGI variables of the stored request: HTTP_* from its headers. */
static const char *
stored_param(void *arg, const char *name)
{
	struct stored_req *sr = arg;
	size_t i;

	if (strcmp(name, "REQUEST_METHOD") == 0)
		return "POST";
	for (i = 0; i < sr->n; i++)
		if (strcmp(sr->var[i], name) == 0)
			return sr->value[i];
	return NULL;
}

/* Splits the "Name: value\n" lines of sr->text into CGI names. */
static int
stored_parse(struct stored_req *sr)
{
	struct headers_field f;
	const char *pos = sr->text;
	char *end;

	while (headers_next(&pos, &f)) {
		if (!f.valued)
			continue;
		if (sr->n >= VERIFY_HEADERS_MAX ||
		    headers_cgi_name(f.name, f.name_len, sr->var[sr->n],
		    sizeof(sr->var[sr->n])) != IH_OK)
			return -1;
		/* The text is this request's copy: end the value in place. */
		end = sr->text + (f.value - sr->text) + f.value_len;
		*end = '\0';
		sr->value[sr->n] = f.value;
		sr->n++;
	}
	return 0;
}

static int
stored_row(void *arg, const struct store_row *row)
{
	struct stored_req *sr = arg;
	size_t len = strlen(row->headers);

	sr->found = 1;
	if (row->payload == NULL) {
		sr->purged = 1;
		return IH_OK;
	}
	if (len >= sizeof(sr->text)) {
		snprintf(sr->err, sizeof(sr->err), "stored headers longer "
		    "than %zu bytes", sizeof(sr->text) - 1);
		return IH_ETOOBIG;
	}
	memcpy(sr->text, row->headers, len + 1);
	sr->body = malloc((size_t)row->payload_len + 1);
	if (sr->body == NULL) {
		snprintf(sr->err, sizeof(sr->err), "out of memory");
		return IH_ENOMEM;
	}
	memcpy(sr->body, row->payload, (size_t)row->payload_len);
	sr->body[row->payload_len] = '\0';
	sr->body_len = (size_t)row->payload_len;
	return IH_OK;
}

static void
verify_usage(FILE *f)
{
	fprintf(f, "usage: idemhook verify [--] PROVIDER EVENT_ID\n\n"
	    "Re-checks the stored signature over the stored payload against "
	    "the\nsecrets configured now (IDEMHOOK_<PROVIDER>_SECRET and _2 "
	    "to _4),\nas audit proof that the event came from the provider. "
	    "Timestamps are\nnot checked against the clock.\n"
	    "Exit: 0 valid; 1 invalid, or it cannot be re-verified (Asaas "
	    "stores no\nsignature; a purged payload); 2 usage or "
	    "configuration error.\n");
}

int
cli_verify(struct cli *c, int argc, char **argv)
{
	struct stored_req *sr = NULL;
	struct provider_req pr;
	struct request req;
	const struct provider *p;
	const struct config *cfg;
	struct store *st;
	struct json *js = NULL;
	const char *provider = NULL, *event_id = NULL, *why = "";
	int rc, status = CLI_EXIT_FAIL;

	rc = cli_event_args(argc, argv, NULL, NULL, &provider, &event_id,
	    verify_usage);
	if (rc >= 0)
		return rc;
	p = providers_all[cli_provider_index(provider)];
	if (p->kept_headers == NULL || p->kept_headers[0] == NULL) {
		cli_errorf("verify: %s events cannot be re-verified: %s "
		    "authenticates each delivery with a static token\n"
		    "header, not a signature over the body, and the token is "
		    "not stored.", p->name, p->name);
		return CLI_EXIT_FAIL;
	}
	if (cli_config(c, (size_t)cli_provider_index(provider), &cfg) !=
	    IH_OK)
		return CLI_EXIT_USAGE;
	if (cfg->nsecrets == 0) {
		cli_errorf("verify: no secret configured: set %s in the "
		    "environment or the IDEMHOOK_CONFIG file", p->secret_var);
		return CLI_EXIT_USAGE;
	}
	if (cli_store(c, &st) != IH_OK)
		return CLI_EXIT_FAIL;
	sr = calloc(1, sizeof(*sr));
	if (sr == NULL) {
		cli_errorf("verify: out of memory");
		goto out;
	}
	rc = store_show_account(st, provider, c->account, event_id,
	    stored_row, sr, sr->err, sizeof(sr->err));
	if (rc != IH_OK) {
		cli_errorf("verify: %s", sr->err);
		goto out;
	}
	if (sr->purged) {
		cli_errorf("verify: the payload of %s %s was purged by "
		    "retention; nothing left to verify", provider, event_id);
		goto out;
	}
	if (stored_parse(sr) != 0) {
		cli_errorf("verify: the stored headers are malformed");
		goto out;
	}
	if (json_open(&js) != IH_OK) {
		cli_errorf("verify: out of memory");
		goto out;
	}
	memset(&req, 0, sizeof(req));
	req.io.param = stored_param;
	req.io.arg = sr;
	req.method = "POST";
	req.body = sr->body;
	req.body_len = sr->body_len;
	memset(&pr, 0, sizeof(pr));
	pr.req = &req;
	pr.cfg = cfg;
	pr.now = clock_wall_s();
	pr.check_time = 0;
	pr.json = js;
	/* Recorded by catch-up: trusted by its API call, never signed. */
	if (request_header(&req, "Idemhook-Source") != NULL) {
		cli_printf(stdout, "UNSIGNED: %s %s: recorded by catch-up "
		    "from the provider's API; nothing to verify\n", provider,
		    event_id);
		goto out;
	}
	rc = p->verify(&pr, &why);
	if (rc == IH_OK) {
		cli_printf(stdout, "valid: %s %s: the stored signature "
		    "matches a configured secret\n", provider, event_id);
		status = CLI_EXIT_OK;
	} else {
		cli_printf(stdout, "INVALID: %s %s: %s\n", provider, event_id,
		    why != NULL ? why : "signature does not match");
	}
out:
	json_close(js);
	if (sr != NULL)
		free(sr->body);
	free(sr);
	return status;
}
