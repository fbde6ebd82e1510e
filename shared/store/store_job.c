/*
 * store_job.c -- a claim's own copies of its event (store.h): made for
 * both backends' claims and for a record that claims, freed with the
 * job.
 */
#include <stdlib.h>
#include <string.h>

#include "ih.h"
#include "store.h"
#include "store_backend.h"

/* A copy of s, or NULL for NULL; *failed set when out of memory. */
static const char *
job_copy(const char *s, int *failed)
{
	char *c;

	if (s == NULL)
		return NULL;
	c = strdup(s);
	if (c == NULL)
		*failed = 1;
	return c;
}

int
store_job_set(struct store_job *job, const char *provider,
    const char *event_id, const char *event_type, const char *subtype)
{
	int failed = 0;

	job->ev.provider = job_copy(provider, &failed);
	job->ev.event_id = job_copy(event_id, &failed);
	job->ev.event_type = job_copy(event_type, &failed);
	job->ev.subtype = job_copy(subtype, &failed);
	return failed ? IH_ENOMEM : IH_OK;
}

int
store_job_account(struct store_job *job, const char *account)
{
	int failed = 0;

	job->ev.account = job_copy(account, &failed);
	return failed ? IH_ENOMEM : IH_OK;
}

/*
 * The job owns what its view points at (store.h): the casts drop the
 * view's const to free the job's own copies.
 */
void
store_job_free(struct store_job *job)
{
	free((void *)job->ev.provider);
	free((void *)job->ev.event_id);
	free((void *)job->ev.event_type);
	free((void *)job->ev.subtype);
	free((void *)job->ev.account);
	free((void *)job->ev.payload);
	memset(job, 0, sizeof(*job));
}
