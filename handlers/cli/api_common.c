/* api_common.c -- pieces the provider API modules share (api_common.h). */
#include <stdio.h>
#include <string.h>

#include "api_common.h"
#include "ih.h"

int
api_bearer(const char *key, char *buf, size_t len)
{
	int n = snprintf(buf, len, "Bearer %s", key);

	return n < 0 || (size_t)n >= len ? IH_ETOOBIG : IH_OK;
}

size_t
api_list_word(const char **v)
{
	while (**v == ' ' || **v == ',' || **v == '\t')
		(*v)++;
	return strcspn(*v, " ,\t");
}
