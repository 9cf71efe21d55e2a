/* SPDX-License-Identifier: ISC */
/* Unit tests of daemon/logring.c: the newest lines, in order, as it grows. */
#include <jansson.h>

#include "mcpd.h"
#include "tap.h"

static void
push_lines(struct logring *r, int first, int last)
{
	char line[32];

	for (int i = first; i <= last; i++) {
		snprintf(line, sizeof line, "line %d", i);
		logring_push(r, line, strlen(line));
	}
}

/* The tail holds lines first..last, oldest first. */
static void
check_tail(const struct logring *r, size_t n, int first, int last)
{
	json_t *tail = logring_tail(r, n);
	char want[32];

	TAP_CHECK(json_array_size(tail) == (size_t)(last - first + 1),
	    "expected %d lines, got %zu", last - first + 1,
	    json_array_size(tail));
	for (int i = first; i <= last; i++) {
		const char *got = json_string_value(json_array_get(tail,
		    (size_t)(i - first)));

		snprintf(want, sizeof want, "line %d", i);
		TAP_CHECK(got != NULL && strcmp(got, want) == 0,
		    "expected \"%s\", got \"%s\"", want, got ? got : "(none)");
	}
	json_decref(tail);
}

static void
test_empty(void)
{
	struct logring *r = logring_new(1000);

	check_tail(r, 0, 1, 0);
	check_tail(r, 5, 1, 0);
	logring_free(r);
}

static void
test_grows_below_limit(void)
{
	struct logring *r = logring_new(1000);

	for (int i = 1; i <= 300; i++) {
		push_lines(r, i, i);
		check_tail(r, 0, 1, i);
	}
	check_tail(r, 3, 298, 300);
	logring_free(r);
}

static void
test_wraps_at_limit(void)
{
	/* 25 is not a power of two: growth stops at the limit itself. */
	struct logring *r = logring_new(25);

	push_lines(r, 1, 24);
	check_tail(r, 0, 1, 24);
	push_lines(r, 25, 25);
	check_tail(r, 0, 1, 25);
	push_lines(r, 26, 90);
	check_tail(r, 0, 66, 90);
	check_tail(r, 7, 84, 90);
	check_tail(r, 100, 66, 90);
	logring_free(r);
}

static void
test_limit_of_one(void)
{
	struct logring *r = logring_new(0); /* 0 means 1 */

	push_lines(r, 1, 3);
	check_tail(r, 0, 3, 3);
	logring_free(r);
}

static void
test_long_line_cut(void)
{
	struct logring *r = logring_new(4);
	char big[5000];
	json_t *tail;

	memset(big, 'x', sizeof big);
	logring_push(r, big, sizeof big);
	tail = logring_tail(r, 1);
	TAP_CHECK(json_string_length(json_array_get(tail, 0)) == 4096,
	    "expected a line cut to 4096 bytes, got %zu",
	    json_string_length(json_array_get(tail, 0)));
	json_decref(tail);
	logring_free(r);
}

static const struct tap_test tests[] = {
	{ "an empty ring has no lines", test_empty },
	{ "below its limit the ring keeps every line, in order",
	    test_grows_below_limit },
	{ "at its limit the ring keeps the newest lines, in order",
	    test_wraps_at_limit },
	{ "a limit of 0 keeps one line", test_limit_of_one },
	{ "a line over 4096 bytes is cut", test_long_line_cut },
};

int
main(void)
{
	logring_free(NULL);
	return tap_run(tests, TAP_COUNT(tests));
}
