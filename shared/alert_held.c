/* alert_held.c -- the alert that events are held for their version. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "alert_held.h"
#include "config.h"
#include "ih.h"
#include "store.h"

static int
count_row(void *arg, const struct store_row *row)
{
	long *n = arg;

	(void)row;
	(*n)++;
	return IH_OK;
}

int
alert_held_check(struct alert_held *ah, size_t i, const struct config *cfg,
    const char *provider, struct store *st, int64_t now_ms,
    const struct log_sink *log, char *err, size_t errlen)
{
	struct store_filter f;
	char line[512], up[32];
	long n = 0;
	size_t k;
	int rc;

	if (cfg->alert_action == NULL || *cfg->alert_action == '\0' ||
	    !alert_due(ah->checked_at, i, now_ms, ALERT_HELD_CHECK_MS))
		return IH_OK;
	memset(&f, 0, sizeof(f));
	f.provider = provider;
	f.status = "held";
	f.limit = ALERT_HELD_COUNT_MAX;
	rc = store_list(st, &f, count_row, &n, err, errlen);
	if (rc != IH_OK)
		return rc;
	/* Fewer than alerted (replayed): the next rise alerts again. */
	if (n <= ah->alerted_n[i]) {
		ah->alerted_n[i] = n;
		return IH_OK;
	}
	ah->alerted_n[i] = n;
	for (k = 0; provider[k] != '\0' && k + 1 < sizeof(up); k++)
		up[k] = (char)toupper((unsigned char)provider[k]);
	up[k] = '\0';
	snprintf(line, sizeof(line), "idemhook: %s holds %s%ld events of an "
	    "API version not in IDEMHOOK_%s_API_VERSIONS: see idemhook list "
	    "--provider %s --status held; once the switch handles them, "
	    "idemhook replay --provider %s --status held\n", provider,
	    n >= ALERT_HELD_COUNT_MAX ? "at least " : "", n,
	    up, provider, provider);
	alert_text(cfg, provider, "held", line, log);
	return IH_OK;
}
