/* pg_dl.c -- libpq opened with dlopen() on first use (pg_dl.h). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#define PG_DL_NO_MACROS
#include "ih.h"
#include "pg_dl.h"

/* Debian's libpq5 package: the soname the headers belong to. */
#define PG_DL_LIB	"libpq.so.5"

struct pg_dl pg_dl;

static pthread_once_t	once = PTHREAD_ONCE_INIT;
static char		why[256];	/* empty when loaded */

static void
load(void)
{
	const char *e;
	void *h, *f;

	h = dlopen(PG_DL_LIB, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		e = dlerror();
		snprintf(why, sizeof(why), "cannot load %s (PostgreSQL "
		    "stores need the libpq5 package): %s", PG_DL_LIB,
		    e != NULL ? e : "unknown error");
		return;
	}
	/* A function pointer through void *, as POSIX dlsym() allows. */
#define X(fn) \
	f = dlsym(h, #fn); \
	if (f == NULL) { \
		snprintf(why, sizeof(why), "cannot load %s: it has no %s " \
		    "(libpq 14 or later needed)", PG_DL_LIB, #fn); \
		return; \
	} \
	*(void **)(void *)&pg_dl.fn = f;
	PG_DL_FUNCS
#undef X
}

int
pg_dl_load(char *err, size_t errlen)
{
	pthread_once(&once, load);
	if (why[0] == '\0')
		return IH_OK;
	snprintf(err, errlen, "%s", why);
	return IH_ECONFIG;
}
