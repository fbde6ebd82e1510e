/*
 * forward_settings.h -- the forwarding settings (forward.h names them):
 * one provider's destinations, read from the sources when the settings
 * load (config_load() fills the struct forward_settings that a struct
 * config holds), kept apart from the delivery, which runs as an action
 * of the processing machinery (dispatch.h) and picks the destination
 * with forward_dest() (forward.h).  A struct forward_settings owns
 * copies of its strings; forward_free() wipes each secret
 * (OPENSSL_cleanse) before freeing.
 */
#ifndef IH_FORWARD_SETTINGS_H
#define IH_FORWARD_SETTINGS_H

#include <stddef.h>
#include <stdint.h>

#include "config_source.h"

#define FORWARD_DEFAULT_TIMEOUT	30
#define FORWARD_DEFAULT_PAUSE_AFTER	3
#define FORWARD_DEFAULT_CONCURRENCY	4
#define FORWARD_CONCURRENCY_MAX	256
#define FORWARD_RATE_MAX	1000	/* deliveries a second */
#define FORWARD_ACCOUNTS_MAX	64	/* accounts with a destination */

/* One destination of forwarding (forward.h). */
struct config_forward {
	char	*account;	/* FORWARD_URL@account's, or NULL */
	char	*url;		/* NULL: none */
	int	 sign;		/* enum forward_sign */
	char	*secret;	/* the re-signing secret, or NULL */
	size_t	 secret_len;
	long	 timeout_s;	/* one delivery, connection included */
	long	 concurrency;	/* deliveries in flight at most */
	double	 rate;		/* deliveries a second at most; 0: no limit */
	int64_t	 rate_ms;	/* between two starts, from rate; 0: none */
};

/* One provider's forwarding: its destination and the accounts' own. */
struct forward_settings {
	struct config_forward	 dest;	/* the provider's; url NULL: none */
	struct config_forward	*acct;	/* nacct accounts' own */
	size_t			 nacct;
	long			 pause_after;	/* failures in a row; 0: off */
};

/*
 * Reads the forwarding settings of provider from src into fs, which
 * must be zeroed.  lease_s and busy_timeout_ms are the settings' own
 * (IDEMHOOK_LEASE, IDEMHOOK_BUSY_TIMEOUT_MS): the lease must outlast one
 * delivery.  Returns IH_OK, IH_ENOMEM, or IH_ECONFIG with the cause in
 * err; on failure fs holds what was read so far, for forward_free().
 */
int	forward_load(struct forward_settings *fs, long lease_s,
	    long busy_timeout_ms, const char *provider,
	    const struct config_source *src, size_t nsrc, char *err,
	    size_t errlen);

/* Wipes and frees what forward_load() put in fs, and zeroes it. */
void	forward_free(struct forward_settings *fs);

/*
 * For config_copy(): dst, a shallow copy of src, gets owned copies of
 * src's destinations.  Returns IH_OK, or IH_ENOMEM with each of dst's
 * strings a copy or NULL, ready for forward_free().
 */
int	forward_copy(struct forward_settings *dst,
	    const struct forward_settings *src);

/* The name of fw's row in the store's destinations: its account's. */
const char *forward_dest_name(const struct config_forward *fw);

/*
 * Writes a forwarding setting's name, IDEMHOOK_<PROVIDER>_FORWARD_<key>,
 * with "@account" when account is not NULL, into name (the provider's
 * part in capitals).  Returns 0 when it does not fit in cap.
 */
int	forward_setting_name(char *name, size_t cap, const char *provider,
	    const char *key, const char *account);

#endif
