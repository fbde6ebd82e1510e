/*
 * cli_check_console.c -- idemhook check's findings about the console's
 * sign-in settings: which sign-in is set up, never the hash or the key.
 */
#include <stdio.h>
#include <string.h>

#include "cli_check_store.h"
#include "config.h"
#include "config_vars.h"
#include "console_auth.h"
#include "ih.h"

/* A console setting from the environment, then the settings file. */
static const char *
console_setting(const struct cli *c, const char *name)
{
	const char *v = config_vars_get((void *)&c->env, name);

	if (v == NULL || *v == '\0')
		v = config_vars_get((void *)&c->file, name);
	return v != NULL && *v != '\0' ? v : NULL;
}

/*
 * IDEMHOOK_CONSOLE_TLS_PROXY: the console takes only "1" (anything else
 * is off, so a "yes" would silently keep the default); set, it takes
 * Basic credentials from any address and sends HSTS, trusting a proxy
 * in front to terminate TLS, which check cannot see.
 */
static void
check_tls_proxy(const struct cli *c, int basic, int *problems, int *oks)
{
	const char *tp = console_setting(c, "IDEMHOOK_CONSOLE_TLS_PROXY");

	if (tp != NULL && strcmp(tp, "1") != 0 && strcmp(tp, "0") != 0) {
		cli_check_say(0, problems, oks, "console: "
		    "IDEMHOOK_CONSOLE_TLS_PROXY must be 1 (a proxy in front "
		    "terminates TLS) or unset; other values mean unset");
		return;
	}
	if (tp == NULL || strcmp(tp, "1") != 0) {
		if (basic)
			cli_check_say(1, problems, oks, "console: Basic "
			    "sign-in only over HTTPS or from loopback "
			    "(IDEMHOOK_CONSOLE_TLS_PROXY unset)");
		return;
	}
	printf("note: console: IDEMHOOK_CONSOLE_TLS_PROXY=1: %severy "
	    "answer carries HSTS, trusting that a proxy in front "
	    "terminates TLS: the web server must be reachable only through "
	    "that proxy, or a password can cross the network in clear\n",
	    basic ? "Basic credentials are taken from any address and " :
	    "");
}

/*
 * Reports the console's settings as the secrets' are: which sign-in is
 * set up, never the hash or the key.  A console that is not set up is
 * not a problem (it serves nothing); a half or broken setup is.
 */
void
cli_check_console(const struct cli *c, int *problems, int *oks)
{
	const char *mode = console_setting(c, "IDEMHOOK_CONSOLE_AUTH");
	const char *user = console_setting(c, "IDEMHOOK_CONSOLE_USER");
	const char *hash = console_setting(c,
	    "IDEMHOOK_CONSOLE_PASSWORD_HASH");
	const char *key = console_setting(c, "IDEMHOOK_CONSOLE_KEY");
	const char *ro = console_setting(c, "IDEMHOOK_CONSOLE_READONLY");
	int readonly = ro != NULL && strcmp(ro, "0") != 0;

	if (mode != NULL && strcmp(mode, "server") == 0) {
		if (key == NULL || strlen(key) < 32)
			cli_check_say(0, problems, oks, "console: "
			    "IDEMHOOK_CONSOLE_AUTH=server needs "
			    "IDEMHOOK_CONSOLE_KEY (32 or more random "
			    "characters: openssl rand -hex 32) for its CSRF "
			    "tokens");
		else
			cli_check_say(1, problems, oks, "console: sign-in by "
			    "the web server (REMOTE_USER)%s",
			    readonly ? ", read-only" : "");
		check_tls_proxy(c, 0, problems, oks);
		return;
	}
	if (mode != NULL && strcmp(mode, "basic") != 0) {
		cli_check_say(0, problems, oks, "console: "
		    "IDEMHOOK_CONSOLE_AUTH must be basic or server");
		return;
	}
	if (user == NULL && hash == NULL) {
		printf("note: console: not configured (console.fcgi answers "
		    "500 not_configured): set IDEMHOOK_CONSOLE_USER and "
		    "IDEMHOOK_CONSOLE_PASSWORD_HASH (idemhook "
		    "console-password) to use it\n");
		return;
	}
	if (user == NULL || hash == NULL) {
		cli_check_say(0, problems, oks, "console: set both "
		    "IDEMHOOK_CONSOLE_USER and IDEMHOOK_CONSOLE_PASSWORD_HASH "
		    "(idemhook console-password prints the hash line)");
		return;
	}
	if (console_verify_password(hash, "-", 1) == IH_ECONFIG) {
		cli_check_say(0, problems, oks, "console: "
		    "IDEMHOOK_CONSOLE_PASSWORD_HASH is not a hash from "
		    "idemhook console-password");
		return;
	}
	cli_check_say(1, problems, oks, "console: HTTP Basic sign-in for user "
	    "%s, password hash set (scrypt)%s", user,
	    readonly ? ", read-only" : "");
	check_tls_proxy(c, 1, problems, oks);
}
