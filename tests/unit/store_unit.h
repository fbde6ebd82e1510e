/*
 * store_unit.h -- what the store's unit tests share (test_store.c and
 * test_store_contract.c): the Stripe event they record, whose payload
 * holds a NUL byte so that a store keeping text instead of bytes fails.
 */
#ifndef IH_STORE_UNIT_H
#define IH_STORE_UNIT_H

#include <string.h>

#include "store.h"

/* A Stripe invoice.paid event with id id; payload and headers static. */
static inline struct event
unit_event(const char *id)
{
	struct event ev;

	memset(&ev, 0, sizeof(ev));
	ev.provider = "stripe";
	ev.event_id = id;
	ev.event_type = "invoice.paid";
	ev.payload = (const unsigned char *)"{\"a\":\"\0b\"}";
	ev.payload_len = 10;
	ev.headers = "Stripe-Signature: t=1,v1=00\n";
	return ev;
}

#endif
