/*
 * provider.h -- what a provider's program supplies to the shared
 * pipeline: how to verify, how to name the event, and its switch.
 *
 * A provider is one file in handlers/ that fills a struct provider and
 * calls serve_main().  Everything else (reading the request, the store,
 * the answer, the log, processing) is the same for every provider and
 * lives in this library.
 */
#ifndef IH_PROVIDER_H
#define IH_PROVIDER_H

#include <stddef.h>
#include <time.h>

#include "config.h"
#include "event.h"
#include "json.h"
#include "object.h"
#include "request.h"
#include "store.h"

struct dispatch_ctx;

/*
 * A provider's switch on event type, which dispatch.h runs and gives
 * what it may use (ctx).  Returns IH_OK when the event's effects are
 * complete, or another code with a reason in err to have the attempt
 * rolled back and retried.
 */
typedef int (*dispatch_fn)(const struct event *ev,
    struct dispatch_ctx *ctx, char *err, size_t errlen);

/*
 * A provider's mapping: fills *f (object.h) with the object ev sets, or
 * leaves f->mapped 0.  Pure: it reads ev only, so it may run outside a
 * transaction.  Returns IH_OK or IH_ENOMEM; f is freed by the caller
 * with object_found_free() either way.
 */
typedef int (*dispatch_map_fn)(const struct event *ev,
    struct object_found *f);

/* The most rules of the object whose paths one receipt's pass reads. */
#define PROVIDER_RULES	2

/*
 * The body's members that a request's readers ask for (the provider's
 * body_keys, its version_key and source_account_key), read in one pass
 * of the parser for all of them (provider_memo_fill()).
 */
struct provider_memo {
	int		 rc;		/* json_extract()'s, or -1: not read */
	size_t		 n;
	const char	*keys[JSON_MAX_FIELDS];
	char		*vals[JSON_MAX_FIELDS];
	/*
	 * Set when the same pass also read the object by the rules the
	 * provider's map_paths gave (their values left in w, rule i's at
	 * at[i]): the switch of an event processed in this process then
	 * parses nothing.
	 */
	int		 has_object;
	size_t		 nrules;
	struct object_rule rules[PROVIDER_RULES];
	int		 at[PROVIDER_RULES][OBJECT_WANTS];
	struct json_want w[JSON_MAX_FIELDS];
	char		 paths[JSON_MAX_FIELDS][64];	/* "$.key" */
};

/* What verify and identify see of one request. */
struct provider_req {
	const struct request	*req;
	const struct config	*cfg;	/* secrets, tolerance */
	time_t			 now;
	int			 check_time;	/* 0 when re-verifying later */
	struct json		*json;
	struct provider_memo	*memo;	/* or NULL */
};

/*
 * json_fields() over pr's body, with its contract: answered from pr's
 * memo when the memo holds every key asked for, else by parsing.
 */
int	provider_fields(const struct provider_req *pr,
	    const char *const *keys, size_t n, char **vals);

/*
 * json_path_text() over pr's body, with its contract: answered from pr's
 * memo when one of the provider's body_keys is path, else by parsing.
 */
int	provider_path_text(const struct provider_req *pr, const char *path,
	    char **val);

/* The event's identity, filled by identify; strings are malloc'd. */
struct ident {
	char	*event_id;
	char	*event_type;
	char	*subtype;	/* or NULL: a finer type (GitHub's action) */
	char	*order_key;	/* or NULL: see struct event (event.h) */
};

/*
 * Names the event from the body's top-level members id_key and type_key
 * (id_key NULL: only the type).  Returns IH_OK; IH_EBODY with a static
 * *why when the body is not a JSON object or a member is absent or
 * empty; IH_ENOMEM.
 */
int	ident_from_body(const struct provider_req *pr, const char *id_key,
	    const char *type_key, struct ident *id, const char **why);

/* Sets *dst to a copy of the first len bytes of v.  IH_OK or IH_ENOMEM. */
int	ident_set(char **dst, const char *v, size_t len);
void	ident_free(struct ident *id);

struct provider {
	const char	 *name;		/* "stripe": the store's provider */
	const char	 *secret_var;	/* "IDEMHOOK_STRIPE_SECRET" */
	/* Headers stored with the event so it can be re-verified. */
	const char *const *kept_headers;	/* NULL-terminated */
	/*
	 * The header every authentic request carries (the signature or the
	 * token).  A request without it is refused before its body is read.
	 */
	const char	 *sig_header;
	/*
	 * Set when the event's id and type come from headers the signature
	 * does not cover (GitHub, Shopify): the body's fingerprint is then
	 * checked against the store, and a body already recorded is
	 * recorded again under a new id only as repeat_ok allows.
	 */
	int		  type_unsigned;
	/*
	 * Or NULL: a header the provider repeats on every delivery one
	 * action causes, whatever its type (Shopify's X-Shopify-Event-Id).
	 * repeat_ok learns whether the body's first event carried the
	 * request's value of it.  Being unsigned, it may only narrow what a
	 * body is allowed to be, never widen it.
	 */
	const char	 *same_action_header;
	/*
	 * Or NULL (the same type only): whether a body first recorded as
	 * first may be recorded again as ev, under a new id; that is, whether
	 * the provider itself ever sends that.  Returns 1, or 0 with a static
	 * *why for a body it never sends so (a replay, unless hold_replays).
	 */
	int	(*repeat_ok)(const struct store_first *first,
		    const struct event *ev, const char **why);
	/*
	 * How a body repeat_ok refuses is taken.  Unset (Shopify): as a
	 * replay, recorded nowhere, running nothing, and answered 200, so
	 * that a provider that retries (Shopify deletes a subscription
	 * after 8 failures) never does so for one.  Set (GitHub, whose
	 * events without a timestamp repeat byte for byte under a new id
	 * when the same thing happens twice): recorded as held with its
	 * reason (struct event's held_why) and answered 200 like any event
	 * durably recorded; it runs nothing until the provider's API
	 * confirms its id (idemhook catch-up, work) or the operator
	 * releases it (idemhook replay, the console).
	 */
	int		  hold_replays;

	/*
	 * Checks the signature or token over the raw body.  Returns IH_OK,
	 * IH_EAUTH or IH_ESTALE, with *why set to a static reason safe to
	 * log (never a secret or signature).
	 */
	int	(*verify)(const struct provider_req *pr, const char **why);

	/*
	 * Names the verified event.  Returns IH_OK, IH_EBODY with a static
	 * *why, or IH_ENOMEM.
	 */
	int	(*identify)(const struct provider_req *pr, struct ident *id,
		    const char **why);

	/* The provider's switch on event type: see dispatch.h. */
	dispatch_fn	handle;

	/*
	 * Or NULL: the object an event sets (dispatch.h, object.h), as its
	 * switch applies it; also read before the actions, so that they can
	 * be matched on the object's new status.
	 */
	dispatch_map_fn	map_object;

	/*
	 * Or NULL: sets *r to the rule by which map_object reads ev and
	 * returns 1 (0: ev sets no object), for a provider whose map_object
	 * is object_read() by that rule and nothing else.  A kind the type
	 * names, not the body, is written into kind, where r->kind points.
	 */
	int	(*map_rule)(const struct event *ev, struct object_rule *r,
		    char kind[OBJECT_KIND_MAX]);

	/*
	 * Or NULL: the rules whose paths the receipt's one pass over the
	 * body also reads (at most max, into r; their number returned),
	 * chosen before the body is read, from pr's headers and bytes only:
	 * the rule of a type named by a header, or every rule map_rule may
	 * give when the body names the type.  A kind the type names, not
	 * the body, may be left NULL.  The switch of an event whose rule is
	 * among them then maps from that pass (provider_memo_found()).
	 */
	size_t	(*map_paths)(const struct provider_req *pr,
		    struct object_rule *r, size_t max);

	/*
	 * When set, an authenticated body that identify refuses is kept as
	 * a quarantined event and answered 200, because the provider would
	 * otherwise retry it until it pauses the whole queue (Asaas).
	 */
	int	keep_unusable;

	/*
	 * Or NULL: where the event's API version is (version.h), a member
	 * of the signed body (Stripe's "api_version"), or else a header the
	 * signature does not cover (Shopify's X-Shopify-API-Version).
	 */
	const char	*version_key;
	const char	*version_header;

	/*
	 * Or NULL: the member of the signed body that names the provider's
	 * own sub-account the event is about (Stripe Connect's "account"),
	 * kept searchable (idemhook list --source-account).
	 */
	const char	*source_account_key;

	/*
	 * Or NULL: sets *yes when the verified body is a notification that
	 * carries no event data (Stripe's thin event), which is recorded
	 * with needs_fetch (event.h) and never processed by a receiver.
	 * Returns IH_OK or IH_ENOMEM.
	 */
	int	(*needs_fetch)(const struct provider_req *pr, int *yes);

	/*
	 * Or NULL: the top-level members of the body that identify and
	 * needs_fetch read through provider_fields(), or the paths ("$."
	 * first) they read through provider_path_text() (NULL-terminated),
	 * so that one pass of the parser serves them all.
	 */
	const char *const *body_keys;
};

/*
 * Reads p's body_keys, version_key and source_account_key from pr's
 * body in one pass into m, with the paths of the rules p->map_paths
 * gives (m->rc -1 when it could not, e.g. out of memory: each reader
 * then parses for itself).  provider_memo_free() frees the values.
 */
void	provider_memo_fill(struct provider_memo *m, const struct provider *p,
	    const struct provider_req *pr);
void	provider_memo_free(struct provider_memo *m);

/*
 * Fills *f with what p->map_object would find in ev, whose payload is
 * the body m was filled from, when m's pass read the object by the
 * paths of the rule p->map_rule gives for ev; at most once per fill.
 * Returns IH_OK, IH_ENOMEM, or IH_ENOTFOUND when m cannot tell (the
 * caller then maps by parsing).  f is freed with object_found_free().
 */
int	provider_memo_found(struct provider_memo *m,
	    const struct provider *p, const struct event *ev,
	    struct object_found *f);

/*
 * p->map_object by p->map_rule: object_read() of ev by the rule it
 * gives, or f->mapped 0.  IH_OK or IH_ENOMEM; f is freed with
 * object_found_free() either way.
 */
int	provider_map(const struct provider *p, const struct event *ev,
	    struct object_found *f);

#endif
