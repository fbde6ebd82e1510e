/*
 * docroot.h -- is a file under a web server's document root?  The
 * receivers refuse to serve when their store or settings file is
 * (serve.c), and `idemhook check` reports it (cli_check.c): both compare
 * paths resolved the same way here.  No allocation; buffers are the
 * caller's, of PATH_MAX bytes.
 */
#ifndef IH_DOCROOT_H
#define IH_DOCROOT_H

#include <stddef.h>

/*
 * Resolves path as far as it exists into out (len bytes): the real path
 * of the file, else that of its directory with the name appended (a
 * store whose directory is not made yet), else path as written.
 * Returns 0, or -1 when path has no '/' or the result does not fit.
 */
int	docroot_resolve(const char *path, char *out, size_t len);

/*
 * Whether the resolved path is dir or lies below it (dir may end in '/';
 * "/" holds everything).
 */
int	docroot_contains(const char *dir, const char *path);

#endif
