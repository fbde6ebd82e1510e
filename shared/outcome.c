/* outcome.c -- what one delivery came to (outcome.h). */
#include <stdio.h>

#include "outcome.h"

void
outcome_set(struct outcome *o, int status, const char *name,
    const char *detail)
{
	o->rsp.status = status;
	o->name = name;
	o->rsp.body_status = status == 200 ? name : "error";
	o->rsp.error = status == 200 ? NULL : name;
	o->rsp.allow = status == 405 ? "POST" : NULL;
	o->rsp.retry_after = status == 503 ? 30 : 0;
	snprintf(o->detail, sizeof(o->detail), "%s", detail ? detail : "");
}
