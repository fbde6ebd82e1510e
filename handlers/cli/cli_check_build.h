/*
 * cli_check_build.h -- idemhook check's word on what this build of the
 * programs lacks, called by cli_check.c: a build without an HTTP client
 * (NO_CURL=1, the static build: catch-up, health and the fetch of Stripe
 * thin events) or without PostgreSQL (NO_PG=1).  Prints one "note: "
 * line for each missing feature, and a "PROBLEM: " line (added to
 * *problems) for each setting that needs one and so does nothing here
 * (an API key, IDEMHOOK_HEALTH_INTERVAL).  Never prints a value.
 */
#ifndef IH_CLI_CHECK_BUILD_H
#define IH_CLI_CHECK_BUILD_H

#include "idemhook.h"

void	cli_check_build(const struct cli *c, int *problems, int *oks);

#endif
