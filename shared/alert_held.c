/* alert_held.c -- the alert that events are held for their version. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "alert_held.h"
#include "config.h"
#include "ih.h"
#include "store.h"

/* Held events by why: a version has no reason, a repeat has one. */
struct held_n {
	long	version;
	long	repeat;
};

static int
count_row(void *arg, const struct store_row *row)
{
	struct held_n *n = arg;

	if (row->last_error != NULL)
		n->repeat++;
	else
		n->version++;
	return IH_OK;
}

int
alert_held_check(struct alert_held *ah, size_t i, const struct config *cfg,
    const char *provider, struct store *st, int64_t now_ms,
    const struct log_sink *log, char *err, size_t errlen)
{
	struct store_filter f;
	struct held_n hn = { 0, 0 };
	char line[1024], up[32];
	const char *least;
	long n;
	size_t k;
	int rc;

	if (cfg->alert_action == NULL || *cfg->alert_action == '\0' ||
	    !alert_due(ah->checked_at, i, now_ms, ALERT_HELD_CHECK_MS))
		return IH_OK;
	memset(&f, 0, sizeof(f));
	f.provider = provider;
	f.status = "held";
	f.limit = ALERT_HELD_COUNT_MAX;
	rc = store_list(st, &f, count_row, &hn, err, errlen);
	if (rc != IH_OK)
		return rc;
	n = hn.version + hn.repeat;
	/* Fewer than alerted (replayed): the next rise alerts again. */
	if (n <= ah->alerted_n[i]) {
		ah->alerted_n[i] = n;
		return IH_OK;
	}
	ah->alerted_n[i] = n;
	for (k = 0; provider[k] != '\0' && k + 1 < sizeof(up); k++)
		up[k] = (char)toupper((unsigned char)provider[k]);
	up[k] = '\0';
	least = n >= ALERT_HELD_COUNT_MAX ? "at least " : "";
	if (hn.repeat == 0)
		snprintf(line, sizeof(line), "idemhook: %s holds %s%ld events "
		    "of an API version not in IDEMHOOK_%s_API_VERSIONS: see "
		    "idemhook list --provider %s --status held; once the "
		    "switch handles them, idemhook replay --provider %s "
		    "--status held\n", provider, least, n, up, provider,
		    provider);
	else
		snprintf(line, sizeof(line), "idemhook: %s holds %s%ld events "
		    "(%ld of them a body already recorded, come again under a "
		    "new id: the same thing happening twice, or a replay): "
		    "see idemhook list --provider %s --status held and each "
		    "one's reason; idemhook catch-up releases those the "
		    "provider's API lists; idemhook replay --provider %s "
		    "EVENT_ID releases one on your word\n", provider, least, n,
		    hn.repeat, provider, provider);
	alert_text(cfg, provider, "held", line, log);
	return IH_OK;
}
