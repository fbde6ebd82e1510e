/*
 * json_int.h -- the JSON reader's own parts, shared by its files:
 * json_parse.c (the strict parser: yajl's callbacks and the streaming
 * match of the members asked for), json_check.c (the checks beyond
 * yajl's) and json_path.c (the path syntax and the three ways to ask:
 * json_fields(), json_path_text(), json_extract()).  Nothing else
 * includes it: callers hold a struct json only through json.h, as an
 * opaque pointer.
 *
 * The caller of json_parse() owns the targets: it fills target[0..
 * ntargets) with their steps and where each value goes, and frees those
 * values when the parse fails.  The parser owns everything else in
 * struct json, and keeps no pointer into the body once it returns.
 */
#ifndef IH_JSON_INT_H
#define IH_JSON_INT_H

#include <stddef.h>
#include <stdint.h>

#include <yajl/yajl_parse.h>

#include "json.h"

#define JSON_PATH_MAX	128	/* longest path json_path_text() reads */
#define JSON_STEPS_MAX	64	/* steps in such a path: each takes 2 bytes */
#define JSON_KEY_ARENA	0x80000000u	/* key offset is into the arena */
/* A target whose elements' places go to js->spans (json_items()). */
#define JSON_WANT_SPANS	3

/* One step of a path: an object member's name or an array index. */
struct json_step {
	const char	*name;		/* NULL for an index step */
	size_t		 name_len;
	unsigned long	 index;
};

/* A member asked for, and how much of its path the parser stands on. */
struct json_target {
	struct json_step steps[JSON_STEPS_MAX];
	size_t		 nsteps;
	size_t		 matched;	/* open containers on the path */
	int		 selected;	/* the current key is the next step */
	char		**val;		/* where the value goes */
	int		 raw;		/* wants a container's text */
	size_t		 raw_start;	/* where that container began */
	size_t		 raw_max;	/* its longest text returned */
};

/* An open array or object. */
struct json_level {
	size_t		 key_base;	/* its first key in keys[] */
	size_t		 arena_base;	/* its first byte in arena[] */
	unsigned long	 index;		/* next element's index (arrays) */
	int		 is_array;
};

struct json {
	yajl_handle	 h;		/* the parser of the current document */
	const unsigned char *doc;
	size_t		 len;
	size_t		 last_end;	/* end of the last token called back */
	size_t		 depth;		/* containers open */
	uint32_t	*keys;		/* keys of the open objects */
	size_t		 nkeys, keys_cap;
	char		*arena;		/* their escaped keys, decoded */
	size_t		 alen, acap;
	size_t		 ntargets;
	int		 err;		/* why a callback stopped the parse */
	int		 done;		/* the top-level object closed */
	const char	*boolean;	/* "true"/"false" while one is read */
	/* json_items(): where the array's elements are, at most max. */
	struct json_span *spans;
	size_t		 nspans, max_spans;
	unsigned long	 parses;	/* documents parsed, for the tests */
	/*
	 * Last, and left as malloc gave them by json_open() (17 KiB): a
	 * level is set as its container opens, a target by json_path.c
	 * before each parse.
	 */
	struct json_level level[JSON_MAX_DEPTH + 1];
	struct json_target target[JSON_MAX_FIELDS];
};

/*
 * Parses doc, which must be an acceptable JSON object (json.h), filling
 * the values of js->target[0..js->ntargets).  Returns IH_OK, IH_EBODY
 * or IH_ENOMEM; on failure the values may hold something: the caller
 * frees them.
 */
int	json_parse(struct json *js, const void *doc, size_t len);

/*
 * The checks of json_check.c, called by json_parse.c's callbacks.
 *
 * Checks the escapes of the string whose decoded text s yajl just gave
 * (s points into the body when the string had none): sets *nul when it
 * holds \u0000; returns 1, or 0 for a lone surrogate.
 */
int	json_escapes_ok(const struct json *js, const unsigned char *s,
	    int *nul);

/* Returns 1 when the number t (n bytes, valid JSON) is finite as a double. */
int	json_number_finite(const char *t, size_t n);

/*
 * Returns 1 when a key repeats among the n key offsets at k (sorted in
 * place when there are many), else 0.
 */
int	json_keys_repeat(const struct json *js, uint32_t *k, size_t n);

#endif
