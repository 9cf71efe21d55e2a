/* SPDX-License-Identifier: ISC */
/*
 * Unit tests of daemon/server-logring.c: the newest lines, in order, as it grows;
 * their times; the text saved at a stop and read back at a start.
 */
#include <errno.h>
#include <stdlib.h>

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

/* Each line keeps the time it was pushed with, as ISO 8601 UTC in ms. */
static void
test_times(void)
{
	struct logring *r = logring_new(4);
	json_t *times;

	logring_push_at(r, 1764747175123LL, "a", 1);
	logring_push_at(r, 0, "b", 1);
	times = logring_times(r, 0);
	TAP_CHECK(json_array_size(times) == 2, "expected 2 times, got %zu",
	    json_array_size(times));
	TAP_CHECK(strcmp(json_string_value(json_array_get(times, 0)),
		      "2025-12-03T07:32:55.123Z") == 0,
	    "got %s", json_string_value(json_array_get(times, 0)));
	TAP_CHECK(strcmp(json_string_value(json_array_get(times, 1)),
		      "1970-01-01T00:00:00.000Z") == 0,
	    "got %s", json_string_value(json_array_get(times, 1)));
	json_decref(times);
	logring_free(r);
}

/*
 * What logring_save writes, logring_load reads back: the same lines and
 * times; a newline in a line was made a space when it came.
 */
static void
test_save_load(void)
{
	struct logring *r = logring_new(3), *back = logring_new(3);
	json_t *a, *b;
	char *buf, *cause = NULL;
	size_t len;
	int n;

	logring_push_at(r, 5, "first", 5);
	logring_push_at(r, 6, "two\nlines", 9);
	logring_push_at(r, 7, "", 0);
	logring_push_at(r, 8, "last", 4);
	logring_save(r, &buf, &len);
	TAP_CHECK(len == strlen("mcpd-logs 1\n6 two lines\n7 \n8 last\n") &&
		memcmp(buf, "mcpd-logs 1\n6 two lines\n7 \n8 last\n", len) == 0,
	    "saved %.*s", (int)len, buf);
	TAP_CHECK(len <= logring_save_max(3), "%zu over the max %zu", len,
	    logring_save_max(3));
	n = logring_load(back, buf, len, &cause);
	TAP_CHECK(n == 3, "loaded %d lines (%s)", n, cause ? cause : "");
	a = logring_times(back, 0);
	b = logring_tail(back, 0);
	TAP_CHECK(strcmp(json_string_value(json_array_get(a, 0)),
		      "1970-01-01T00:00:00.006Z") == 0 &&
		strcmp(json_string_value(json_array_get(b, 0)), "two lines") ==
		    0 &&
		strcmp(json_string_value(json_array_get(b, 2)), "last") == 0,
	    "read back wrong");
	json_decref(a);
	json_decref(b);
	free(buf);
	logring_free(r);
	logring_free(back);
}

/* Text that is not what logring_save writes adds nothing at all. */
static void
test_load_refuses(void)
{
	static const char *const bad[] = { "", "mcpd-logs 2\n",
		"mcpd-logs 1\n5 fine\nnot a time\n", "mcpd-logs 1\n5 no end",
		"mcpd-logs 1\n12345678901234567 too long a time\n",
		"mcpd-logs 1\n5fine\n" };
	struct logring *r = logring_new(10);
	json_t *tail;

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char *cause = NULL;
		int n = logring_load(r, bad[i], strlen(bad[i]), &cause);

		TAP_CHECK(n == -EBADMSG && cause != NULL, "case %zu: got %d", i,
		    n);
		free(cause);
	}
	tail = logring_tail(r, 0);
	TAP_CHECK(json_array_size(tail) == 0, "bad text added %zu lines",
	    json_array_size(tail));
	json_decref(tail);
	logring_free(r);
}

/*
 * After the restart mark, every line held is an old one; as new lines
 * push old ones out, fewer are.
 */
static void
test_restored_count(void)
{
	struct logring *r = logring_new(4);
	json_t *tail;

	push_lines(r, 1, 2);
	logring_mark_restart(r);
	TAP_CHECK(logring_restored(r) == 3, "restored %zu",
	    logring_restored(r));
	tail = logring_tail(r, 1);
	TAP_CHECK(strncmp(json_string_value(json_array_get(tail, 0)),
		      "-- mcpd restarted at ", 21) == 0,
	    "the mark reads %s", json_string_value(json_array_get(tail, 0)));
	json_decref(tail);
	push_lines(r, 3, 4); /* line 1 goes */
	TAP_CHECK(logring_restored(r) == 2, "restored %zu",
	    logring_restored(r));
	push_lines(r, 5, 8); /* every old one goes */
	TAP_CHECK(logring_restored(r) == 0, "restored %zu",
	    logring_restored(r));
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
	{ "each line keeps its time", test_times },
	{ "what is saved is read back the same", test_save_load },
	{ "text that is not a saved log adds nothing", test_load_refuses },
	{ "the lines of before a restart are counted until they go",
	    test_restored_count },
};

int
main(void)
{
	logring_free(NULL);
	return tap_run(tests, TAP_COUNT(tests));
}
