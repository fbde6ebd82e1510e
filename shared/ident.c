/* ident.c -- the identity a provider gives a verified event. */
#include <stdlib.h>
#include <string.h>

#include "ih.h"
#include "provider.h"

int
ident_set(char **dst, const char *v, size_t len)
{
	char *s;

	s = strndup(v, len);
	if (s == NULL)
		return IH_ENOMEM;
	free(*dst);
	*dst = s;
	return IH_OK;
}

int
ident_from_body(const struct provider_req *pr, const char *id_key,
    const char *type_key, struct ident *id, const char **why)
{
	const char *keys[2];
	char *vals[2] = { NULL, NULL };
	size_t n = 0;
	int rc;

	if (id_key != NULL)
		keys[n++] = id_key;
	keys[n++] = type_key;
	rc = provider_fields(pr, keys, n, vals);
	if (rc != IH_OK) {
		*why = "body is not a JSON object";
		return rc == IH_ENOMEM ? rc : IH_EBODY;
	}
	if (id_key != NULL) {
		free(id->event_id);
		id->event_id = vals[0];
	}
	free(id->event_type);
	id->event_type = vals[n - 1];
	if (id_key != NULL && (id->event_id == NULL || *id->event_id == '\0')) {
		*why = "body lacks the event id";
		return IH_EBODY;
	}
	if (id->event_type == NULL || *id->event_type == '\0') {
		*why = "body lacks the event type";
		return IH_EBODY;
	}
	return IH_OK;
}

void
ident_free(struct ident *id)
{
	free(id->event_id);
	free(id->event_type);
	free(id->subtype);
	free(id->order_key);
	memset(id, 0, sizeof(*id));
}
