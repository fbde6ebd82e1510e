/*
 * fuzz_config.c -- the IDEMHOOK_CONFIG file: its NAME=value lines, then
 * every setting's value parsed as a receiver would, for each provider.
 * Input: the file's bytes (written to a private temporary file).
 */
#include <stdio.h>
#include <unistd.h>

#include "config.h"
#include "config_vars.h"
#include "fuzz.h"
#include "ih.h"

static char path[64];

static void
remove_path(void)
{
	unlink(path);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const prov[][2] = {
		{ "stripe", "IDEMHOOK_STRIPE_SECRET" },
		{ "asaas", "IDEMHOOK_ASAAS_TOKEN" },
		{ "standard", "IDEMHOOK_STANDARD_SECRET" },
	};
	struct config_vars v;
	struct config_source src;
	struct config cfg;
	char err[512];
	FILE *fp;
	size_t i;
	int fd;

	if (path[0] == '\0') {
		snprintf(path, sizeof(path), "/tmp/ih-fuzz-config.XXXXXX");
		fd = mkstemp(path);
		if (fd == -1)
			return 0;
		close(fd);
		atexit(remove_path);
	}
	fp = fopen(path, "wb");
	if (fp == NULL)
		return 0;
	if (size > 0 && fwrite(data, 1, size, fp) != size) {
		fclose(fp);
		return 0;
	}
	fclose(fp);
	if (config_vars_from_file(&v, path, err, sizeof(err)) != IH_OK)
		return 0;
	src.get = config_vars_get;
	src.arg = &v;
	for (i = 0; i < sizeof(prov) / sizeof(prov[0]); i++) {
		memset(&cfg, 0, sizeof(cfg));
		/* As the receivers do, free it whatever the outcome. */
		(void)config_load(&cfg, prov[i][0], prov[i][1], &src, 1, err,
		    sizeof(err));
		config_free(&cfg);
	}
	config_vars_free(&v);
	return 0;
}
