/* smoke.c -- is an event one of idemhook smoke's (smoke.h)? */
#include <stdlib.h>
#include <string.h>

#include "ih.h"
#include "json.h"
#include "smoke.h"

int
smoke_event(const struct event *ev, int *yes)
{
	static const char *const keys[1] = { SMOKE_MARK };
	struct json *js = NULL;
	char *mark = NULL;
	size_t mlen, ilen;
	int rc;

	*yes = 0;
	if (ev->event_type == NULL || strcmp(ev->event_type, SMOKE_TYPE) != 0 ||
	    ev->payload == NULL || ev->event_id == NULL)
		return IH_OK;
	rc = json_open(&js);
	if (rc != IH_OK)
		goto out;
	rc = json_fields(js, ev->payload, ev->payload_len, keys, 1, &mark);
	if (rc == IH_ENOMEM)
		goto out;
	/* A body that is no JSON object is no smoke event. */
	rc = IH_OK;
	if (mark == NULL)
		goto out;
	mlen = strlen(mark);
	ilen = strlen(ev->event_id);
	*yes = mlen > strlen(SMOKE_ID_PREFIX) &&
	    strncmp(mark, SMOKE_ID_PREFIX, strlen(SMOKE_ID_PREFIX)) == 0 &&
	    ilen >= mlen && strcmp(ev->event_id + ilen - mlen, mark) == 0;
out:
	free(mark);
	json_close(js);
	return rc;
}
