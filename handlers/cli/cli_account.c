/* cli_account.c -- the command's --account NAME (cli_account.h). */
#include <stdio.h>
#include <string.h>

#include "account.h"
#include "cli_account.h"
#include "cli_text.h"

/* The commands that read or change one account's events or objects. */
static const char *const with_account[] = { "list", "show", "verify",
    "replay", "purge", "stats", "objects", "object", "catch-up", "smoke",
    NULL };

/* What --account does for each of them, for their --help. */
static const struct {
	const char	*cmd;
	const char	*what;
} account_help[] = {
	{ "list", "only account NAME's events (default: every account's)" },
	{ "show", "the event of account NAME (default: the default account)" },
	{ "verify", "the event of account NAME, checked with its own\n"
	    "                  secrets (default: the default account)" },
	{ "replay", "account NAME's events only; one event: of account NAME\n"
	    "                  (default: the default account's)" },
	{ "purge", "only account NAME's events (default: every account's)" },
	{ "stats", "only account NAME's figures (default: every account, one "
	    "row\n                  each, shown as PROVIDER/ACCOUNT)" },
	{ "objects", "only account NAME's objects (default: every account's; "
	    "the\n                  ACCOUNT column says whose)" },
	{ "object", "the object of account NAME (default: the default "
	    "account)" },
	{ "catch-up", "record into account NAME, with its own API key\n"
	    "                  (IDEMHOOK_<P>_API_KEY@NAME)" },
	{ "smoke", "sign with account NAME's own secret\n"
	    "                  (IDEMHOOK_<P>_SECRET@NAME); --list, --purge: "
	    "its\n                  test events only" },
};

void
cli_account_help(FILE *f, const char *cmd)
{
	size_t i;

	for (i = 0; i < sizeof(account_help) / sizeof(account_help[0]); i++)
		if (strcmp(account_help[i].cmd, cmd) == 0)
			fprintf(f, "  --account NAME  %s\n",
			    account_help[i].what);
}

int
cli_account_arg(int argc, char **argv, int from, const char *cmd,
    const char **account)
{
	const char *v = NULL;
	int a, i, j, takes = 0, width;

	*account = NULL;
	for (i = 0; with_account[i] != NULL; i++)
		takes |= strcmp(with_account[i], cmd) == 0;
	for (a = from; a < argc && strcmp(argv[a], "--") != 0; a++) {
		width = 0;
		if (strcmp(argv[a], "--account") == 0) {
			if (a + 1 >= argc) {
				cli_errorf("--account needs a name");
				return -1;
			}
			v = argv[a + 1];
			width = 2;
		} else if (strncmp(argv[a], "--account=", 10) == 0) {
			v = argv[a] + 10;
			width = 1;
		}
		if (width == 0)
			continue;
		if (!takes) {
			cli_errorf("%s takes no --account", cmd);
			return -1;
		}
		if (!account_name_ok(v)) {
			cli_errorf("--account: an account name is 1 to %d of "
			    "a-z, 0-9, _ and -", ACCOUNT_NAME_MAX);
			return -1;
		}
		*account = v;
		for (j = a; j + width < argc; j++)
			argv[j] = argv[j + width];
		argc -= width;
		argv[argc] = NULL;
		a--;
	}
	return argc;
}
