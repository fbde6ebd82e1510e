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

void
ident_free(struct ident *id)
{
	free(id->event_id);
	free(id->event_type);
	free(id->subtype);
	free(id->order_key);
	memset(id, 0, sizeof(*id));
}
