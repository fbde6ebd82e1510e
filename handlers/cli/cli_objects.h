/*
 * cli_objects.h -- idemhook objects and idemhook object: the current state
 * of the objects the switches keep, and one object's history with the
 * verdict for each event (cli_objects.c).  Each command takes its argv
 * (argv[0] its name), prints its output and its errors, and returns a
 * CLI_EXIT_* code (idemhook.h).
 */
#ifndef IH_CLI_OBJECTS_H
#define IH_CLI_OBJECTS_H

#include "idemhook.h"

int	cli_objects(struct cli *c, int argc, char **argv);
int	cli_object(struct cli *c, int argc, char **argv);

#endif
