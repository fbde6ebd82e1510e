/*
 * config_vars.h -- one source of settings as NAME=value pairs: the
 * process environment's IDEMHOOK_* variables, or the settings file,
 * whose lines read NAME=value with '#' comments and surrounding blanks
 * trimmed; a value wrapped in matching single or double quotes is the
 * text inside them, taken literally (no escapes), and an unmatched or
 * ambiguous quote at its start refuses the file; values are otherwise
 * kept byte for byte, quotes inside included.  A struct
 * config_vars owns its copies; config_vars_free() wipes every value
 * (OPENSSL_cleanse) before freeing, and the file's read buffer is wiped
 * as soon as it is parsed, since the lines hold secrets.  Which names
 * are secrets is decided here too.
 */
#ifndef IH_CONFIG_VARS_H
#define IH_CONFIG_VARS_H

#include <stddef.h>

/* A provider's secret and its rotation names _2 to _4 (config.h). */
#define CONFIG_MAX_SECRETS	4
#define CONFIG_VALUE_MAX	4096	/* longest accepted value */
#define CONFIG_FILE_MAX		(256 * 1024)	/* longest config file */

/*
 * An owned list of NAME=value pairs: a file, or a captured environment.
 * slot indexes the names (a line's number plus one, 0 for none), so that
 * a lookup costs the same with one account's lines or a hundred's; it is
 * NULL, and lookups scan the lines, when memory ran out.
 */
struct config_vars {
	size_t	  n;
	char	**names;
	char	**values;
	size_t	 *slot;
	size_t	  nslot;	/* a power of two, at least 2 * n */
};

/*
 * The length of the name of an environ-style entry "IDEMHOOK_...=value",
 * or 0 for any other entry (another variable's, or one without '=').
 */
size_t	config_env_name_len(const char *entry);

/*
 * The value of name in envp (environ-style, NULL-terminated; NULL
 * itself: none), as FCGX_GetParam() finds it: the first entry "name=...",
 * or NULL.  Entries whose first byte differs are passed over without a
 * string comparison: a request looks up about ten names among some
 * twenty parameters (make bench-pages).
 */
const char *config_env_get(char *const *envp, const char *name);

/*
 * Copies every IDEMHOOK_* entry of env (an environ-style array) into v.
 * Returns IH_OK or IH_ENOMEM; on failure v is empty.
 */
int	config_vars_from_env(struct config_vars *v, char *const *env);

/*
 * Reads the file at path into v.  Returns IH_OK; IH_ENOTFOUND or IH_EIO
 * when it cannot be read; IH_EINVAL (with the line number in err) for a
 * line that is not NAME=value or whose quotes are refused; IH_ETOOBIG
 * past CONFIG_FILE_MAX.  On failure v is empty.
 */
int	config_vars_from_file(struct config_vars *v, const char *path,
	    char *err, size_t errlen);

/* Returns the value of name in v, or NULL.  Usable as a source's get. */
const char *config_vars_get(void *v, const char *name);

void	config_vars_free(struct config_vars *v);

/*
 * Is name a secret's: IDEMHOOK_ then a name holding _SECRET, _TOKEN or
 * _API_KEY (the providers' API keys, which only the command reads)?
 */
int	config_is_secret(const char *name);

/*
 * Is name one of the console's secrets (IDEMHOOK_CONSOLE_KEY,
 * IDEMHOOK_CONSOLE_PASSWORD_HASH)?  Only the console needs them.
 */
int	config_is_console_secret(const char *name);

/*
 * Is name secret_var (NULL: none), or secret_var_2 to _4, either one
 * suffixed "@account" for an account's own (account.h)?
 */
int	config_is_secret_of(const char *name, const char *secret_var);

/*
 * Wipes and drops from v every secret (a name with _SECRET or _TOKEN
 * after IDEMHOOK_) other than secret_var and secret_var_2 to _4, and the
 * same provider's IDEMHOOK_<PROVIDER>_FORWARD_SECRET, so that a program
 * holds no other provider's secret, and for a receiver (secret_var set)
 * the console's secrets too.  With secret_var NULL (the console), every
 * provider's secret goes and the console's stay.
 */
void	config_vars_keep_secrets(struct config_vars *v,
	    const char *secret_var);

/*
 * The two steps of config_vars_from_file(), for config_file.c, which
 * checks the open file before parsing it: opens path read-only (IH_OK,
 * IH_ENOTFOUND or IH_EIO with the cause in err), and parses the file
 * open on fd (named path in messages) into v.
 */
int	config_vars_open(const char *path, int *fd, char *err, size_t errlen);
int	config_vars_from_fd(struct config_vars *v, int fd, const char *path,
	    char *err, size_t errlen);

#endif
