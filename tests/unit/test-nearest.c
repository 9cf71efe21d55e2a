/* SPDX-License-Identifier: ISC */
/* Unit tests of common/nearest.c: did-you-mean for mistyped names. */
#include <stdlib.h>

#include "nearest.h"
#include "tap.h"

static void
test_distance(void)
{
	TAP_CHECK_INT((int)nearest_distance("list", "list"), 0);
	TAP_CHECK_INT((int)nearest_distance("lsit", "list"), 1);
	TAP_CHECK_INT((int)nearest_distance("LIST", "list"), 0);
	TAP_CHECK_INT((int)nearest_distance("", "abc"), 3);
	TAP_CHECK_INT((int)nearest_distance("kitten", "sitting"), 3);
}

static void
test_names(void)
{
	const char *names[] = { "server-memory", NULL, "github", "memory",
		"server-everything" };
	char *got;

	got = nearest_names("server-memroy", names, 5, "");
	TAP_CHECK_STR(got, "server-memory");
	free(got);
	/* Nearest first, each behind the prefix. */
	got = nearest_names("memry", names, 5, "--");
	TAP_CHECK_STR(got, "--memory");
	free(got);
	got = nearest_names("gitub", names, 5, "");
	TAP_CHECK_STR(got, "github");
	free(got);
	TAP_CHECK(nearest_names("zzzzzzzz", names, 5, "") == NULL, "none near");
	TAP_CHECK(nearest_names("x", names, 0, "") == NULL, "no names");
}

static void
test_at_most_three(void)
{
	const char *names[] = { "ab", "ac", "ad", "ae", "af" };
	char *got = nearest_names("aa", names, 5, "");

	TAP_CHECK_STR(got, "ab, ac, ad");
	free(got);
}

static const struct tap_test tests[] = {
	{ "edit distance with transpositions, caseless", test_distance },
	{ "the near names, nearest first, NULLs skipped", test_names },
	{ "at most three are suggested", test_at_most_three },
};

int
main(void)
{
	return tap_run(tests, TAP_COUNT(tests));
}
