/* test_config_find.c -- which settings files are safe to use when found. */
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

#include "config_find.h"
#include "ih.h"

static void
make_file(char *path, mode_t mode)
{
	int fd;

	snprintf(path, 64, "%s", "/tmp/ih-find-XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(chmod(path, mode), 0);
}

static void
owner_only_is_safe(void **state)
{
	char path[64], err[256];

	(void)state;
	make_file(path, 0600);
	assert_int_equal(config_find_safe(path, (unsigned)geteuid(), err,
	    sizeof(err)), IH_OK);
	assert_int_equal(chmod(path, 0640), 0);
	assert_int_equal(config_find_safe(path, (unsigned)geteuid(), err,
	    sizeof(err)), IH_OK);
	unlink(path);
}

static void
writable_by_others_is_refused(void **state)
{
	char path[64], err[256];

	(void)state;
	make_file(path, 0620);
	assert_int_equal(config_find_safe(path, (unsigned)geteuid(), err,
	    sizeof(err)), IH_ECONFIG);
	assert_non_null(strstr(err, "0620"));
	assert_int_equal(chmod(path, 0602), 0);
	assert_int_equal(config_find_safe(path, (unsigned)geteuid(), err,
	    sizeof(err)), IH_ECONFIG);
	unlink(path);
}

static void
other_owner_is_refused(void **state)
{
	char path[64], err[256];
	unsigned other = geteuid() == 0 ? 4242 : (unsigned)geteuid() + 1;

	(void)state;
	make_file(path, 0600);
	if (geteuid() == 0) {
		/* Root owns it: safe for anyone; another owner is not. */
		assert_int_equal(config_find_safe(path, other, err,
		    sizeof(err)), IH_OK);
		assert_int_equal(chown(path, 4243, (gid_t)-1), 0);
	}
	assert_int_equal(config_find_safe(path, other, err, sizeof(err)),
	    IH_ECONFIG);
	assert_non_null(strstr(err, "neither this user"));
	unlink(path);
}

static void
missing_and_directory(void **state)
{
	char err[256];

	(void)state;
	assert_int_equal(config_find_safe("/nonexistent/ih/x.env", 0, err,
	    sizeof(err)), IH_ENOTFOUND);
	assert_int_equal(config_find_safe("/tmp", 0, err, sizeof(err)),
	    IH_ECONFIG);
}

static void
user_from_passwd(void **state)
{
	char name[64], home[256];

	(void)state;
	assert_int_equal(config_find_user(0, name, sizeof(name), home,
	    sizeof(home)), IH_OK);
	assert_string_equal(name, "root");
	assert_true(home[0] == '/');
	assert_int_equal(config_find_user(4294967294u, name, sizeof(name),
	    home, sizeof(home)), IH_ENOTFOUND);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(owner_only_is_safe),
		cmocka_unit_test(writable_by_others_is_refused),
		cmocka_unit_test(other_owner_is_refused),
		cmocka_unit_test(missing_and_directory),
		cmocka_unit_test(user_from_passwd),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
