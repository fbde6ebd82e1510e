/*
 * fault.h -- crash points for the fault-injection tests.
 *
 * fault_point("after-commit") kills the calling process with SIGKILL when
 * the environment variable IDEMHOOK_FAULT equals the point's name, so a
 * test can stop a receiver at an exact step (before the commit, after
 * the commit but before the answer, during processing) and check that
 * the provider's retry and "idemhook work" still record and process
 * every event once.  When IDEMHOOK_FAULT_ONCE names a file, the point
 * fires only for the process that creates that file, so one crash is
 * injected and the retry then succeeds through the same server.
 *
 * The points exist only in builds compiled with -DIH_FAULTS (the
 * sanitized test build); elsewhere fault_point() does nothing, whatever
 * the environment says.
 */
#ifndef IH_FAULT_H
#define IH_FAULT_H

/* Kills the process at the point called name when so told (see above). */
void	fault_point(const char *name);

/* Returns 1 when this build honours IDEMHOOK_FAULT, else 0. */
int	fault_enabled(void);

#endif
