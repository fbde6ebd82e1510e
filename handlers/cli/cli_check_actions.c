/* cli_check_actions.c -- idemhook check: actions (cli_check_actions.h). */
#include <sys/stat.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_check_actions.h"
#include "cli_check_store.h"

/* The actions' PATH when the receiver has none (action.c's). */
#define CHECK_ACTION_PATH	"/usr/local/bin:/usr/bin:/bin"
#define CHECK_WORD_MAX		1024

/* What every event type of a provider is made of. */
struct type_shape {
	const char	*provider;
	const char	*chars;		/* the only characters, or NULL: any */
	char		 sep;		/* held by every type, or 0 */
	const char	*example;
};

static const struct type_shape shapes[] = {
	{ "stripe", "abcdefghijklmnopqrstuvwxyz0123456789_.", '.',
	    "payment_intent.succeeded" },
	{ "github", "abcdefghijklmnopqrstuvwxyz_", 0,
	    "pull_request (the X-GitHub-Event name; the action is not part "
	    "of it)" },
	{ "shopify", "abcdefghijklmnopqrstuvwxyz0123456789_/", '/',
	    "orders/create" },
	{ "asaas", "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_", 0,
	    "PAYMENT_RECEIVED" },
};

/* Shell words that run no file: builtins and keywords of sh. */
static const char *const builtins[] = { ":", ".", "[", "alias", "break",
    "case", "cd", "command", "continue", "echo", "eval", "exec", "exit",
    "export", "false", "for", "if", "printf", "read", "set", "shift",
    "test", "trap", "true", "umask", "unset", "wait", "while", "{", "(",
    "!", NULL };

static const struct type_shape *
shape_of(const char *provider)
{
	size_t i;

	for (i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++)
		if (strcmp(shapes[i].provider, provider) == 0)
			return &shapes[i];
	return NULL;
}

/*
 * Why the TYPE part of pattern (before any '@') can match no type of
 * the provider, or NULL when it can.  bad gets the offending character.
 */
static const char *
pattern_why(const char *pattern, const struct type_shape *sh, char *bad)
{
	const char *p;
	int wild = 0, sep = 0, in_class = 0;

	if (strpbrk(pattern, "'\"") != NULL) {
		*bad = strchr(pattern, '\'') != NULL ? '\'' : '"';
		return "it holds a quote, which no event type has (in the "
		    "settings file, quotes are taken off only when they wrap "
		    "the whole value)";
	}
	if (sh == NULL)
		return NULL;
	for (p = pattern; *p != '\0' && *p != '@'; p++) {
		if (in_class) {
			in_class = *p != ']';
			continue;
		}
		if (*p == '*' || *p == '?' || *p == '[') {
			wild = 1;
			in_class = *p == '[';
			continue;
		}
		if (*p == '\\' && p[1] != '\0' && p[1] != '@')
			p++;
		if (strchr(sh->chars, *p) == NULL) {
			*bad = *p;
			return "its event types never hold that character";
		}
		if (*p == sh->sep)
			sep = 1;
	}
	if (sh->sep != 0 && !sep && !wild) {
		*bad = sh->sep;
		return "every one of its event types holds that separator";
	}
	return NULL;
}

/* Whether name is an executable regular file. */
static int
is_exec_file(const char *name)
{
	struct stat sb;

	return stat(name, &sb) == 0 && S_ISREG(sb.st_mode) &&
	    access(name, X_OK) == 0;
}

/* Whether word is found as an executable file on the actions' PATH. */
static int
on_path(const char *word)
{
	const char *path = getenv("PATH"), *p, *colon;
	char full[CHECK_WORD_MAX + 256];
	size_t n;

	if (path == NULL || *path == '\0')
		path = CHECK_ACTION_PATH;
	for (p = path; ; p = colon + 1) {
		colon = strchr(p, ':');
		n = colon != NULL ? (size_t)(colon - p) : strlen(p);
		if ((size_t)snprintf(full, sizeof(full), "%.*s/%s", (int)n, p,
		    word) < sizeof(full) && n > 0 && is_exec_file(full))
			return 1;
		if (colon == NULL)
			return 0;
	}
}

/*
 * Why the program of command is not an executable file, or NULL when it
 * is or cannot be told (shell syntax).
 */
static const char *
command_why(const char *command, char *word, size_t wordlen)
{
	size_t n = strcspn(command, " \t;&|<>");
	size_t i;

	if (n == 0 || n >= wordlen)
		return NULL;
	memcpy(word, command, n);
	word[n] = '\0';
	if (strpbrk(word, "$`'\"\\=*?~") != NULL)
		return NULL;
	for (i = 0; builtins[i] != NULL; i++)
		if (strcmp(word, builtins[i]) == 0)
			return NULL;
	if (strchr(word, '/') != NULL)
		return is_exec_file(word) ? NULL : "is not an executable "
		    "file: give the program's full path, and chmod +x it";
	return on_path(word) ? NULL : "is found in no folder of PATH as "
	    "an executable file: give the program's full path";
}

static void
check_command(const char *provider, const char *what, const char *command,
    int *problems, int *oks)
{
	char word[CHECK_WORD_MAX];
	const char *why = command_why(command, word, sizeof(word));

	if (why != NULL)
		cli_check_say(0, problems, oks, "%s: %s: the command's program "
		    "%.200s %s; the action cannot run", provider, what, word,
		    why);
}

void
cli_check_actions(const char *provider, const struct config *cfg,
    int *problems, int *oks)
{
	const struct type_shape *sh = shape_of(provider);
	const char *why;
	char what[64], bad;
	size_t i;
	int good = 0;

	for (i = 0; i < cfg->nactions; i++) {
		bad = '?';
		why = pattern_why(cfg->action_pattern[i], sh, &bad);
		if (why != NULL)
			cli_check_say(0, problems, oks, "%s: action pattern "
			    "%.200s can match no %s event type ('%c': %s%s%s);"
			    " the action never runs", provider,
			    cfg->action_pattern[i], provider, bad, why,
			    sh != NULL ? "; a type reads like " : "",
			    sh != NULL ? sh->example : "");
		else
			good++;
		snprintf(what, sizeof(what), "action %.40s",
		    cfg->action_pattern[i]);
		check_command(provider, what, cfg->action_command[i],
		    problems, oks);
	}
	if (cfg->alert_action != NULL)
		check_command(provider, "alert action", cfg->alert_action,
		    problems, oks);
	if (good > 0)
		cli_check_say(1, problems, oks, "%s: %d action pattern(s) can "
		    "match its event types", provider, good);
}
