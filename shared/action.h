/*
 * action.h -- running the operator's command for an event.
 *
 * The command runs under /bin/sh -c in its own process group, with the
 * raw payload on stdin, stdout joined to stderr (the web server's error
 * log), and these variables added to the environment:
 *   IDEMHOOK_PROVIDER, IDEMHOOK_EVENT_ID, IDEMHOOK_EVENT_TYPE,
 *   IDEMHOOK_ATTEMPT, IDEMHOOK_IDEMPOTENCY_KEY.
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

#define ACTION_KEY_LEN	65	/* hex SHA-256 and a NUL */

struct action_event {
	const char	*provider;
	const char	*event_id;
	const char	*event_type;
	const void	*payload;
	size_t		 payload_len;
	long		 attempt;
};

/*
 * Runs command for ev and waits at most timeout_s seconds.  Returns IH_OK
 * when it exits 0; IH_EIO with the reason in err ("exit status 3",
 * "killed after the 60 s timeout") otherwise.
 */
int	action_run(const char *command, const struct action_event *ev,
	    long timeout_s, char *err, size_t errlen);

/* Writes the idempotency key of (provider, event_id, command) to out. */
int	action_key(const char *provider, const char *event_id,
	    const char *command, char out[ACTION_KEY_LEN]);

#endif
