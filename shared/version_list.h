/*
 * version_list.h -- the API versions a provider's switch is written for
 * (IDEMHOOK_<PROVIDER>_API_VERSIONS), as a list, and the shape of one
 * version: the part of version.h that needs no provider, so that
 * config.c, which reads the setting, stays below the pipeline.
 *
 * Versions are at most VERSION_MAX - 1 bytes of [A-Za-z0-9._-]; a value
 * of another shape is not a version.  A list is "v1,v2", from
 * version_list(); NULL stands for no setting, which accepts any version.
 */
#ifndef IH_VERSION_LIST_H
#define IH_VERSION_LIST_H

#include <stddef.h>

#define VERSION_MAX		64
/* At most this many versions in one setting. */
#define VERSION_LIST_MAX	16

/* 1 when the len bytes at v are a version, else 0. */
int	version_ok(const char *v, size_t len);

/*
 * Normalises v, the value of the setting name (a list separated by
 * commas or spaces), to "v1,v2" in a new string *out that the caller
 * frees.  Returns IH_OK, IH_ECONFIG with the reason (naming name) in err,
 * or IH_ENOMEM.
 */
int	version_list(const char *name, const char *v, char **out, char *err,
	    size_t errlen);

/* 1 when list (from version_list(); NULL: any) names v ("" or NULL: no). */
int	version_expected(const char *list, const char *v);

#endif
