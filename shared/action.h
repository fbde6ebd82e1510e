/*
 * action.h -- running the operator's command for an event.
 *
 * The command runs under /bin/sh -c in its own process group, with the
 * raw payload on stdin, stdout joined to stderr (the web server's error
 * log), and an environment built for it, never the receiver's own:
 *   - PATH (a default when the receiver has none), HOME, LANG, LC_* and
 *     TZ, from the receiver's environment;
 *   - IDEMHOOK_PROVIDER, IDEMHOOK_EVENT_ID, IDEMHOOK_EVENT_TYPE,
 *     IDEMHOOK_ATTEMPT, IDEMHOOK_IDEMPOTENCY_KEY;
 *   - the variables the operator names in the pass-through setting
 *     (IDEMHOOK_ACTION_PASSENV), from the receiver's environment.
 * Nothing else: no secret or setting (IDEMHOOK_*), no request header
 * (HTTP_*), no CGI variable, even when named for pass-through.
 * The idempotency key is stable for one event and one command, across
 * attempts and processes: pass it on to the APIs the command calls,
 * because a command's external effects are at-least-once.
 *
 * The command is killed (its whole process group) after the timeout, and
 * also when the process that started it dies: a small supervisor process
 * leads the group, runs the command, and kills the group if the receiver
 * dies, so that a crashed receiver leaves no half-run action behind to
 * race the retry.
 */
#ifndef IH_ACTION_H
#define IH_ACTION_H

#include <stddef.h>

#include "event.h"

#define ACTION_KEY_LEN	65	/* hex SHA-256 and a NUL */

#define ACTION_PASSENV_MAX	32	/* names in a pass-through list */
#define ACTION_NAME_MAX		64	/* longest pass-through name */

/*
 * Runs command for ev and waits at most timeout_s seconds, the payload
 * (empty once purged) on its standard input.  alert_reason is an
 * alert's ("dead", "silent"), given as IDEMHOOK_ALERT_REASON, or NULL
 * for an action: why it runs, not a part of the event.  passenv is
 * the pass-through list (names separated by blanks or commas), or NULL.
 * Returns IH_OK when it exits 0; IH_EIO with the reason in err ("exit
 * status 3", "killed after the 60 s timeout") otherwise.  Safe to call
 * from any one thread: everything the child needs is prepared before the
 * fork, and the child only execs.
 */
int	action_run(const char *command, const struct event *ev,
	    const char *alert_reason, const char *passenv, long timeout_s,
	    char *err, size_t errlen);

/*
 * Checks a pass-through list: at most ACTION_PASSENV_MAX names of
 * letters, digits and '_', none of them a secret or setting, a request
 * header or a CGI variable.  Returns IH_OK, or IH_ECONFIG with the cause
 * in err.
 */
int	action_passenv_check(const char *passenv, char *err, size_t errlen);

/* Writes the idempotency key of (provider, event_id, command) to out. */
int	action_key(const char *provider, const char *event_id,
	    const char *command, char out[ACTION_KEY_LEN]);

#endif
