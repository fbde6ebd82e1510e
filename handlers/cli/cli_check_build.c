/* cli_check_build.c -- idemhook check: this build (cli_check_build.h). */
#include <stdio.h>
#include <string.h>

#include "cli_check_build.h"
#include "cli_check_store.h"
#include "config_vars.h"
#include "store_thin.h"

#ifdef IH_NO_POSTGRES
#define CHECK_HAS_PG	0
#else
#define CHECK_HAS_PG	1
#endif

/* Whether name only works with an HTTP client (catch-up, health, thin). */
static int
needs_client(const char *name)
{
	const char *at = strchr(name, '@');
	size_t n = at != NULL ? (size_t)(at - name) : strlen(name);

	if (strncmp(name, "IDEMHOOK_", 9) != 0)
		return 0;
	if (n > 8 && memcmp(name + n - 8, "_API_KEY", 8) == 0)
		return 1;
	return n == 24 && memcmp(name, "IDEMHOOK_HEALTH_INTERVAL", 24) == 0;
}

/* The settings of v (one source, named where) that do nothing here. */
static void
unusable(const struct config_vars *v, const char *where, int *problems,
    int *oks)
{
	size_t i;

	for (i = 0; i < v->n; i++)
		if (needs_client(v->names[i]) && v->values[i][0] != '\0')
			cli_check_say(0, problems, oks, "%.120s (%s) does "
			    "nothing in this build, which has no HTTP client: "
			    "run catch-up, health and idemhook work from a "
			    "dynamic build (make), or remove it", v->names[i],
			    where);
}

void
cli_check_build(const struct cli *c, int *problems, int *oks)
{
	if (!STORE_THIN_CAN_FETCH) {
		printf("note: this build has no HTTP client (made without "
		    "libcurl, as the static build is): catch-up, health and "
		    "Stripe thin events are unavailable; thin events are "
		    "recorded and wait for the idemhook work of a dynamic "
		    "build\n");
		unusable(&c->env, "environment", problems, oks);
		unusable(&c->file, "settings file", problems, oks);
	}
	if (!CHECK_HAS_PG)
		printf("note: this build has no PostgreSQL client (the static "
		    "build): the store is a SQLite file\n");
}
