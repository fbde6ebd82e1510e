/*
 * outcome.h -- what one delivery came to: the HTTP answer (respond.h),
 * the outcome's name for the log line ("accepted", "bad_signature",
 * ...) and a detail.  Set by every step of a delivery (ingest.c,
 * ingest_account.c, batch.c), read by ingest_answer().  The name is a
 * string constant the caller keeps; the detail is copied, cut at its
 * buffer.
 */
#ifndef IH_OUTCOME_H
#define IH_OUTCOME_H

#include "respond.h"
#include "store.h"

/* What one delivery came to, for its answer and its log line. */
struct outcome {
	struct respond	 rsp;
	const char	*name;		/* "accepted", "bad_signature", ... */
	char		 detail[STORE_ERR_MAX + 64];
};

/* Sets o to status with the outcome name and detail (may be NULL). */
void	outcome_set(struct outcome *o, int status, const char *name,
	    const char *detail);

#endif
