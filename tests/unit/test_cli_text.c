/*
 * test_cli_text.c -- the idemhook command's masked terminal output and
 * JSON strings (handlers/cli/cli_text.c, compiled in here: the unit tests
 * link the library and the providers, not the command).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <openssl/evp.h>

#include "../../handlers/cli/cli_text.c"

/* Runs cli_put_text() into a string; returns it (free it), cols out. */
static char *
masked(const char *in, size_t len, int flags, size_t *cols)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);

	assert_non_null(f);
	*cols = cli_put_text(f, in, len, flags);
	fclose(f);
	return buf;
}

static void
text_masks_controls(void **state)
{
	static const struct {
		const char	*in;
		int		 flags;
		const char	*out;
		size_t		 cols;
	} t[] = {
		{ "plain", 0, "plain", 5 },
		{ "caf\xc3\xa9 \xe2\x9c\x93", 0, "caf\xc3\xa9 \xe2\x9c\x93", 6 },
		{ "\x1b[31m", 0, "\\x1b[31m", 8 },
		{ "a\xc2\x9b" "2J", 0, "a\\xc2\\x9b2J", 11 },	/* C1 CSI */
		{ "\x9b", 0, "\\x9b", 4 },			/* raw CSI */
		{ "\xc2\x85", 0, "\\xc2\\x85", 8 },		/* NEL */
		{ "\xc2\xa0", 0, "\xc2\xa0", 1 },		/* NBSP: fine */
		{ "\x7f", 0, "\\x7f", 4 },
		{ "\xe2\x80\xae", 0, "\\xe2\\x80\\xae", 12 },	/* RLO */
		{ "\xe2\x81\xa6", 0, "\\xe2\\x81\\xa6", 12 },	/* LRI */
		{ "\xc0\xaf", 0, "\\xc0\\xaf", 8 },		/* overlong */
		{ "\xed\xa0\x80", 0, "\\xed\\xa0\\x80", 12 },	/* surrogate */
		{ "\xf4\x90\x80\x80", 0, "\\xf4\\x90\\x80\\x80", 16 },
		{ "\xf0\x9f\x98\x80", 0, "\xf0\x9f\x98\x80", 1 },
		{ "\xe2\x9c", 0, "\\xe2\\x9c", 8 },		/* cut short */
		{ "a\nb\tc\r", 0, "a\\x0ab\\x09c\\x0d", 15 },
		{ "a\nb\tc\r", CLI_TEXT_LINES, "a\nb\tc\\x0d", 9 },
	};
	size_t i, cols;
	char *got;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		got = masked(t[i].in, strlen(t[i].in), t[i].flags, &cols);
		assert_string_equal(got, t[i].out);
		assert_int_equal(cols, t[i].cols);
		assert_int_equal(cli_put_text(NULL, t[i].in, strlen(t[i].in),
		    t[i].flags), t[i].cols);
		free(got);
	}
	/* A NUL inside the length is masked too. */
	got = masked("a\0b", 3, CLI_TEXT_LINES, &cols);
	assert_string_equal(got, "a\\x00b");
	free(got);
}

static void
utf8_ok(void **state)
{
	(void)state;
	assert_true(cli_utf8_ok("", 0));
	assert_true(cli_utf8_ok("caf\xc3\xa9\0x", 6));
	assert_true(cli_utf8_ok("\xf0\x9f\x98\x80", 4));
	assert_false(cli_utf8_ok("\xff", 1));
	assert_false(cli_utf8_ok("\xc3", 1));
	assert_false(cli_utf8_ok("\xed\xbf\xbf", 3));
	assert_false(cli_utf8_ok("\xe0\x80\x80", 3));
}

static char *
json_of(const char *in, size_t len)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);

	assert_non_null(f);
	cli_json_text(f, in, len);
	fclose(f);
	return buf;
}

static void
json_escapes(void **state)
{
	static const struct {
		const char	*in;
		const char	*out;
	} t[] = {
		{ "", "\"\"" },
		{ "a\"b\\c", "\"a\\\"b\\\\c\"" },
		{ "\n\t\r\x01\x1b\x7f", "\"\\n\\t\\r\\u0001\\u001b\\u007f\"" },
		{ "\xc2\x9b", "\"\\u009b\"" },
		{ "\xe2\x80\xae", "\"\\u202e\"" },
		{ "caf\xc3\xa9", "\"caf\xc3\xa9\"" },
		{ "a\xff" "b", "\"a\\ufffdb\"" },
		{ "\xe2\x9c", "\"\\ufffd\\ufffd\"" },
	};
	size_t i;
	char *got;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		got = json_of(t[i].in, strlen(t[i].in));
		assert_string_equal(got, t[i].out);
		free(got);
	}
	got = json_of("a\0b", 3);
	assert_string_equal(got, "\"a\\u0000b\"");
	free(got);
}

static void
base64_chunks(void **state)
{
	static const size_t sizes[] = { 0, 1, 2, 3, B64_CHUNK - 1, B64_CHUNK,
	    B64_CHUNK + 1, 3 * B64_CHUNK + 2 };
	unsigned char *in, *back;
	char *buf;
	size_t i, j, n, blen;
	int m;
	FILE *f;

	(void)state;
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		n = sizes[i];
		in = malloc(n + 1);
		assert_non_null(in);
		for (j = 0; j < n; j++)
			in[j] = (unsigned char)(j * 7 + 3);
		buf = NULL;
		blen = 0;
		f = open_memstream(&buf, &blen);
		assert_non_null(f);
		cli_json_base64(f, in, n);
		fclose(f);
		assert_int_equal(blen, 2 + (n + 2) / 3 * 4);
		assert_int_equal(buf[0], '"');
		assert_int_equal(buf[blen - 1], '"');
		back = malloc(blen);
		assert_non_null(back);
		m = EVP_DecodeBlock(back, (unsigned char *)buf + 1,
		    (int)(blen - 2));
		/* EVP_DecodeBlock counts padding as zero bytes. */
		assert_true(m >= 0 && (size_t)m >= n && (size_t)m <= n + 2);
		assert_memory_equal(back, in, n);
		free(back);
		free(buf);
		free(in);
	}
}

static void
printf_cuts_and_masks(void **state)
{
	char *buf = NULL, big[CLI_TEXT_LINE_MAX + 100];
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);

	(void)state;
	assert_non_null(f);
	cli_printf(f, "id %s\n", "evt_\x1b]0;x\x07");
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	cli_printf(f, "%s", big);
	fclose(f);
	assert_non_null(strstr(buf, "id evt_\\x1b]0;x\\x07\n"));
	assert_int_equal(strlen(buf), strlen("id evt_\\x1b]0;x\\x07\n") +
	    CLI_TEXT_LINE_MAX - 1);
	assert_string_equal(buf + strlen(buf) - 3, "...");
	free(buf);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(text_masks_controls),
		cmocka_unit_test(utf8_ok),
		cmocka_unit_test(json_escapes),
		cmocka_unit_test(base64_chunks),
		cmocka_unit_test(printf_cuts_and_masks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
