/*
 * cli_console.c -- idemhook console-password: the console's password
 * hash, from a password read on standard input.
 */
#include <stdio.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "cli_args.h"
#include "cli_console.h"
#include "cli_text.h"
#include "console_auth.h"
#include "ih.h"

#define PASSWORD_MAX	256

static void
usage(FILE *f)
{
	fprintf(f, "usage: idemhook console-password [--cost N]\n\n"
	    "Reads the console's password on standard input (one line) and "
	    "prints\nthe line IDEMHOOK_CONSOLE_PASSWORD_HASH=<hash> for the "
	    "settings file:\na salted scrypt hash with its parameters in the "
	    "string.\n  --cost N  scrypt cost 2^N, 10 to %d (default %d)\n"
	    "Exit: 0 printed; 1 failure; 2 usage or an empty password.\n",
	    CONSOLE_SCRYPT_LN_MAX, CONSOLE_SCRYPT_LN);
}

int
cli_console_password(struct cli *c, int argc, char **argv)
{
	struct termios old, quiet;
	char pw[PASSWORD_MAX + 2], hash[CONSOLE_HASH_MAX];
	const char *v;
	long cost = CONSOLE_SCRYPT_LN;
	size_t len;
	int a, r, tty, rc = CLI_EXIT_FAIL;

	(void)c;
	for (a = 1; a < argc; a++) {
		r = cli_opt(argc, argv, &a, "--cost", &v);
		if (r > 0 && cli_parse_long(v, 10, CONSOLE_SCRYPT_LN_MAX,
		    &cost) == IH_OK)
			continue;
		if (r == 0 && strcmp(argv[a], "--help") == 0) {
			usage(stdout);
			return CLI_EXIT_OK;
		}
		usage(stderr);
		return CLI_EXIT_USAGE;
	}
	/* At a terminal, the password is not echoed. */
	tty = isatty(0) && tcgetattr(0, &old) == 0;
	if (tty) {
		fprintf(stderr, "console password: ");
		quiet = old;
		quiet.c_lflag &= ~(tcflag_t)ECHO;
		tcsetattr(0, TCSAFLUSH, &quiet);
	}
	if (fgets(pw, sizeof(pw), stdin) == NULL)
		pw[0] = '\0';
	if (tty) {
		tcsetattr(0, TCSAFLUSH, &old);
		fputc('\n', stderr);
	}
	len = strlen(pw);
	if (len > 0 && pw[len - 1] == '\n')
		pw[--len] = '\0';
	else if (len > PASSWORD_MAX) {
		cli_errorf("console-password: the password is longer than %d "
		    "bytes", PASSWORD_MAX);
		rc = CLI_EXIT_USAGE;
		goto out;
	}
	if (len > 0 && pw[len - 1] == '\r')
		pw[--len] = '\0';
	if (len == 0) {
		cli_errorf("console-password: the password is empty");
		rc = CLI_EXIT_USAGE;
		goto out;
	}
	if (console_hash_password(pw, len, (int)cost, hash, sizeof(hash)) !=
	    IH_OK) {
		cli_errorf("console-password: hashing failed");
		goto out;
	}
	printf("IDEMHOOK_CONSOLE_PASSWORD_HASH=%s\n", hash);
	rc = CLI_EXIT_OK;
out:
	OPENSSL_cleanse(pw, sizeof(pw));
	return rc;
}
