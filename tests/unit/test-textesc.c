/* SPDX-License-Identifier: ISC */
/* Unit tests of common/textesc.c: what reaches a terminal from elsewhere. */
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "textesc.h"

static const struct {
	const char *in;
	size_t len; /* 0: strlen */
	bool is_quoted;
	const char *out;
} cases[] = {
	{ "plain text", 0, false, "plain text" },
	{ "plain text", 0, true, "\"plain text\"" },
	{ "red \x1b[31mALERT\x1b[0m\nnext\tcol\r", 0, false,
	    "red \\x1b[31mALERT\\x1b[0m\\nnext\\tcol\\r" },
	{ "say \"hi\" \\ bye", 0, true, "\"say \\\"hi\\\" \\\\ bye\"" },
	{ "say \"hi\" \\ bye", 0, false, "say \"hi\" \\ bye" },
	{ "caf\xc3\xa9 \xe2\x9c\x93", 0, true, "\"caf\xc3\xa9 \xe2\x9c\x93\"" },
	/* C1 (U+009B is CSI), bidi override, line separator. */
	{ "a\xc2\x9b"
	  "b\xe2\x80\xae"
	  "c\xe2\x80\xa8",
	    0, false, "a\\u009bb\\u202ec\\u2028" },
	/* Broken UTF-8: a lone continuation, a cut sequence, overlong. */
	{ "x\x80y\xe2\x9cz\xc0\xaf", 0, false, "x\\x80y\\xe2\\x9cz\\xc0\\xaf" },
	{ "nul\0in", 6, false, "nul\\x00in" },
	{ "del\x7f", 0, false, "del\\x7f" },
};

static void
test_escapes(void)
{
	for (size_t i = 0; i < TAP_COUNT(cases); i++) {
		size_t len = cases[i].len ? cases[i].len : strlen(cases[i].in);
		char *got = textesc(cases[i].in, len, cases[i].is_quoted);

		TAP_CHECK_STR(got, cases[i].out);
		free(got);
	}
}

static void
test_chars_and_cut(void)
{
	char *got;

	TAP_CHECK_INT((int)textesc_chars("caf\xc3\xa9"), 4);
	got = textesc_cut("abcdef", 6);
	TAP_CHECK_STR(got, "abcdef");
	free(got);
	got = textesc_cut("abcdefg", 6);
	TAP_CHECK_STR(got, "abc...");
	free(got);
	/* Cut between characters, never inside one. */
	got = textesc_cut("\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 4);
	TAP_CHECK_STR(got, "\xc3\xa9...");
	free(got);
	TAP_CHECK_INT((int)textesc_chars(got = textesc_cut("xxxxxxxxxxxx", 8)),
	    8);
	free(got);
}

static const struct tap_test tests[] = {
	{ "controls, quotes and broken UTF-8 are escaped", test_escapes },
	{ "characters are counted and cut whole", test_chars_and_cut },
};

int
main(void)
{
	return tap_run(tests, TAP_COUNT(tests));
}
