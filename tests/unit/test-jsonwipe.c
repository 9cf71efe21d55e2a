/* SPDX-License-Identifier: ISC */
/* Unit tests of common/jsonwipe.c: strings wiped in place and when freed. */
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "jsonwipe.h"
#include "tap.h"

#define MARK "hunter2-"

/* Blocks freed while MARK was still in them since the last reset. */
static int leaks;

/* jansson's free: counts blocks that go back with MARK in them. */
static void
test_free(void *p)
{
	if (p != NULL &&
	    memmem(p, malloc_usable_size(p), MARK, strlen(MARK)) != NULL)
		leaks++;
	free(p);
}

/* Whether the n bytes of s are all zero. */
static bool
is_zero(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] != '\0')
			return false;
	return true;
}

/* Whether the string v is wiped: zeros, its length kept. */
static bool
is_wiped(const json_t *v, size_t len)
{
	return json_is_string(v) && json_string_length(v) == len &&
	    is_zero(json_string_value(v), len);
}

/* An object with MARK in strings at every depth, and other values. */
static json_t *
doc_new(void)
{
	return json_pack("{s:s, s:{s:s, s:[s, i, {s:s}]}, s:i, s:b, s:n, "
			 "s:[]}",
	    "a", MARK "a", "obj", "b", MARK "bb", "arr", MARK "ccc", 7, "d",
	    MARK "dddd", "n", 42, "t", 1, "z", "e");
}

static void
test_strings(void)
{
	json_t *doc = doc_new(), *obj, *arr, *s;

	TAP_REQUIRE(doc != NULL, "doc");
	obj = json_object_get(doc, "obj");
	arr = json_object_get(obj, "arr");
	jsonwipe_strings(doc);
	TAP_CHECK(is_wiped(json_object_get(doc, "a"), 9), "a top string");
	TAP_CHECK(is_wiped(json_object_get(obj, "b"), 10), "a nested one");
	TAP_CHECK(is_wiped(json_array_get(arr, 0), 11), "an item");
	TAP_CHECK(is_wiped(json_object_get(json_array_get(arr, 2), "d"), 12),
	    "one in an object in an array");
	TAP_CHECK_INT(json_integer_value(json_array_get(arr, 1)), 7);
	TAP_CHECK_INT(json_integer_value(json_object_get(doc, "n")), 42);
	TAP_CHECK(json_is_true(json_object_get(doc, "t")), "true stays");
	TAP_CHECK(json_object_get(obj, "arr") == arr, "keys stay");
	json_decref(doc);
	/* A string itself; NULL and values without strings are no-ops. */
	s = json_string(MARK "x");
	jsonwipe_strings(s);
	TAP_CHECK(is_wiped(s, 9), "a string by itself");
	json_decref(s);
	jsonwipe_strings(NULL);
	jsonwipe_strings(json_null());
	s = json_integer(3);
	jsonwipe_strings(s);
	TAP_CHECK_INT(json_integer_value(s), 3);
	json_decref(s);
}

static void
test_decref_last(void)
{
	json_t *doc;

	/* The detector sees what a plain json_decref leaves. */
	leaks = 0;
	json_decref(doc_new());
	TAP_CHECK(leaks >= 4, "json_decref frees %d blocks with the mark",
	    leaks);
	leaks = 0;
	jsonwipe_decref(doc_new());
	TAP_CHECK_INT(leaks, 0);
	leaks = 0;
	jsonwipe_decref(json_string(MARK "alone"));
	TAP_CHECK_INT(leaks, 0);
	/* Held twice: the first decref leaves it whole, the last wipes. */
	doc = doc_new();
	json_incref(doc);
	jsonwipe_decref(doc);
	TAP_CHECK(strcmp(json_string_value(json_object_get(doc, "a")),
		      MARK "a") == 0,
	    "a value still held is intact");
	TAP_CHECK_INT(leaks, 0);
	jsonwipe_decref(doc);
	TAP_CHECK_INT(leaks, 0);
	jsonwipe_decref(NULL);
}

static void
test_decref_shared_value(void)
{
	json_t *doc = doc_new(), *shared, *obj;

	TAP_REQUIRE(doc != NULL, "doc");
	/* Another holder keeps a string and an object of doc. */
	shared = json_incref(json_object_get(doc, "a"));
	obj = json_incref(json_object_get(doc, "obj"));
	leaks = 0;
	jsonwipe_decref(doc);
	TAP_CHECK_STR(json_string_value(shared), MARK "a");
	TAP_CHECK_STR(json_string_value(json_object_get(obj, "b")), MARK "bb");
	TAP_CHECK_STR(json_string_value(json_array_get(json_object_get(obj,
							   "arr"),
			  0)),
	    MARK "ccc");
	TAP_CHECK_INT(leaks, 0);
	/* Their last holder wipes them in turn. */
	jsonwipe_decref(shared);
	jsonwipe_decref(obj);
	TAP_CHECK_INT(leaks, 0);
}

static const struct tap_test tests[] = {
	{ "jsonwipe_strings wipes every string value, recursively",
	    test_strings },
	{ "jsonwipe_decref wipes on the last reference only",
	    test_decref_last },
	{ "jsonwipe_decref leaves values held elsewhere intact",
	    test_decref_shared_value },
};

int
main(void)
{
	json_set_alloc_funcs(malloc, test_free);
	return tap_run(tests, TAP_COUNT(tests));
}
