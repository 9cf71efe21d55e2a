/* SPDX-License-Identifier: ISC */
/* Unit tests of common/jsonscan.c against jansson as the reference. */
#include <string.h>

#include <jansson.h>

#include "jsonscan.h"
#include "tap.h"

/* Objects both must accept, and text both must refuse. */
static const char *const valid[] = {
	"{}",
	" {\"a\":1} ",
	"{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"content\":[{\"type\":"
	"\"text\",\"text\":\"hi\"}],\"isError\":false}}",
	"{\"s\":\"\\u00e9\\n\\\"\\\\\\/\",\"n\":-0.5e+10,\"z\":0,\"t\":true,"
	"\"f\":false,\"x\":null,\"a\":[[],{},[1, 2]], \"b\" : { \"c\" : [ ] } }",
	"{\"u\":\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"}",
	"{\"pair\":\"\\ud83d\\ude00\",\"one\":\"\\u0001\"}",
	"{\"n\":-123456789012345678,\"r\":1.5e99,\"s\":1e-099}",
};
static const char *const invalid[] = {
	"",
	"[]",
	"{",
	"{\"a\"}",
	"{\"a\":}",
	"{\"a\":1,}",
	"{\"a\":01}",
	"{\"a\":1.}",
	"{\"a\":.5}",
	"{\"a\":-}",
	"{\"a\":tru}",
	"{\"a\":\"\x01\"}",
	"{\"a\":\"\\x\"}",
	"{\"a\":\"\\u12g4\"}",
	"{\"a\":\"\xc0\xaf\"}",	    /* overlong */
	"{\"a\":\"\xed\xa0\x80\"}", /* surrogate */
	"{\"a\":\"\xf4\x90\x80\x80\"}",
	"{\"a\":\"\xe2\x82\"}",
	"{\"a\":1} x",
	"{\"a\":1}{}",
	"{'a':1}",
};

static void
test_agrees_with_jansson(void)
{
	for (size_t i = 0; i < TAP_COUNT(valid); i++) {
		json_t *j = json_loads(valid[i], JSON_DECODE_ANY, NULL);

		TAP_CHECK(jsonscan_object(valid[i], strlen(valid[i]), NULL,
			      0) == 0,
		    "accepts %s", valid[i]);
		TAP_CHECK(j != NULL, "jansson accepts %s", valid[i]);
		json_decref(j);
	}
	for (size_t i = 0; i < TAP_COUNT(invalid); i++)
		TAP_CHECK(jsonscan_object(invalid[i], strlen(invalid[i]), NULL,
			      0) < 0,
		    "refuses %s", invalid[i]);
}

static void
test_member_spans(void)
{
	const char *t = "{\"jsonrpc\":\"2.0\", \"id\" : 42,\"result\":{\"a\":"
			"[1,{\"id\":9}]},\"x\":\"y\"}";
	struct jsonscan_member m[] = { { "id", false, 0, 0 },
		{ "result", false, 0, 0 }, { "method", false, 0, 0 } };

	TAP_CHECK_INT(jsonscan_object(t, strlen(t), m, TAP_COUNT(m)), 0);
	TAP_CHECK(m[0].is_found && m[0].len == 2 &&
		memcmp(t + m[0].off, "42", 2) == 0,
	    "the top-level id, not the nested one");
	TAP_CHECK(m[1].is_found && m[1].len == 18 &&
		memcmp(t + m[1].off, "{\"a\":[1,{\"id\":9}]}", 18) == 0,
	    "the result's raw text");
	TAP_CHECK(!m[2].is_found, "no method member");
}

static void
test_closed_member_set(void)
{
	const char *t = "{\"server\":\"a\",\"tool\":\"b\",\"arguments\":"
			"{\"x\":{\"y\":1}}}";
	const char *extra = "{\"server\":\"a\",\"timeout_ms\":5}";
	struct jsonscan_member m[] = { { "server", false, 0, 0 },
		{ "tool", false, 0, 0 }, { "arguments", false, 0, 0 } };

	TAP_CHECK_INT(jsonscan_object_of(t, strlen(t), m, TAP_COUNT(m)), 0);
	TAP_CHECK(m[2].is_found && m[2].len == 13,
	    "nested keys are not held against the set");
	TAP_CHECK(jsonscan_object_of(extra, strlen(extra), m, TAP_COUNT(m)) < 0,
	    "a top-level key outside the set is refused");
	TAP_CHECK_INT(jsonscan_object(extra, strlen(extra), m, TAP_COUNT(m)),
	    0);
}

static void
test_nested_members(void)
{
	const char *t = "{\"id\":1,\"result\":{\"content\":[{\"isError\":"
			"false}],\"isError\":true},\"x\":{\"isError\":1}}";
	const char *twice = "{\"result\":{\"isError\":true},"
			    "\"result\":{\"a\":1}}";
	const char *last = "{\"result\":{\"isError\":true},\"result\":1}";
	const char *closed = "{\"params\":{\"name\":\"a\",\"more\":1}}";
	struct jsonscan_member m[] = { { "id", false, 0, 0 },
		{ "result", false, 0, 0 }, { "params", false, 0, 0 } };
	struct jsonscan_member sub[] = { { "isError", false, 0, 0 },
		{ "name", false, 0, 0 } };

	TAP_CHECK_INT(jsonscan_object_in(t, strlen(t), m, 3, false, 1, sub, 2),
	    0);
	TAP_CHECK(sub[0].is_found && sub[0].len == 4 &&
		memcmp(t + sub[0].off, "true", 4) == 0,
	    "the result's own isError, not a deeper one or another member's");
	TAP_CHECK(m[1].is_found && m[1].len == 46, "the result's span too");
	TAP_CHECK_INT(jsonscan_object_in(twice, strlen(twice), m, 3, false, 1,
			  sub, 2),
	    0);
	TAP_CHECK(!sub[0].is_found, "a repeated member: its last object's");
	TAP_CHECK_INT(jsonscan_object_in(last, strlen(last), m, 3, false, 1,
			  sub, 2),
	    0);
	TAP_CHECK(!sub[0].is_found, "a repeated member: its last, no object");
	TAP_CHECK(jsonscan_object_in(closed, strlen(closed), m, 3, true, 2, sub,
		      2) < 0,
	    "closed: a nested key outside the set is refused");
	TAP_CHECK_INT(jsonscan_object_in(closed, strlen(closed), m, 3, false, 2,
			  sub, 2),
	    0);
	TAP_CHECK(sub[1].is_found &&
		memcmp(closed + sub[1].off, "\"a\"", 3) == 0,
	    "offsets from the whole text");
}

static void
test_escaped_key_and_depth(void)
{
	const char *escaped = "{\"i\\u0064\":1}";
	struct jsonscan_member m[] = { { "id", false, 0, 0 } };
	char deep[2 * JSONSCAN_DEPTH + 16];
	size_t n = 0;

	TAP_CHECK(jsonscan_object(escaped, strlen(escaped), m, 1) < 0,
	    "an escaped top-level key is left to the parser");
	deep[n++] = '{';
	memcpy(deep + n, "\"a\":", 4);
	n += 4;
	for (int i = 0; i < JSONSCAN_DEPTH; i++)
		deep[n++] = '[';
	for (int i = 0; i < JSONSCAN_DEPTH; i++)
		deep[n++] = ']';
	deep[n++] = '}';
	TAP_CHECK(jsonscan_object(deep, n, NULL, 0) < 0,
	    "deeper than JSONSCAN_DEPTH is left to the parser");
}

/*
 * Valid JSON text that jansson refuses: passed on unparsed, it would
 * reach a client that cannot read it (found by tests/fuzz/fuzz-jsonscan).
 */
static void
test_what_jansson_refuses(void)
{
	static const char *const texts[] = {
		"{\"a\":\"x\\u0000y\"}",
		"{\"a\":\"\\ud800\"}",
		"{\"a\":\"\\ud800x\"}",
		"{\"a\":\"\\ud800\\u0041\"}",
		"{\"a\":\"\\ud83d\\;de00\"}",
		"{\"a\":\"\\ud83d\\ud83d\"}",
		"{\"a\":\"\\udc00\"}",
		"{\"a\":\"\\ud800\"}",
		"{\"big\":123456789012345678901234567890}",
		"{\"big\":-9999999999999999999}",
		"{\"real\":1e400}",
		/* jansson takes these; a bound on digits cannot tell. */
		"{\"left\":-1234567890123456789012345.5}",
		"{\"left\":1e-400}",
	};

	for (size_t i = 0; i < TAP_COUNT(texts); i++) {
		json_error_t err;
		json_t *j = json_loads(texts[i], 0, &err);
		bool is_left = strstr(texts[i], "left") != NULL;

		TAP_CHECK((j == NULL) != is_left, "jansson on %s: %s", texts[i],
		    j == NULL ? err.text : "accepted");
		TAP_CHECK(jsonscan_object(texts[i], strlen(texts[i]), NULL, 0) <
			0,
		    "left to the parser: %s", texts[i]);
		json_decref(j);
	}
}

static const struct tap_test tests[] = {
	{ "accepts and refuses what the grammar says",
	    test_agrees_with_jansson },
	{ "finds top-level member spans", test_member_spans },
	{ "a closed member set refuses other keys", test_closed_member_set },
	{ "one member's object is noted in the same pass",
	    test_nested_members },
	{ "escaped keys and deep nesting fall back",
	    test_escaped_key_and_depth },
	{ "what jansson refuses is left to it", test_what_jansson_refuses },
};

int
main(void)
{
	return tap_run(tests, TAP_COUNT(tests));
}
