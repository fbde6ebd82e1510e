/* harden.c -- no core dumps, no ptrace: secrets stay in this process. */
#include <sys/resource.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>

#include "config.h"
#include "config_vars.h"
#include "harden.h"
#include "ih.h"

int
harden_process(char *err, size_t errlen)
{
	struct rlimit rl;

	rl.rlim_cur = 0;
	rl.rlim_max = 0;
	if (setrlimit(RLIMIT_CORE, &rl) != 0) {
		snprintf(err, errlen, "setrlimit(RLIMIT_CORE, 0): %s",
		    strerror(errno));
		return IH_EIO;
	}
#ifdef __linux__
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) {
		snprintf(err, errlen, "prctl(PR_SET_DUMPABLE, 0): %s",
		    strerror(errno));
		return IH_EIO;
	}
#endif
	return IH_OK;
}

void
harden_scrub_environ(char **env)
{
	char *eq;
	size_t n;

	for (; env != NULL && *env != NULL; env++) {
		n = config_env_name_len(*env);
		if (n == 0)
			continue;
		eq = *env + n;
		*eq = '\0';
		if (config_is_secret(*env) || config_is_console_secret(*env))
			OPENSSL_cleanse(eq + 1, strlen(eq + 1));
		*eq = '=';
	}
}
