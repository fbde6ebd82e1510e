/*
 * version.h -- each event's API version, and the versions the switch is
 * written for (IDEMHOOK_<PROVIDER>_API_VERSIONS).
 *
 * A provider names where its version is: a member of the signed body
 * (Stripe's api_version), or else a header the signature does not cover
 * (Shopify's X-Shopify-API-Version).  A version is kept with the event;
 * when the setting lists versions, an event of another version (or of
 * none) is recorded as held instead of received, and processed only when
 * the operator replays it.  An unsigned version may only label and hold
 * an event: it never replaces a held one (version_replaces()).
 *
 * config.c reads the setting (IDEMHOOK_<PROVIDER>_API_VERSIONS) and keeps
 * the list in struct config (config_free() frees it) through
 * version_list.h, which also says what a version looks like; a value of
 * another shape is not a version (the event has none).  Failures:
 * IH_ECONFIG with the reason in err for a bad setting, IH_ENOMEM.
 */
#ifndef IH_VERSION_H
#define IH_VERSION_H

#include <stddef.h>

#include "provider.h"
#include "version_list.h"

/*
 * The version of the verified event of pr, as p says where it is, into
 * out ("" when it has none or p names no place).  Returns IH_OK or
 * IH_ENOMEM.
 */
int	version_of(const struct provider *p, const struct provider_req *pr,
	    char *out, size_t outlen);

/*
 * 1 when an event of p with version v, expected under list, replaces a
 * held event of its id: only a version the signature covers, and only
 * when a list is set (else nothing is held).
 */
int	version_replaces(const struct provider *p, const char *list,
	    const char *v);

#endif
