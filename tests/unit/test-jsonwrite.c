/* SPDX-License-Identifier: ISC */
/* Unit tests of common/jsonwrite.c: its text is jansson's, byte for byte. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonwrite.h"
#include "tap.h"

/* Tricky strings: every control, quotes, backslash, slash, UTF-8, DEL. */
static const char *const strings[] = {
	"",
	"plain",
	"say \"hi\"",
	"back\\slash and /slash",
	"\b\f\n\r\t",
	"\x01\x02\x03\x04\x05\x06\x07\x0b\x0e\x0f\x10\x11\x12\x13\x14\x15"
	"\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f",
	"esc \x1b[31mred\x1b[0m",
	"caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x98\x80 \xe2\x80\xa8",
	"del\x7f",
	"\"\\\"\\",
};

static void
test_strings(void)
{
	char buf[256], *want;
	struct jsonwrite w;
	json_t *v;

	for (size_t i = 0; i < TAP_COUNT(strings); i++) {
		v = json_string(strings[i]);
		TAP_REQUIRE(v != NULL, "jansson takes string %zu", i);
		want = json_dumps(v, JSON_ENCODE_ANY);
		jsonwrite_init(&w, buf, sizeof buf);
		jsonwrite_string(&w, strings[i], strlen(strings[i]));
		TAP_CHECK(!w.is_over, "string %zu fits", i);
		buf[w.len] = '\0';
		TAP_CHECK_STR(buf, want);
		free(want);
		json_decref(v);
	}
}

static void
test_plain(void)
{
	char buf[64];
	struct jsonwrite w;

	jsonwrite_init(&w, buf, sizeof buf);
	jsonwrite_string_plain(&w, "a\"b\\c\nd\x1b", 8);
	buf[w.len] = '\0';
	TAP_CHECK_STR(buf, "\"a\\\"b\\\\c\\u000ad\\u001b\"");
}

static void
test_numbers(void)
{
	static const int64_t ints[] = { 0, 1, -1, 42, 1000000007, INT64_MAX,
		INT64_MIN + 1, -9007199254740993 };
	static const uint64_t thousandths[] = { 0, 1, 143, 1000, 12345678, 999,
		100000 };
	char buf[64], want[64], *dumped;
	struct jsonwrite w;
	json_t *v;

	for (size_t i = 0; i < TAP_COUNT(ints); i++) {
		v = json_integer(ints[i]);
		dumped = json_dumps(v, JSON_ENCODE_ANY);
		jsonwrite_init(&w, buf, sizeof buf);
		jsonwrite_int(&w, ints[i]);
		buf[w.len] = '\0';
		TAP_CHECK_STR(buf, dumped);
		free(dumped);
		json_decref(v);
	}
	/* 0.000, 0.001, 0.143, 1.000, 12345.678 ... as %.3f writes them. */
	for (size_t i = 0; i < TAP_COUNT(thousandths); i++) {
		snprintf(want, sizeof want, "%.3f",
		    (double)thousandths[i] / 1000);
		jsonwrite_init(&w, buf, sizeof buf);
		jsonwrite_thousandths(&w, thousandths[i]);
		buf[w.len] = '\0';
		TAP_CHECK_STR(buf, want);
	}
}

static void
test_values(void)
{
	static const char *const docs[] = {
		"{\"pid\":123,\"exe\":\"/usr/bin/x\"}",
		"{\"rule\":null,\"by\":\"default-allow\"}",
		"{\"z\":1,\"a\":[true,false,null,\"\\u0001\\n\"],\"m\":{}}",
		"[[],{},\"x\",-5,1.5,0.143]",
		"{\"k\\\"ey\\n\":\"v\"}",
	};
	char buf[256], *want;
	struct jsonwrite w;
	json_t *v;

	for (size_t i = 0; i < TAP_COUNT(docs); i++) {
		v = json_loads(docs[i], JSON_DECODE_ANY, NULL);
		TAP_REQUIRE(v != NULL, "jansson parses doc %zu", i);
		want = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
		jsonwrite_init(&w, buf, sizeof buf);
		jsonwrite_json(&w, v);
		buf[w.len] = '\0';
		TAP_CHECK_STR(buf, want);
		free(want);
		json_decref(v);
	}
	jsonwrite_init(&w, buf, sizeof buf);
	jsonwrite_json(&w, NULL);
	buf[w.len] = '\0';
	TAP_CHECK_STR(buf, "null");
}

static void
test_over(void)
{
	char buf[8];
	struct jsonwrite w;

	jsonwrite_init(&w, buf, sizeof buf);
	jsonwrite_lit(&w, "1234567");
	TAP_CHECK(!w.is_over, "seven bytes fit in eight");
	jsonwrite_string(&w, "ab", 2);
	TAP_CHECK(w.is_over, "what does not fit says so");
	jsonwrite_lit(&w, "x");
	TAP_CHECK(w.is_over && w.len <= sizeof buf, "nothing more is written");
}

static const struct tap_test tests[] = {
	{ "strings are escaped as json_dumps escapes them", test_strings },
	{ "the plain style escapes only what JSON requires", test_plain },
	{ "integers and thousandths as jansson and %.3f", test_numbers },
	{ "values as json_dumps JSON_COMPACT", test_values },
	{ "a full buffer is said, not overrun", test_over },
};

int
main(void)
{
	return tap_run(tests, TAP_COUNT(tests));
}
