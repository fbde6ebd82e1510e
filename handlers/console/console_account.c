/*
 * console_account.c -- the console's account (account.h) of an event
 * page, a replay form or a filter: the "account" field, checked as an
 * account name before any query uses it.
 */
#include <stdio.h>
#include <string.h>

#include "account.h"
#include "console_int.h"
#include "html.h"
#include "ih.h"

int
console_account(const char *src, size_t len, int dflt, char *out,
    size_t outlen)
{
	int rc;

	out[0] = '\0';
	rc = console_field(src, len, "account", out, outlen);
	if (rc == IH_ENOTFOUND || (rc == IH_OK && out[0] == '\0')) {
		snprintf(out, outlen, "%s", dflt ? ACCOUNT_DEFAULT : "");
		return IH_OK;
	}
	if (rc != IH_OK || !account_name_ok(out))
		return IH_EINVAL;
	return IH_OK;
}

void
console_put_account_query(struct html *h, const char *account, int first)
{
	if (account == NULL || strcmp(account, ACCOUNT_DEFAULT) == 0)
		return;
	html_raw(h, first ? "?account=" : "&amp;account=");
	html_url(h, account);
}
