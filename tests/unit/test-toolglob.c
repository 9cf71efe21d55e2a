/* SPDX-License-Identifier: ISC */
/* Unit tests of common/toolglob.c: checking tool globs, and matching. */
#include <string.h>

#include "tap.h"
#include "toolglob.h"

/* The column and reason of a bad glob, or 0 for a good one. */
static size_t
test_column(const char *glob, const char **why)
{
	size_t col = 0;

	*why = "";
	return toolglob_check(glob, &col, why) == 0 ? 0 : col;
}

static void
test_good(void)
{
	const char *why;

	TAP_CHECK_INT((int)test_column("ts__*", &why), 0);
	TAP_CHECK_INT((int)test_column("*__read_?ile", &why), 0);
	TAP_CHECK_INT((int)test_column("t[0-9]", &why), 0);
	TAP_CHECK_INT((int)test_column("t[!0-9]", &why), 0);
	TAP_CHECK_INT((int)test_column("t[]x]", &why), 0);
	TAP_CHECK_INT((int)test_column("a\\]", &why), 0);
}

static void
test_bad(void)
{
	const char *why;
	char longer[TOOLGLOB_MAX + 2];

	TAP_CHECK_INT((int)test_column("ts__[ab", &why), 5);
	TAP_CHECK_STR(why, "'[' has no closing ']'");
	TAP_CHECK_INT((int)test_column("a]b", &why), 2);
	TAP_CHECK_STR(why, "']' closes no '[' (write \\] for the character)");
	TAP_CHECK_INT((int)test_column("x\\", &why), 2);
	TAP_CHECK_STR(why, "'\\' at the end escapes nothing");
	TAP_CHECK_INT((int)test_column("", &why), 1);
	TAP_CHECK_INT((int)test_column("a\tb", &why), 2);
	memset(longer, 'a', sizeof longer - 1);
	longer[sizeof longer - 1] = '\0';
	TAP_CHECK_INT((int)test_column(longer, &why), TOOLGLOB_MAX + 1);
}

static void
test_match(void)
{
	TAP_CHECK(toolglob_match("ts__*", "ts__echo"), "prefix");
	TAP_CHECK(!toolglob_match("ts__*", "more__echo"), "other server");
	TAP_CHECK(toolglob_match("*__echo", "more__echo"), "any server");
	TAP_CHECK(toolglob_match("t[0-9]", "t7"), "class");
	TAP_CHECK(!toolglob_match("t[!0-9]", "t7"), "negated class");
	TAP_CHECK(!toolglob_match("echo", "echo2"), "whole name");
	TAP_CHECK(!toolglob_match(NULL, "x") && !toolglob_match("x", NULL),
	    "NULL never matches");
}

static const struct tap_test tests[] = {
	{ "globs of *, ?, classes and escapes are good", test_good },
	{ "a bad glob says its column and why", test_bad },
	{ "matching is fnmatch over the whole name", test_match },
};

int
main(void)
{
	return tap_run(tests, TAP_COUNT(tests));
}
