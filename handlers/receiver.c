/*
 * receiver.c -- the main() of every provider's program.  The Makefile
 * builds it once per provider with -DIH_PROVIDER=<name>_provider, so the
 * provider files (handlers/<name>.c) have no main() and each is compiled
 * once, for its program, the idemhook command, the unit tests and the
 * fuzzers alike.
 */
#include "provider.h"
#include "serve.h"

#ifndef IH_PROVIDER
#error "build with -DIH_PROVIDER=<name>_provider (see the Makefile)"
#endif

extern const struct provider IH_PROVIDER;

int
main(void)
{
	return serve_main(&IH_PROVIDER);
}
