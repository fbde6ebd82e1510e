/*
 * object.h -- the ordering guard of the objects table, and the pieces
 * of a provider's mapping that every switch shares.
 *
 * An object's row holds the state set by the event with the greatest
 * key (source time, rank, event id), compared in that order: the
 * provider's time for the state, then the rank of its status, then the
 * event ids bytewise.  The key is total, so every order of delivery of
 * the same events ends in the same row, and redelivering an event
 * changes nothing.  Ranks: OBJECT_RANK_DELETED for a tombstone, above
 * every terminal status, which ranks above every other status; so a tie
 * of source times never moves a terminal state back.  An event whose
 * key is not greater than the row's is "stale" when its source time is
 * older and "tied" when equal; either way only its history row is
 * written, and the event is processed as any other.
 */
#ifndef IH_OBJECT_H
#define IH_OBJECT_H

#include <stddef.h>
#include <stdint.h>

#define OBJECT_JSON_MAX		(1024 * 1024)	/* longest object kept */
#define OBJECT_KIND_MAX		64	/* kind's size, with its NUL */
#define OBJECT_ID_MAX		256	/* longest object id, with its NUL */

#define OBJECT_RANK_OPEN	1	/* any status not terminal, or none */
#define OBJECT_RANK_TERMINAL	2	/* the first terminal status */
#define OBJECT_RANK_DELETED	100	/* a tombstone */

/* The verdicts, as stored in the history ("applied", ...). */
enum object_verdict {
	OBJECT_APPLIED = 1,
	OBJECT_STALE,
	OBJECT_TIED
};

/* The key an event sets, or a row holds. */
struct object_key {
	int64_t		 source_ms;
	int		 rank;
	const char	*event_id;
};

/*
 * Returns OBJECT_APPLIED when ev's key is greater than row's (row NULL:
 * no row yet), else OBJECT_STALE (older source time) or OBJECT_TIED
 * (same source time).
 */
int	object_guard(const struct object_key *row,
	    const struct object_key *ev);

/* The verdict's name: "applied", "stale", "tied", or "?" . */
const char *object_verdict_name(int verdict);

/*
 * The rank of status: OBJECT_RANK_DELETED for a tombstone; for the i-th
 * entry of terminal (NULL-terminated, in rising order, or NULL),
 * OBJECT_RANK_TERMINAL + i; else OBJECT_RANK_OPEN.
 */
int	object_rank(const char *status, const char *const *terminal,
	    int deleted);

/*
 * Parses a provider's time into Unix ms: an integer of Unix seconds
 * ("1714560000"), or an ISO 8601 date-time ("2024-05-01T12:00:00Z",
 * "2024-05-01T09:00:00.250-03:00", "2024-05-01 12:00:00", taken as UTC
 * without an offset) or date ("2024-05-01").  Returns 0, or -1 for
 * anything else (an out-of-range field, trailing text).
 */
int	object_time_parse(const char *s, int64_t *ms);

/*
 * Where an event of one provider carries its object.  Paths are
 * json_path_text()'s ("$.data.object.id"); a NULL path is not read.
 */
struct object_rule {
	const char		*kind;		/* or NULL: read at kind_path */
	const char		*kind_path;
	const char		*id_path;	/* a string or an integer */
	const char		*status_path;
	/* Each *2 path is read when the first one gives nothing. */
	const char		*status_path2;
	const char		*time_path;	/* see object_time_parse() */
	const char		*time_path2;
	const char		*object_path;	/* NULL: the whole body */
	const char *const	*terminal;	/* see object_rank() */
	int			 deleted;	/* a tombstone */
};

/* What object_extract() found: the object an event sets, if any. */
struct object_found {
	int		 mapped;	/* 0: the event sets no object */
	char		 kind[OBJECT_KIND_MAX];
	char		*object_id;	/* malloc'd */
	char		*status;	/* malloc'd; "" when none */
	char		*json;		/* malloc'd, NUL-terminated, or NULL */
	size_t		 json_len;
	int64_t		 source_ms;	/* 0: none found in the body */
	int		 rank;
	int		 deleted;
};

/*
 * Sets *dst to a copy of src (free it with object_found_free() either
 * way).  IH_OK or IH_ENOMEM.
 */
int	object_found_copy(struct object_found *dst,
	    const struct object_found *src);

struct json;
struct json_want;

/*
 * The one pass that reads an object with other members (provider.h's
 * memo): object_want() appends rule's paths to the wants w[0..*n) of
 * json_extract(), their places to at, or returns -1 (nothing appended)
 * when they would make more than JSON_MAX_FIELDS; once json_extract()
 * has returned IH_OK, object_take() fills *f from them as
 * object_extract() would, taking the values it keeps (the caller frees
 * the others).  object_take() returns IH_OK or IH_ENOMEM.
 */
#define OBJECT_WANTS	7
int	object_want(const struct object_rule *rule, struct json_want *w,
	    size_t *n, int at[OBJECT_WANTS]);
int	object_take(const struct object_rule *rule, struct json_want *w,
	    const int at[OBJECT_WANTS], const void *body, size_t len,
	    struct object_found *f);

/* Returns 1 when a and b read the same kind and paths, else 0. */
int	object_rule_reads_same(const struct object_rule *a,
	    const struct object_rule *b);

/*
 * Reads the object of body (len bytes) by rule, with the strict parser
 * js (json.h), into *f.  f->mapped is 0 when the body is not an
 * acceptable JSON object or lacks a kind or an id (empty, too long or
 * holding a control character); a status, time or object that is
 * absent leaves "", 0 or NULL.  A deleted object without a status gets
 * "deleted".  Returns IH_OK or IH_ENOMEM; free f with
 * object_found_free() either way.
 */
int	object_extract(struct json *js, const struct object_rule *rule,
	    const void *body, size_t len, struct object_found *f);

void	object_found_free(struct object_found *f);

/* object_extract() with a parser of its own.  IH_OK or IH_ENOMEM. */
int	object_read(const struct object_rule *rule, const void *body,
	    size_t len, struct object_found *f);

/*
 * Returns 1 when s ends with suffix (object_suffix), begins with prefix
 * (object_prefix) or equals name (object_name_is, name NULL: never),
 * or when a and b have the same part before their first '/'
 * (object_same_kind: orders/create and orders/updated), else 0.  For the
 * public names of a mapping table (event types, topics, actions): a
 * provider file compares its MAC or token only through verify_equal().
 */
int	object_suffix(const char *s, const char *suffix);
int	object_prefix(const char *s, const char *prefix);
int	object_name_is(const char *s, const char *name);
int	object_same_kind(const char *a, const char *b);

#endif
