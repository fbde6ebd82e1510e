/* config_source.c -- the lookup over an ordered list of sources. */
#include "config_source.h"

const char *
config_lookup(const struct config_source *src, size_t nsrc,
    const char *name)
{
	const char *v;
	size_t i;

	/*
	 * An empty value counts as unset, so that a web server config that
	 * always passes a variable (lighttpd's hooks files) can leave the
	 * value to the config file.
	 */
	for (i = 0; i < nsrc; i++) {
		v = src[i].get(src[i].arg, name);
		if (v != NULL && *v != '\0')
			return v;
	}
	return NULL;
}
