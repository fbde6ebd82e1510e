/* test_log_dest.c -- IDEMHOOK_LOG: an owner-only appended file, or syslog. */
#include <sys/stat.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "ih.h"
#include "log.h"

static void
tmpname(char *buf, size_t len)
{
	snprintf(buf, len, "/tmp/ih-logdest-%ld-%d", (long)getpid(), rand());
}

static void
file_appended_owner_only(void **state)
{
	struct log_dest d;
	struct stat sb;
	char path[128], err[256], buf[4096];
	FILE *f;
	size_t n;

	(void)state;
	tmpname(path, sizeof(path));
	log_dest_init(&d);
	assert_ptr_equal(log_dest_sink(&d, &log_stderr), &log_stderr);
	assert_int_equal(log_dest_set(&d, path, err, sizeof(err)), IH_OK);
	assert_ptr_not_equal(log_dest_sink(&d, &log_stderr), &log_stderr);
	log_emit(log_dest_sink(&d, NULL), "provider=%s one", "stripe");
	/* The same setting again keeps the file open; lines append. */
	assert_int_equal(log_dest_set(&d, path, err, sizeof(err)), IH_OK);
	log_emit(log_dest_sink(&d, NULL), "provider=%s two", "stripe");
	log_dest_close(&d);
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal(sb.st_mode & 0777, 0600);
	f = fopen(path, "r");
	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* "2026-11-23T00:52:07Z [pid] idemhook: provider=stripe one\n" */
	assert_non_null(strstr(buf, "Z ["));
	assert_non_null(strstr(buf, "] idemhook: provider=stripe one\n"));
	assert_non_null(strstr(buf, "] idemhook: provider=stripe two\n"));
	assert_true(strstr(buf, "one") < strstr(buf, "two"));
	unlink(path);
}

static void
unset_and_bad_settings(void **state)
{
	struct log_dest d;
	char path[128], link[160], err[256];

	(void)state;
	log_dest_init(&d);
	assert_int_equal(log_dest_set(&d, NULL, err, sizeof(err)), IH_OK);
	assert_int_equal(log_dest_set(&d, "", err, sizeof(err)), IH_OK);
	assert_ptr_equal(log_dest_sink(&d, NULL), NULL);
	assert_int_equal(log_dest_set(&d, "relative.log", err, sizeof(err)),
	    IH_EINVAL);
	assert_ptr_equal(log_dest_sink(&d, &log_stderr), &log_stderr);
	/* Reported once: the same setting again is not an error again. */
	assert_int_equal(log_dest_set(&d, "relative.log", err, sizeof(err)),
	    IH_OK);
	assert_int_equal(log_dest_set(&d, "/nonexistent/dir/x.log", err,
	    sizeof(err)), IH_EIO);
	assert_non_null(strstr(err, "/nonexistent/dir/x.log"));
	/* Never through a symbolic link. */
	tmpname(path, sizeof(path));
	snprintf(link, sizeof(link), "%s.link", path);
	assert_int_equal(symlink(path, link), 0);
	assert_int_equal(log_dest_set(&d, link, err, sizeof(err)), IH_EIO);
	assert_int_equal(access(path, F_OK), -1);
	unlink(link);
	assert_int_equal(log_dest_set(&d, "syslog", err, sizeof(err)), IH_OK);
	assert_ptr_not_equal(log_dest_sink(&d, &log_stderr), &log_stderr);
	log_dest_close(&d);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(file_appended_owner_only),
		cmocka_unit_test(unset_and_bad_settings),
	};

	srand((unsigned)getpid());
	return cmocka_run_group_tests(tests, NULL, NULL);
}
