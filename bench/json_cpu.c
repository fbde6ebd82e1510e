/*
 * json_cpu.c -- CPU per event of shared/json.c: what a receiver spends
 * reading a body's id and type (json_fields) and a nested member
 * (json_path_text), for each file named.  Not part of any build:
 *
 *   cc -O2 -Ishared -o /tmp/json_cpu bench/json_cpu.c shared/json.c \
 *       $(pkg-config --cflags --libs jansson)
 *   /tmp/json_cpu body.json...
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ih.h"
#include "json.h"

static double
cpu_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

int
main(int argc, char **argv)
{
	static const char *const keys[] = { "id", "type" };
	struct json *js;
	char *doc, *vals[2], *val;
	double t0, fields_us, path_us;
	long n, i;
	size_t len;
	FILE *f;
	int a;

	if (json_open(&js) != IH_OK)
		return 1;
	for (a = 1; a < argc; a++) {
		f = fopen(argv[a], "rb");
		if (f == NULL)
			return 1;
		doc = malloc(64 << 20);
		len = fread(doc, 1, 64 << 20, f);
		fclose(f);
		n = len > 100000 ? 20 : 20000;
		t0 = cpu_us();
		for (i = 0; i < n; i++) {
			if (json_fields(js, doc, len, keys, 2, vals) != IH_OK)
				return 2;
			free(vals[0]);
			free(vals[1]);
		}
		fields_us = (cpu_us() - t0) / n;
		t0 = cpu_us();
		for (i = 0; i < n; i++) {
			if (json_path_text(js, doc, len, "$.data.object.id",
			    &val) != IH_OK)
				return 3;
			free(val);
		}
		path_us = (cpu_us() - t0) / n;
		printf("%-28s %8zu bytes  json_fields %9.1f us  "
		    "json_path_text %9.1f us\n", argv[a], len, fields_us,
		    path_us);
		free(doc);
	}
	json_close(js);
	return 0;
}
