/*
 * api_github_held.h -- GitHub's held repeats for catch-up and work
 * (api_github.c): a body already recorded that came again under a new
 * X-GitHub-Delivery is held (provider.h, hold_replays), and released
 * once GitHub's own deliveries API lists its GUID for its hook, with its
 * event and action.  The GUID alone is not enough: a captured body may
 * be sent under the GUID of another delivery GitHub made.  The caller
 * owns every array; the held list's v is calloc'd by gh_held_read() and
 * freed by the caller.
 */
#ifndef IH_API_GITHUB_HELD_H
#define IH_API_GITHUB_HELD_H

#include <stddef.h>
#include <stdint.h>

#include "api_session.h"

/* The held events one run looks at, the older ones left for the next. */
#define GITHUB_HELD_MAX		1000

/* One delivery attempt as GitHub lists it. */
struct gh_item {
	char	guid[64];
	char	event[64];
	char	action[64];	/* "" when none */
	int64_t	id;
	int64_t	at_ms;
	int	ok;
	int	redelivery;
};

/* One held event of the store, read before any is released. */
struct gh_held {
	char	event_id[160];
	char	type[64];
	char	action[64];	/* its subtype, "" when none */
	int64_t	received_at;
};

struct gh_held_list {
	struct gh_held	*v;
	size_t		 n;
};

/*
 * Reads the held events of cu's provider and account, the newest
 * GITHUB_HELD_MAX, into hl.  Returns IH_OK, IH_ENOMEM or IH_ESTORE
 * (cu->err says why).
 */
int	gh_held_read(struct catchup *cu, struct gh_held_list *hl);

/*
 * Makes due (as idemhook replay does) each event of hl held under
 * "<hook_id>:<GUID>" whose GUID the nitems attempts listed for hook
 * scope/hook_id carry with its event and action, counting them in
 * cu->released; in a dry run nothing changes.  Sorts items by GUID.
 * Returns IH_OK or IH_ESTORE.
 */
int	gh_held_release(struct catchup *cu, const char *scope,
	    const char *hook_id, struct gh_item *items, size_t nitems,
	    const struct gh_held_list *hl);

#endif
