/*
 * cli_check_sources.h -- the lines idemhook check opens with: the user it
 * reads the settings as, the settings file and how it was chosen, and
 * the names (never the values) of the IDEMHOOK_* variables in its
 * environment, with a note when it runs as root.  Prints to stdout only;
 * reads nothing but the passwd entry of the effective user; cannot fail.
 */
#ifndef IH_CLI_CHECK_SOURCES_H
#define IH_CLI_CHECK_SOURCES_H

#include "idemhook.h"

void	cli_check_sources(const struct cli *c);

#endif
