/* SPDX-License-Identifier: ISC */
/* Fuzzes the JSON scanner (common/jsonscan.c) against jansson's parser. */
#include <errno.h>
#include <string.h>

#include <jansson.h>

#include "fuzz.h"
#include "jsonscan.h"

/* The deepest nesting of brackets outside strings, or -1 when unbalanced. */
static int
fuzz_jsonscan_depth(const char *s, size_t len)
{
	int depth = 0, max = 0;
	bool is_string = false;

	for (size_t i = 0; i < len; i++) {
		if (is_string) {
			if (s[i] == '\\')
				i++;
			else if (s[i] == '"')
				is_string = false;
		} else if (s[i] == '"') {
			is_string = true;
		} else if (s[i] == '{' || s[i] == '[') {
			if (++depth > max)
				max = depth;
		} else if (s[i] == '}' || s[i] == ']') {
			depth--;
		}
	}
	return max;
}

/*
 * Whether the text holds what the scanner may leave to the parser: an
 * escape anywhere (a key with one, \u0000, a lone surrogate), or a number
 * that jansson might find too big (a long digit run, an exponent); or a
 * NUL byte, which jansson (2.14) skips after a number where JSON has none.
 */
static bool
fuzz_jsonscan_is_odd(const char *s, size_t len)
{
	size_t run = 0;

	for (size_t i = 0; i < len; i++) {
		if (s[i] == '\\' || s[i] == 'e' || s[i] == 'E' || s[i] == '\0')
			return true;
		run = s[i] >= '0' && s[i] <= '9' ? run + 1 : 0;
		if (run > 15)
			return true;
	}
	return false;
}

/* Whether every key of the object is the key of one of m. */
static bool
fuzz_jsonscan_only_listed(json_t *root, const struct jsonscan_member *m,
    size_t n)
{
	const char *key;
	json_t *v;
	size_t i;

	json_object_foreach(root, key, v) {
		for (i = 0; i < n && strcmp(key, m[i].key) != 0; i++)
			;
		if (i == n)
			return false;
	}
	return true;
}

/*
 * jsonscan_object_in with result's object noted too: the same top-level
 * members, and result's own members span exactly their values (the last
 * result's); it refuses only a result whose keys hold an escape.
 */
static void
fuzz_jsonscan_in(const char *text, size_t size, json_t *root,
    const struct jsonscan_member *m, size_t n)
{
	struct jsonscan_member top[8],
	    sub[] = { { "isError", false, 0, 0 }, { "a", false, 0, 0 } };
	json_t *result = json_object_get(root, "result");
	int r;

	FUZZ_CHECK(n <= sizeof top / sizeof top[0]);
	memcpy(top, m, n * sizeof *m);
	r = jsonscan_object_in(text, size, top, n, false, 2, sub, 2);
	if (r < 0) {
		FUZZ_CHECK(json_is_object(result) &&
		    fuzz_jsonscan_is_odd(text, size));
		return;
	}
	for (size_t i = 0; i < n; i++)
		FUZZ_CHECK(top[i].is_found == m[i].is_found &&
		    (!m[i].is_found ||
			(top[i].off == m[i].off && top[i].len == m[i].len)));
	for (size_t i = 0; i < sizeof sub / sizeof sub[0]; i++) {
		json_t *want = json_is_object(result) ?
		    json_object_get(result, sub[i].key) :
		    NULL,
		       *got;

		FUZZ_CHECK(sub[i].is_found == (want != NULL));
		if (!sub[i].is_found)
			continue;
		FUZZ_CHECK(sub[i].off + sub[i].len <= size && sub[i].len > 0);
		got = json_loadb(text + sub[i].off, sub[i].len, JSON_DECODE_ANY,
		    NULL);
		FUZZ_CHECK(got != NULL && json_equal(got, want));
		json_decref(got);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jsonscan_member m[] = { { "jsonrpc", false, 0, 0 },
		{ "id", false, 0, 0 }, { "result", false, 0, 0 },
		{ "", false, 0, 0 }, { "a", false, 0, 0 } };
	const char *text = (const char *)data;
	json_error_t jerr;
	json_t *root;
	int r;

	r = jsonscan_object(text, size, m, sizeof m / sizeof m[0]);
	FUZZ_CHECK(r == 0 || r == -EINVAL);
	root = json_loadb(text, size, 0, &jerr);
	if (r == 0) {
		/* What the scanner vouches for, jansson reads as an object. */
		if (root == NULL)
			fprintf(stderr, "jansson: %s\n", jerr.text);
		FUZZ_CHECK(root != NULL);
		FUZZ_CHECK(json_is_object(root));
		/* Each member found spans exactly its value (the last one). */
		for (size_t i = 0; i < sizeof m / sizeof m[0]; i++) {
			json_t *want = json_object_get(root, m[i].key), *got;

			FUZZ_CHECK(m[i].is_found == (want != NULL));
			if (!m[i].is_found)
				continue;
			FUZZ_CHECK(m[i].off + m[i].len <= size && m[i].len > 0);
			got = json_loadb(text + m[i].off, m[i].len,
			    JSON_DECODE_ANY, NULL);
			FUZZ_CHECK(got != NULL && json_equal(got, want));
			json_decref(got);
		}
		fuzz_jsonscan_in(text, size, root, m, sizeof m / sizeof m[0]);
		/* The closed set: refused exactly when another key is there. */
		FUZZ_CHECK((jsonscan_object_of(text, size, m,
				sizeof m / sizeof m[0]) == 0) ==
		    fuzz_jsonscan_only_listed(root, m, sizeof m / sizeof m[0]));
	} else if (root != NULL && json_is_object(root)) {
		/* It refuses a valid object only for the reasons it says. */
		FUZZ_CHECK(fuzz_jsonscan_depth(text, size) > JSONSCAN_DEPTH ||
		    fuzz_jsonscan_is_odd(text, size));
	}
	json_decref(root);
	return 0;
}
