/*
 * dispatch.h -- running a recorded event's effects: the provider's
 * switch on event type.
 *
 * A provider's switch is a dispatch_fn.  It gets the event as stored and
 * returns IH_OK when the event's effects are complete, or another code
 * with a reason in err when they failed and should be tried again.
 */
#ifndef IH_DISPATCH_H
#define IH_DISPATCH_H

#include <stddef.h>
#include <stdint.h>

#include "log.h"

struct dispatch_event {
	int64_t			 rowid;
	const char		*provider;
	const char		*event_id;
	const char		*event_type;
	const unsigned char	*payload;
	size_t			 payload_len;
	long			 attempt;	/* 1 for the first */
};

struct dispatch_ctx {
	const struct log_sink	*log;
};

typedef int (*dispatch_fn)(const struct dispatch_event *ev,
    struct dispatch_ctx *ctx, char *err, size_t errlen);

#endif
