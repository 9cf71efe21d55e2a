/* SPDX-License-Identifier: ISC */
/*
 * Tests of gateway-names.c: the names agents see for the tools of every
 * server, valid for the strictest clients (^[a-zA-Z0-9_-]{1,64}$), and the
 * same on every run. The expected hash suffixes were computed apart, with
 * FNV-1a of "server NUL tool" in Python.
 */
#include <string.h>

#include "gateway.h"
#include "mcpd-stubs.h"
#include "tap.h"

/* Names the (server, tool) pairs of a NULL-ended list; new array. */
static json_t *
named(const char *const *pairs, bool is_prefixed)
{
	json_t *all = json_array();

	for (size_t i = 0; pairs[i] != NULL; i += 2)
		json_array_append_new(all,
		    json_pack("{s:s, s:{s:s}}", "server", pairs[i], "tool",
			"name", pairs[i + 1]));
	gateway_names(all, is_prefixed);
	return all;
}

static const char *
name_at(const json_t *all, size_t i)
{
	return json_string_value(json_object_get(json_array_get(all, i),
	    "name"));
}

static void
test_prefixed_and_not(void)
{
	const char *const pairs[] = { "ts", "echo", "everything", "get-sum",
		NULL };
	json_t *all = named(pairs, true);

	TAP_CHECK_STR(name_at(all, 0), "ts__echo");
	TAP_CHECK_STR(name_at(all, 1), "everything__get-sum");
	json_decref(all);
	all = named(pairs, false);
	TAP_CHECK_STR(name_at(all, 0), "echo");
	TAP_CHECK_STR(name_at(all, 1), "get-sum");
	json_decref(all);
}

static void
test_other_characters_become_underscores(void)
{
	const char *const pairs[] = { "my-srv", "get data.v2/ä", NULL };
	json_t *all = named(pairs, true);

	/* ä is two bytes of UTF-8: two underscores. */
	TAP_CHECK_STR(name_at(all, 0), "my-srv__get_data_v2___");
	json_decref(all);
}

static void
test_too_long_is_cut_with_a_stable_hash(void)
{
	char server[64];
	const char *pairs[] = { server, "echo", NULL };
	json_t *all;
	char want[65];

	memset(server, 's', 63);
	server[63] = '\0';
	memset(want, 's', 57);
	strcpy(want + 57, "_dfac1d");
	all = named(pairs, true);
	TAP_CHECK_STR(name_at(all, 0), want);
	TAP_CHECK_INT(strlen(name_at(all, 0)), 64);
	json_decref(all);
	/* Exactly 64 characters still fits as it is. */
	server[58] = '\0';
	all = named(pairs, true);
	TAP_CHECK_INT(strlen(name_at(all, 0)), 64);
	TAP_CHECK(strstr(name_at(all, 0), "__echo") != NULL, "%s",
	    name_at(all, 0));
	json_decref(all);
}

static void
test_collisions_get_their_own_hashes(void)
{
	const char *const pairs[] = { "a", "b.c", "a", "b_c", "a", "d", NULL };
	json_t *all = named(pairs, true);

	TAP_CHECK_STR(name_at(all, 0), "a__b_c_dfd975");
	TAP_CHECK_STR(name_at(all, 1), "a__b_c_cbf2fc");
	TAP_CHECK_STR(name_at(all, 2), "a__d");
	json_decref(all);
}

/* A cut name never takes another tool's: the later one is hashed again. */
static void
test_a_cut_name_that_is_taken_is_hashed_again(void)
{
	/* a__b_c_dfd975 is the cut name of b.c, and the name of a tool. */
	const char *const pairs[] = { "a", "b.c", "a", "b_c", "a", "b_c_dfd975",
		NULL };
	json_t *all = named(pairs, true);

	TAP_CHECK_STR(name_at(all, 0), "a__b_c_5bd83a");
	TAP_CHECK_STR(name_at(all, 1), "a__b_c_cbf2fc");
	TAP_CHECK_STR(name_at(all, 2), "a__b_c_dfd975");
	json_decref(all);
}

/* Two cut names alike (the same start, FNV-1a equal): the second moves. */
static void
test_two_cut_names_alike(void)
{
	char t1[66], t2[66], want1[65], want2[65];
	const char *pairs[] = { "s", t1, "s", t2, NULL };
	json_t *all;

	memset(t1, 't', 60);
	strcpy(t1 + 60, "37859");
	memset(t2, 't', 60);
	strcpy(t2 + 60, "41924");
	memcpy(want1, "s__", 3);
	memset(want1 + 3, 't', 54);
	memcpy(want2, want1, 57);
	strcpy(want1 + 57, "_fbcbd2");
	strcpy(want2 + 57, "_0cc7e5");
	all = named(pairs, true);
	TAP_CHECK_STR(name_at(all, 0), want1);
	TAP_CHECK_STR(name_at(all, 1), want2);
	json_decref(all);
}

static void
test_empty_name_is_hashed(void)
{
	const char *const pairs[] = { "x", "", NULL };
	json_t *all = named(pairs, false);

	TAP_CHECK_STR(name_at(all, 0), "_62c485");
	json_decref(all);
}

static const struct tap_test tests[] = {
	{ "prefixed in a scope of many, plain in one", test_prefixed_and_not },
	{ "other characters become underscores",
	    test_other_characters_become_underscores },
	{ "too long: cut, with a stable hash",
	    test_too_long_is_cut_with_a_stable_hash },
	{ "collisions get their own hashes",
	    test_collisions_get_their_own_hashes },
	{ "a cut name that is taken is hashed again",
	    test_a_cut_name_that_is_taken_is_hashed_again },
	{ "two cut names alike", test_two_cut_names_alike },
	{ "an empty name is hashed", test_empty_name_is_hashed },
};

int
main(void)
{
	return tap_run(tests, TAP_COUNT(tests));
}
