/*
 * ingest_account.h -- the account of one delivery (account.h): from the
 * endpoint's URL, or from a provider's routing header on the default
 * URL, and that account's settings.  The header only picks whose
 * secrets are tried; the signature, checked later, decides.
 *
 * ingest.c calls it as one step of ingest_read(), through a struct
 * ingest_account_view that borrows the delivery's fields for the call:
 * this sits below ingest.c and does not know struct ingest.  Nothing is
 * kept past the call.
 */
#ifndef IH_INGEST_ACCOUNT_H
#define IH_INGEST_ACCOUNT_H

#include <stddef.h>

#include "config.h"
#include "io.h"
#include "log.h"
#include "outcome.h"
#include "provider.h"
#include "request.h"
#include "settings.h"

/* What ingest_account() reads and fills, borrowed from one delivery. */
struct ingest_account_view {
	const struct provider	*p;
	struct settings		*settings;
	const struct io		*io;		/* its PATH_INFO */
	const struct request	*req;		/* its routing header */
	char			*account;	/* filled: the account */
	size_t			 account_len;	/* ACCOUNT_NAME_MAX + 1 */
	struct config		*cfg;		/* filled: its settings */
	char			*file_path;	/* filled: the file read */
	size_t			 file_path_len;
	struct outcome		*out;		/* set when it returns 0 */
};

/*
 * The request's account and its settings into v->account and v->cfg
 * (v->cfg replaced, or kept when still current): the URL's account, or
 * the one a provider's routing header names on the default URL; an
 * unknown account is 404 and a header naming another account than the
 * URL's 401.  Returns 1 to go on, 0 with v->out set.
 */
int	ingest_account(const struct ingest_account_view *v,
	    const struct log_sink *sink);

#endif
