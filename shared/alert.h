/*
 * alert.h -- telling the operator when something goes wrong.
 *
 * IDEMHOOK_ALERT_ACTION (or IDEMHOOK_<PROVIDER>_ALERT_ACTION) is a shell
 * command run exactly like an action (action.h: the same supervisor, the
 * same IDEMHOOK_ACTION_TIMEOUT, the same environment rules), with
 * IDEMHOOK_ALERT_REASON set to why:
 *   - "dead": an event has just gone dead; its payload is on stdin and
 *     IDEMHOOK_EVENT_* name it;
 *   - "silent": the provider has received nothing for longer than
 *     IDEMHOOK_SILENCE_ALERT seconds (checked by idemhook work); one line
 *     saying so is on stdin;
 *   - "bad_signatures": more than IDEMHOOK_BADSIG_ALERT deliveries of the
 *     provider were refused for their signature within
 *     IDEMHOOK_BADSIG_WINDOW minutes while none was accepted (checked by
 *     idemhook work; counted by the receivers, sigfail.h);
 *   - "endpoint": idemhook health found the endpoint unwell on the
 *     provider's side (disabled, inactive, interrupted, a subscription
 *     missing); its findings are on stdin;
 *   - "forward_paused": a process paused its deliveries to the
 *     application after failures in a row (forward.h); one line says so.
 * A failing alert is logged and changes nothing else.
 */
#ifndef IH_ALERT_H
#define IH_ALERT_H

#include <stdint.h>

#include "log.h"

struct config;
struct store;
struct store_job;

/* Runs the alert for a job that has just gone dead (why: its error). */
void	alert_dead(const struct config *cfg, const struct store_job *job,
	    const char *why, const struct log_sink *log);

/*
 * What one idemhook work process remembers per provider: the last
 * delivery it has already alerted about, so that one silence gives one
 * alert, and a new delivery re-arms it.
 */
#define ALERT_MAX_PROVIDERS	16

/*
 * Whether the periodic check of provider i (i < ALERT_MAX_PROVIDERS,
 * else never), last made at checked_at[i], is due at now_ms: once every
 * every_ms at most.  Marks it made when it is due.
 */
int	alert_due(int64_t *checked_at, size_t i, int64_t now_ms,
	    int64_t every_ms);
struct alert_silence {
	int64_t	alerted_for[ALERT_MAX_PROVIDERS];	/* last_ms alerted */
	int64_t	checked_at[ALERT_MAX_PROVIDERS];
};

/*
 * For provider (index i of the caller's list): when cfg sets both an
 * alert and IDEMHOOK_SILENCE_ALERT, and the provider's last delivery is
 * older than that, runs the alert once for that delivery.  A provider
 * with no delivery ever is not silent, only unused.  Looks at the store
 * at most once a minute.  Returns IH_OK, or IH_ESTORE when the store
 * cannot be read (the caller logs err).
 */
int	alert_silence_check(struct alert_silence *as, size_t i,
	    const struct config *cfg, const char *provider, struct store *st,
	    int64_t now_ms, const struct log_sink *log, char *err,
	    size_t errlen);

/* Per provider: the burst already alerted about (its first minute). */
struct alert_badsig {
	int64_t	alerted_for[ALERT_MAX_PROVIDERS];
	int64_t	checked_at[ALERT_MAX_PROVIDERS];
};

/*
 * For provider (index i): when cfg sets an alert and threshold > 0, and
 * at least threshold deliveries were refused for their signature in the
 * last minutes (sigfail.h) while the provider's last accepted delivery
 * is older than that window, runs the alert once per burst.  Looks at
 * most every ten seconds.  Returns
 * IH_OK, or IH_ESTORE / IH_EIO with the cause in err.
 */
int	alert_badsig_check(struct alert_badsig *ab, size_t i,
	    const struct config *cfg, const char *provider, struct store *st,
	    long threshold, long minutes, int64_t now_ms,
	    const struct log_sink *log, char *err, size_t errlen);

/*
 * Runs the alert for provider with reason and the lines of text on its
 * stdin (IDEMHOOK_EVENT_ID and _TYPE are "-").  Nothing without an
 * alert action.
 */
void	alert_text(const struct config *cfg, const char *provider,
	    const char *reason, const char *text,
	    const struct log_sink *log);

#endif
