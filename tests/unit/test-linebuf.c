/* SPDX-License-Identifier: ISC */
/* Unit tests of common/linebuf.c: splitting, CRLF, the size limit. */
#include <errno.h>

#include <event2/buffer.h>

#include "linebuf.h"
#include "tap.h"

#define MAX 16 /* the limit of most tests: short enough to spell out */

/* A line reader under test with what it has returned so far. */
struct reader {
	struct linebuf lb;
	struct evbuffer *in;
	char got[4096]; /* lines returned, each followed by "|" */
	size_t got_len;
	int last; /* what the last linebuf_peek returned */
};

static void
reader_init(struct reader *r, size_t max)
{
	memset(r, 0, sizeof *r);
	linebuf_init(&r->lb, max);
	r->in = evbuffer_new();
}

static void
reader_free(struct reader *r)
{
	evbuffer_free(r->in);
}

/* Takes every complete line, as a daemon's read callback would. */
static void
reader_drain(struct reader *r)
{
	char *line;
	size_t len;

	while ((r->last = linebuf_peek(&r->lb, r->in, &line, &len)) == 1) {
		TAP_CHECK(line[len] == '\0', "expected a NUL after the line");
		TAP_CHECK(strlen(line) == len, "expected length %zu, got %zu",
		    strlen(line), len);
		if (r->got_len + len + 1 < sizeof r->got) {
			memcpy(r->got + r->got_len, line, len);
			r->got_len += len;
			r->got[r->got_len++] = '|';
			r->got[r->got_len] = '\0';
		}
		linebuf_consume(&r->lb, r->in);
	}
}

/* Feeds data in chunks of size chunk, draining after each one. */
static void
reader_feed(struct reader *r, const char *data, size_t len, size_t chunk)
{
	for (size_t off = 0; off < len && r->last >= 0; off += chunk) {
		size_t n = len - off < chunk ? len - off : chunk;

		evbuffer_add(r->in, data + off, n);
		reader_drain(r);
	}
}

/* Feeds text in chunks and checks the lines and the final peek result. */
static void
check_split(const char *text, size_t chunk, const char *want, int want_last)
{
	struct reader r;

	reader_init(&r, MAX);
	reader_feed(&r, text, strlen(text), chunk);
	TAP_CHECK(tap_str_eq(r.got, want),
	    "chunk %zu: expected \"%s\", got "
	    "\"%s\"",
	    chunk, want, r.got);
	TAP_CHECK(r.last == want_last,
	    "chunk %zu: expected peek to end "
	    "with %d, got %d",
	    chunk, want_last, r.last);
	reader_free(&r);
}

/* As check_split, for every chunk size from 1 to the whole text. */
static void
check_split_all(const char *text, const char *want, int want_last)
{
	for (size_t chunk = 1; chunk <= strlen(text); chunk++)
		check_split(text, chunk, want, want_last);
}

static void
test_byte_by_byte(void)
{
	check_split_all("hello\nworld\n", "hello|world|", 0);
	check_split_all("{\"a\":1}\n{\"b\":2}\npart", "{\"a\":1}|{\"b\":2}|",
	    0);
}

static void
test_crlf(void)
{
	check_split_all("a\r\nbb\r\n", "a|bb|", 0);
	check_split_all("\r\n", "|", 0);
	check_split_all("a\rb\n", "a\rb|", 0);
	check_split_all("a\r\r\n", "a\r|", 0);
}

static void
test_empty_lines(void)
{
	check_split_all("\n\n\n", "|||", 0);
	check_split_all("a\n\nb\n", "a||b|", 0);
}

static void
test_exactly_max(void)
{
	/* 16 bytes: the longest line accepted, with LF or CRLF. */
	check_split_all("0123456789abcdef\n", "0123456789abcdef|", 0);
	check_split_all("0123456789abcdef\r\n", "0123456789abcdef|", 0);
	check_split_all("0123456789abcdef", "", 0);
	check_split_all("0123456789abcdef\r", "", 0);
}

static void
test_max_plus_one(void)
{
	check_split_all("0123456789abcdefg\n", "", -EMSGSIZE);
	check_split_all("0123456789abcdefg\r\n", "", -EMSGSIZE);
	check_split_all("0123456789abcdefg", "", -EMSGSIZE);
	check_split_all("0123456789abcdef\rx", "", -EMSGSIZE);
	check_split_all("ok\n0123456789abcdefg\n", "ok|", -EMSGSIZE);
	check_split_all("0123456789abcdefghijklmnopqrstuvwxyz\n", "",
	    -EMSGSIZE);
}

static void
test_max_plus_one_exact_point(void)
{
	static const char text[] = "0123456789abcdefg";
	struct reader r;

	/* Waits through max bytes, refuses at the first one beyond. */
	reader_init(&r, MAX);
	for (size_t i = 0; i < MAX; i++) {
		evbuffer_add(r.in, text + i, 1);
		reader_drain(&r);
		TAP_CHECK(r.last == 0, "byte %zu: expected 0, got %d", i + 1,
		    r.last);
	}
	evbuffer_add(r.in, text + MAX, 1);
	reader_drain(&r);
	TAP_CHECK_INT(r.last, -EMSGSIZE);
	reader_free(&r);
}

static void
test_several_in_one_chunk(void)
{
	struct reader r;
	static const char text[] = "one\ntwo\r\nthree\n\nfour";

	reader_init(&r, MAX);
	evbuffer_add(r.in, text, strlen(text));
	reader_drain(&r);
	TAP_CHECK_STR(r.got, "one|two|three||");
	TAP_CHECK_INT(r.last, 0);
	TAP_CHECK_INT(evbuffer_get_length(r.in), strlen("four"));
	evbuffer_add(r.in, "\n", 1);
	reader_drain(&r);
	TAP_CHECK_STR(r.got, "one|two|three||four|");
	TAP_CHECK_INT(evbuffer_get_length(r.in), 0);
	reader_free(&r);
}

static void
test_big_line_in_chunks(void)
{
	const size_t size = 16 << 20, chunk = 64 << 10;
	char *data = malloc(size + 1);
	struct linebuf lb;
	struct evbuffer *in = evbuffer_new();
	char *line = NULL;
	size_t len = 0, off;
	int r = 0;

	for (off = 0; off < size; off++)
		data[off] = 'a' + off % 26;
	data[size] = '\n';
	linebuf_init(&lb, size);
	for (off = 0; off < size + 1 && r == 0; off += chunk) {
		size_t n = size + 1 - off < chunk ? size + 1 - off : chunk;

		evbuffer_add(in, data + off, n);
		r = linebuf_peek(&lb, in, &line, &len);
		/* What was scanned once is never scanned again. */
		TAP_CHECK(r != 0 || lb.scanned == off + n,
		    "after %zu bytes: "
		    "expected scanned %zu, got %zu",
		    off + n, off + n, lb.scanned);
	}
	TAP_CHECK_INT(r, 1);
	TAP_CHECK_INT(len, size);
	TAP_CHECK(r == 1 && memcmp(line, data, size) == 0,
	    "expected the line's bytes back");
	linebuf_consume(&lb, in);
	TAP_CHECK_INT(evbuffer_get_length(in), 0);
	evbuffer_free(in);
	free(data);
}

static void
test_consume_then_next(void)
{
	struct linebuf lb;
	struct evbuffer *in = evbuffer_new();
	char *line;
	size_t len;

	linebuf_init(&lb, MAX);
	evbuffer_add(in, "first\nsecond\nthi", 16);
	TAP_CHECK_INT(linebuf_peek(&lb, in, &line, &len), 1);
	TAP_CHECK_STR(line, "first");
	linebuf_consume(&lb, in);
	TAP_CHECK_INT(linebuf_peek(&lb, in, &line, &len), 1);
	TAP_CHECK_STR(line, "second");
	linebuf_consume(&lb, in);
	TAP_CHECK_INT(linebuf_peek(&lb, in, &line, &len), 0);
	TAP_CHECK_INT(evbuffer_get_length(in), 3);
	evbuffer_add(in, "rd\n", 3);
	TAP_CHECK_INT(linebuf_peek(&lb, in, &line, &len), 1);
	TAP_CHECK_STR(line, "third");
	linebuf_consume(&lb, in);
	TAP_CHECK_INT(evbuffer_get_length(in), 0);
	evbuffer_free(in);
}

/* Peeks twice without consuming: a caller may stop and come back. */
static void
check_peek_again(const char *text, const char *want)
{
	struct linebuf lb;
	struct evbuffer *in = evbuffer_new();
	char *line;
	size_t len;

	linebuf_init(&lb, MAX);
	evbuffer_add(in, text, strlen(text));
	for (int i = 0; i < 2; i++) {
		TAP_CHECK_INT(linebuf_peek(&lb, in, &line, &len), 1);
		TAP_CHECK_STR(line, want);
		TAP_CHECK_INT(len, strlen(want));
	}
	linebuf_consume(&lb, in);
	TAP_CHECK_INT(linebuf_peek(&lb, in, &line, &len), 1);
	TAP_CHECK_STR(line, "next");
	evbuffer_free(in);
}

static void
test_peek_twice(void)
{
	check_peek_again("same\nnext\n", "same");
	check_peek_again("same\r\nnext\n", "same");
	check_peek_again("\nnext\n", "");
	check_peek_again("\r\nnext\n", "");
}

static const struct tap_test tests[] = {
	{ "lines split over small chunks, down to one byte",
	    test_byte_by_byte },
	{ "CRLF ends a line; a lone CR stays", test_crlf },
	{ "empty lines are lines", test_empty_lines },
	{ "a line of exactly max bytes is accepted", test_exactly_max },
	{ "max+1 bytes give -EMSGSIZE with or without a newline",
	    test_max_plus_one },
	{ "-EMSGSIZE comes at byte max+1, not before",
	    test_max_plus_one_exact_point },
	{ "several lines in one chunk", test_several_in_one_chunk },
	{ "a 16 MiB line in 64 KiB chunks, scanned once",
	    test_big_line_in_chunks },
	{ "consume, then peek the next line", test_consume_then_next },
	{ "peek twice without consume returns the same line", test_peek_twice },
};

int
main(void)
{
	return tap_run(tests, TAP_COUNT(tests));
}
