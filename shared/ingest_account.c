/*
 * ingest_account.c -- the account of one delivery and its settings
 * (ingest_account.h).  The header only picks whose secrets are tried;
 * the signature, checked later, decides.
 */
#include <stdio.h>
#include <string.h>

#include "account.h"
#include "config.h"
#include "ih.h"
#include "ingest_account.h"
#include "provider.h"
#include "request.h"

/* Loads v->cfg for v->account; 0 with v->out set on failure. */
static int
load(const struct ingest_account_view *v, const struct log_sink *sink)
{
	char err[STORE_ERR_MAX];
	int rc;

	err[0] = '\0';
	/* The last delivery's settings stay when they still apply. */
	rc = settings_request_account(v->settings, v->io->params,
	    v->account, sink, v->cfg, v->file_path, v->file_path_len, err,
	    sizeof(err));
	if (rc != IH_OK) {
		outcome_set(v->out, 500, "bad_config", err);
		return 0;
	}
	return 1;
}

/*
 * The account a routing header names, into routed ("" when none).
 * Returns 0 with v->out set when the setting is not an account name.
 */
static int
routed_by_header(const struct ingest_account_view *v, char *routed,
    size_t len)
{
	const char *h, *val;
	char err[160];
	int rc;

	routed[0] = '\0';
	h = account_route_header(v->p->name);
	val = h != NULL ? request_header(v->req, h) : NULL;
	if (val == NULL)
		return 1;
	rc = settings_route(v->settings, val, routed, len);
	if (rc == IH_ECONFIG) {
		snprintf(err, sizeof(err), "a routing setting for %s names "
		    "no valid account", h);
		outcome_set(v->out, 500, "bad_config", err);
		return 0;
	}
	if (rc != IH_OK)
		routed[0] = '\0';
	return 1;
}

int
ingest_account(const struct ingest_account_view *v,
    const struct log_sink *sink)
{
	char routed[ACCOUNT_NAME_MAX + 1], err[160];
	int from_url;

	if (account_from_path(io_param(v->io, "PATH_INFO"), v->account,
	    v->account_len) != IH_OK) {
		snprintf(v->account, v->account_len, "%s", ACCOUNT_DEFAULT);
		outcome_set(v->out, 404, "unknown_account", "the URL names "
		    "no account ([a-z0-9_-]{1,32})");
		return 0;
	}
	from_url = strcmp(v->account, ACCOUNT_DEFAULT) != 0;
	/* Settings first: the routing settings live in the same file. */
	if (!load(v, sink) || !routed_by_header(v, routed, sizeof(routed)))
		return 0;
	if (routed[0] != '\0' && strcmp(routed, v->account) != 0) {
		if (from_url) {
			snprintf(err, sizeof(err), "the routing header names "
			    "account %s, the URL %s", routed, v->account);
			outcome_set(v->out, 401, "account_mismatch", err);
			return 0;
		}
		snprintf(v->account, v->account_len, "%s", routed);
		if (!load(v, sink))
			return 0;
	}
	if (strcmp(v->account, ACCOUNT_DEFAULT) != 0 &&
	    v->cfg->nsecrets == 0) {
		snprintf(err, sizeof(err), "no account %s: set %s@%s",
		    v->account, v->p->secret_var, v->account);
		outcome_set(v->out, 404, "unknown_account", err);
		return 0;
	}
	return 1;
}
