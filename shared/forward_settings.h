/*
 * forward_settings.h -- reading the forwarding settings (forward.h names
 * them) into struct config when the settings load: the part of
 * forwarding that config.c calls, kept apart from the delivery, which
 * runs as an action of the processing machinery (dispatch.h).
 */
#ifndef IH_FORWARD_SETTINGS_H
#define IH_FORWARD_SETTINGS_H

#include <stddef.h>

#include "config.h"

#define FORWARD_DEFAULT_TIMEOUT	30
#define FORWARD_DEFAULT_PAUSE_AFTER	3
#define FORWARD_DEFAULT_CONCURRENCY	4
#define FORWARD_CONCURRENCY_MAX	256
#define FORWARD_RATE_MAX	1000	/* deliveries a second */
#define FORWARD_ACCOUNTS_MAX	64	/* accounts with a destination */

/*
 * Reads the forwarding settings of provider from src into cfg (after the
 * numeric settings: the lease must outlast one delivery).  Returns IH_OK,
 * IH_ENOMEM, or IH_ECONFIG with the cause in err.
 */
int	forward_load(struct config *cfg, const char *provider,
	    const struct config_source *src, size_t nsrc, char *err,
	    size_t errlen);

/* Wipes and frees what forward_load() put in cfg. */
void	forward_free(struct config *cfg);

/*
 * For config_copy(): dst, a shallow copy of src, gets owned copies of
 * src's destinations.  Returns IH_OK, or IH_ENOMEM with each of dst's
 * strings a copy or NULL, ready for forward_free().
 */
int	forward_copy(struct config *dst, const struct config *src);

/*
 * The destination of account's events (account may be NULL: the
 * default account's), or NULL when they are not forwarded.
 */
const struct config_forward *forward_dest(const struct config *cfg,
	    const char *account);

/* The name of fw's row in the store's destinations: its account's. */
const char *forward_dest_name(const struct config_forward *fw);

/*
 * Writes a forwarding setting's name, IDEMHOOK_<PROVIDER>_FORWARD_<key>,
 * with "@account" when account is not NULL, into name (the provider's
 * part in capitals).  Returns 0 when it does not fit in cap.
 */
int	forward_setting_name(char *name, size_t cap, const char *provider,
	    const char *key, const char *account);

/* Is any event of cfg's provider forwarded (to any destination)? */
int	forward_any(const struct config *cfg);

#endif
