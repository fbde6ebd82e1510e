/*
 * cli_account.h -- the command's --account NAME (issue 29, account.h):
 * which account the event commands read and change.  Taken out of argv
 * once, in main(), so every command sees only its own arguments; the
 * commands read struct cli's account.  Nothing here allocates.
 */
#ifndef IH_CLI_ACCOUNT_H
#define IH_CLI_ACCOUNT_H

#include <stdio.h>

/*
 * Takes "--account NAME" or "--account=NAME" out of argv[from..argc)
 * (before a "--"), for a command that knows accounts, into *account
 * (pointing into argv).  Returns the new argc, or -1 after printing why:
 * a bad name, a missing value, or a command that has no accounts.
 */
int	cli_account_arg(int argc, char **argv, int from, const char *cmd,
	    const char **account);

/*
 * After a command's --help: the --account option as that command takes
 * it, on f; nothing for a command that has no accounts.  One table for
 * every command, so that no --help can leave it out.
 */
void	cli_account_help(FILE *f, const char *cmd);

#endif
