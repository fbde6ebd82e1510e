/*
 * ingest_account.c -- the account of one delivery (account.h): from the
 * endpoint's URL, or from a provider's routing header on the default
 * URL, and that account's settings.  The header only picks whose
 * secrets are tried; the signature, checked later, decides.
 */
#include <stdio.h>
#include <string.h>

#include "account.h"
#include "ih.h"
#include "ingest.h"
#include "provider.h"
#include "request.h"

/* Loads in->cfg for in->account; 0 with in->out set on failure. */
static int
load(struct ingest *in, const struct log_sink *sink)
{
	char err[STORE_ERR_MAX];
	int rc;

	err[0] = '\0';
	config_free(&in->cfg);
	rc = settings_request_account(in->settings, in->io.params,
	    in->account, sink, &in->cfg, in->file_path,
	    sizeof(in->file_path), err, sizeof(err));
	if (rc != IH_OK) {
		outcome_set(&in->out, 500, "bad_config", err);
		return 0;
	}
	return 1;
}

/*
 * The account a routing header names, into routed ("" when none).
 * Returns 0 with in->out set when the setting is not an account name.
 */
static int
routed_by_header(struct ingest *in, char *routed, size_t len)
{
	const char *h, *v;
	char err[160];
	int rc;

	routed[0] = '\0';
	h = account_route_header(in->p->name);
	v = h != NULL ? request_header(&in->req, h) : NULL;
	if (v == NULL)
		return 1;
	rc = settings_route(in->settings, v, routed, len);
	if (rc == IH_ECONFIG) {
		snprintf(err, sizeof(err), "a routing setting for %s names "
		    "no valid account", h);
		outcome_set(&in->out, 500, "bad_config", err);
		return 0;
	}
	if (rc != IH_OK)
		routed[0] = '\0';
	return 1;
}

int
ingest_account(struct ingest *in, const struct log_sink *sink)
{
	char routed[ACCOUNT_NAME_MAX + 1], err[160];
	int from_url;

	if (account_from_path(io_param(&in->io, "PATH_INFO"), in->account,
	    sizeof(in->account)) != IH_OK) {
		snprintf(in->account, sizeof(in->account), "%s",
		    ACCOUNT_DEFAULT);
		outcome_set(&in->out, 404, "unknown_account", "the URL names "
		    "no account ([a-z0-9_-]{1,32})");
		return 0;
	}
	from_url = strcmp(in->account, ACCOUNT_DEFAULT) != 0;
	/* Settings first: the routing settings live in the same file. */
	if (!load(in, sink) || !routed_by_header(in, routed, sizeof(routed)))
		return 0;
	if (routed[0] != '\0' && strcmp(routed, in->account) != 0) {
		if (from_url) {
			snprintf(err, sizeof(err), "the routing header names "
			    "account %s, the URL %s", routed, in->account);
			outcome_set(&in->out, 401, "account_mismatch", err);
			return 0;
		}
		snprintf(in->account, sizeof(in->account), "%s", routed);
		if (!load(in, sink))
			return 0;
	}
	if (strcmp(in->account, ACCOUNT_DEFAULT) != 0 &&
	    in->cfg.nsecrets == 0) {
		snprintf(err, sizeof(err), "no account %s: set %s@%s",
		    in->account, in->p->secret_var, in->account);
		outcome_set(&in->out, 404, "unknown_account", err);
		return 0;
	}
	return 1;
}
