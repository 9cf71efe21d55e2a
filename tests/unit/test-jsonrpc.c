/* SPDX-License-Identifier: ISC */
/* Unit tests of common/jsonrpc.c: classification, constructors, framing. */
#include <errno.h>

#include <event2/buffer.h>

#include "jsonrpc.h"
#include "tap.h"

#define DUMP_FLAGS (JSON_SORT_KEYS | JSON_COMPACT | JSON_ENCODE_ANY)

/* Parses a JSON text the test itself wrote; NULL only on a test bug. */
static json_t *
load(const char *text)
{
	json_error_t err;
	json_t *j = json_loads(text, JSON_DECODE_ANY, &err);

	TAP_CHECK(j != NULL, "test JSON %s: %s", text, err.text);
	return j;
}

/* Checks that msg dumps to exactly want, then drops msg. */
static void
check_dump(json_t *msg, const char *want)
{
	char *got = msg != NULL ? json_dumps(msg, DUMP_FLAGS) : NULL;

	TAP_CHECK_STR(got, want);
	free(got);
	json_decref(msg);
}

/* A valid message and the parts classify must find in it. */
struct valid_case {
	const char *text;
	enum jsonrpc_type type;
	const char *id;	    /* dump of the id, NULL when absent */
	const char *method; /* NULL when none */
	const char *params; /* dump of params, NULL when absent */
	int code;	    /* error code */
	const char *message;
};

static const struct valid_case valid_cases[] = {
	{ "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":{\"a\":1}}",
	    JSONRPC_REQUEST, "1", "m", "{\"a\":1}", 0, NULL },
	{ "{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"method\":\"tools/list\"}",
	    JSONRPC_REQUEST, "\"x\"", "tools/list", NULL, 0, NULL },
	{ "{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"m\",\"params\":[]}",
	    JSONRPC_REQUEST, "null", "m", "[]", 0, NULL },
	{ "{\"jsonrpc\":\"2.0\",\"id\":-5,\"method\":\"m\"}", JSONRPC_REQUEST,
	    "-5", "m", NULL, 0, NULL },
	{ "{\"jsonrpc\":\"2.0\",\"method\":\"n\",\"params\":[1,2]}",
	    JSONRPC_NOTIFICATION, NULL, "n", "[1,2]", 0, NULL },
	{ "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}",
	    JSONRPC_NOTIFICATION, NULL, "notifications/initialized", NULL, 0,
	    NULL },
	{ "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"x\":[1]}}",
	    JSONRPC_RESULT, "7", NULL, NULL, 0, NULL },
	{ "{\"jsonrpc\":\"2.0\",\"id\":\"r\",\"result\":null}", JSONRPC_RESULT,
	    "\"r\"", NULL, NULL, 0, NULL },
	{ "{\"jsonrpc\":\"2.0\",\"id\":2,\"error\":{\"code\":-32601,"
	  "\"message\":\"no such method\",\"data\":{}}}",
	    JSONRPC_ERROR, "2", NULL, NULL, -32601, "no such method" },
	{ "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700}}",
	    JSONRPC_ERROR, "null", NULL, NULL, -32700, "" },
};

static const char *const type_names[] = { "request", "notification", "result",
	"error" };

/* Checks that j is present exactly when want is, and dumps to want. */
static void
check_part(const char *what, json_t *j, const char *want)
{
	char *got = j != NULL ? json_dumps(j, DUMP_FLAGS) : NULL;

	TAP_CHECK(tap_str_eq(got, want), "%s: expected %s, got %s", what,
	    tap_str_show(want), tap_str_show(got));
	free(got);
}

static void
check_valid(const struct valid_case *c)
{
	struct jsonrpc_msg m;
	char *cause = NULL;
	json_t *msg = load(c->text);
	int r = jsonrpc_classify(msg, &m, &cause);

	TAP_CHECK(r == 0, "%s: expected 0, got %d (%s)", c->text, r,
	    tap_str_show(cause));
	if (r == 0) {
		TAP_CHECK(m.type == c->type, "%s: expected a %s, got a %s",
		    c->text, type_names[c->type], type_names[m.type]);
		check_part("id", m.id, c->id);
		TAP_CHECK_STR(m.method, c->method);
		check_part("params", m.params, c->params);
		TAP_CHECK(m.type != JSONRPC_RESULT || m.result != NULL,
		    "%s: expected a result pointer", c->text);
		if (c->type == JSONRPC_ERROR) {
			TAP_CHECK_INT(m.error_code, c->code);
			TAP_CHECK_STR(m.error_message, c->message);
			TAP_CHECK(json_is_object(m.error),
			    "%s: expected the error object", c->text);
		}
	}
	free(cause);
	json_decref(msg);
}

static void
test_classify_valid(void)
{
	for (size_t i = 0; i < TAP_COUNT(valid_cases); i++)
		check_valid(&valid_cases[i]);
}

static const char *const invalid_cases[] = {
	"[]",
	"[{\"jsonrpc\":\"2.0\",\"method\":\"m\"}]",
	"\"a string\"",
	"42",
	"null",
	"{}",
	"{\"id\":1,\"method\":\"m\"}",
	"{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"m\"}",
	"{\"jsonrpc\":2.0,\"id\":1,\"method\":\"m\"}",
	"{\"jsonrpc\":null,\"id\":1,\"method\":\"m\"}",
	"{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"m\"}",
	"{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"m\"}",
	"{\"jsonrpc\":\"2.0\",\"id\":true,\"method\":\"m\"}",
	"{\"jsonrpc\":\"2.0\",\"id\":false,\"result\":{}}",
	"{\"jsonrpc\":\"2.0\",\"id\":[1],\"method\":\"m\"}",
	"{\"jsonrpc\":\"2.0\",\"id\":1.0,\"result\":{}}",
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{},"
	"\"error\":{\"code\":1,\"message\":\"m\"}}",
	"{\"jsonrpc\":\"2.0\",\"id\":1}",
	"{\"jsonrpc\":\"2.0\",\"result\":{}}",
	"{\"jsonrpc\":\"2.0\",\"error\":{\"code\":1,\"message\":\"m\"}}",
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":\"boom\"}",
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"message\":\"m\"}}",
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":\"1\"}}",
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":1.5}}",
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":7}",
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":null}",
	"{\"jsonrpc\":\"2.0\",\"method\":[\"m\"]}",
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":1}",
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":\"p\"}",
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":true}",
	"{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":null}",
};

static void
test_classify_invalid(void)
{
	for (size_t i = 0; i < TAP_COUNT(invalid_cases); i++) {
		struct jsonrpc_msg m;
		char *cause = NULL;
		json_t *msg = load(invalid_cases[i]);
		int r = jsonrpc_classify(msg, &m, &cause);

		TAP_CHECK(r == -EINVAL, "%s: expected -EINVAL, got %d",
		    invalid_cases[i], r);
		TAP_CHECK(cause != NULL && cause[0] != '\0',
		    "%s: expected a cause, got %s", invalid_cases[i],
		    tap_str_show(cause));
		free(cause);
		json_decref(msg);
	}
}

static void
test_classify_null_cause(void)
{
	struct jsonrpc_msg m;
	json_t *msg = load("[]");

	/* A caller that does not want the reason may pass NULL. */
	TAP_CHECK_INT(jsonrpc_classify(msg, &m, NULL), -EINVAL);
	json_decref(msg);
}

static void
test_request_exact(void)
{
	json_t *id = json_integer(7);

	check_dump(jsonrpc_request(id, "tools/call",
		       load("{\"name\":\"echo\",\"arguments\":{}}")),
	    "{\"id\":7,\"jsonrpc\":\"2.0\",\"method\":\"tools/call\","
	    "\"params\":{\"arguments\":{},\"name\":\"echo\"}}");
	/* The id is not stolen: the caller's reference is still its own. */
	TAP_CHECK_INT(id->refcount, 1);
	json_decref(id);
	id = json_string("a");
	check_dump(jsonrpc_request(id, "ping", NULL),
	    "{\"id\":\"a\",\"jsonrpc\":\"2.0\",\"method\":\"ping\"}");
	json_decref(id);
}

static void
test_notification_exact(void)
{
	check_dump(jsonrpc_notification("notifications/initialized", NULL),
	    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
	check_dump(jsonrpc_notification("notifications/cancelled",
		       load("{\"requestId\":3}")),
	    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
	    "\"params\":{\"requestId\":3}}");
}

static void
test_result_exact(void)
{
	json_t *id = json_integer(1);

	check_dump(jsonrpc_result(id, load("{\"tools\":[]}")),
	    "{\"id\":1,\"jsonrpc\":\"2.0\",\"result\":{\"tools\":[]}}");
	check_dump(jsonrpc_result(id, NULL),
	    "{\"id\":1,\"jsonrpc\":\"2.0\",\"result\":{}}");
	check_dump(jsonrpc_result(NULL, NULL),
	    "{\"id\":null,\"jsonrpc\":\"2.0\",\"result\":{}}");
	TAP_CHECK_INT(id->refcount, 1);
	json_decref(id);
}

static void
test_error_exact(void)
{
	json_t *id = json_string("q");

	check_dump(jsonrpc_error(id, JSONRPC_METHOD_NOT_FOUND, "no such method",
		       NULL),
	    "{\"error\":{\"code\":-32601,\"message\":\"no such method\"},"
	    "\"id\":\"q\",\"jsonrpc\":\"2.0\"}");
	check_dump(jsonrpc_error(NULL, JSONRPC_INVALID_REQUEST, "too long",
		       load("{\"limit\":16}")),
	    "{\"error\":{\"code\":-32600,\"data\":{\"limit\":16},"
	    "\"message\":\"too long\"},\"id\":null,\"jsonrpc\":\"2.0\"}");
	json_decref(id);
}

static void
test_error_message_not_utf8(void)
{
	json_t *msg = jsonrpc_error(NULL, JSONRPC_INTERNAL_ERROR, "bad \xff",
	    NULL);
	json_t *message = json_object_get(json_object_get(msg, "error"),
	    "message");

	/* JSON-RPC requires a message: one quoting a peer must not vanish. */
	TAP_CHECK(json_is_string(message) && json_string_length(message) > 0,
	    "expected a message string, got %s",
	    message != NULL ? "a non-string" : "none");
	json_decref(msg);
}

/* Checks one kind's error message: code, data.kind, and get_kind. */
static void
check_error_kind(enum errors_kind kind)
{
	json_t *id = json_integer(kind);
	json_t *msg = jsonrpc_error_kind(id, kind, "m", NULL);
	json_t *error = json_object_get(msg, "error");
	json_t *data = json_object_get(error, "data");
	json_t *code = json_object_get(error, "code");

	TAP_CHECK(json_integer_value(code) == errors_kind_code(kind),
	    "kind %d: expected code %d, got %lld", kind, errors_kind_code(kind),
	    (long long)json_integer_value(code));
	TAP_CHECK_STR(json_string_value(json_object_get(data, "kind")),
	    errors_kind_name(kind));
	TAP_CHECK_INT(json_object_size(data), 1);
	TAP_CHECK_INT(jsonrpc_error_get_kind(error), kind);
	json_decref(msg);
	json_decref(id);
}

static void
test_error_kind_every_kind(void)
{
	for (int k = 0; k < ERRORS_KIND_COUNT; k++)
		check_error_kind(k);
}

static void
test_error_kind_keeps_data(void)
{
	json_t *id = json_integer(3);

	check_dump(jsonrpc_error_kind(id, ERRORS_OUTCOME_UNKNOWN, "lost",
		       load("{\"execution_outcome\":\"unknown\"}")),
	    "{\"error\":{\"code\":-32006,\"data\":{\"execution_outcome\":"
	    "\"unknown\",\"kind\":\"outcome-unknown\"},\"message\":\"lost\"},"
	    "\"id\":3,\"jsonrpc\":\"2.0\"}");
	json_decref(id);
}

static void
test_error_get_kind_unknown(void)
{
	static const char *const errors[] = {
		"{\"code\":-32001,\"message\":\"m\"}",
		"{\"code\":-32001,\"data\":\"not-found\"}",
		"{\"code\":-32001,\"data\":{\"kind\":\"nope\"}}",
		"{\"code\":-32001,\"data\":{\"kind\":1}}",
		"\"not an object\"",
	};

	for (size_t i = 0; i < TAP_COUNT(errors); i++) {
		json_t *e = load(errors[i]);

		TAP_CHECK(jsonrpc_error_get_kind(e) == -1,
		    "%s: expected -1, got %d", errors[i],
		    jsonrpc_error_get_kind(e));
		json_decref(e);
	}
	TAP_CHECK_INT(jsonrpc_error_get_kind(NULL), -1);
}

/* Writes msg with jsonrpc_write and returns the bytes (caller frees). */
static char *
write_to_string(const json_t *msg, size_t *ret_len)
{
	struct evbuffer *out = evbuffer_new();
	char *s = NULL;
	size_t len;

	TAP_CHECK_INT(jsonrpc_write(out, msg), 0);
	len = evbuffer_get_length(out);
	s = malloc(len + 1);
	evbuffer_remove(out, s, len);
	s[len] = '\0';
	evbuffer_free(out);
	*ret_len = len;
	return s;
}

static void
test_write_one_line(void)
{
	json_t *msg = jsonrpc_request(NULL, "m",
	    load("{\"s\":\"a\\nb\\r\\nc\",\"deep\":{\"x\":[1,\n2]}}"));
	size_t len;
	char *s = write_to_string(msg, &len);
	json_t *back;

	TAP_REQUIRE(len > 1, "expected a line, got %zu bytes", len);
	TAP_CHECK(s[len - 1] == '\n', "expected a final newline in %s", s);
	TAP_CHECK(memchr(s, '\n', len - 1) == NULL,
	    "expected no newline before the end, got %s", s);
	TAP_CHECK(memchr(s, '\r', len) == NULL, "expected no CR, got %s", s);
	back = jsonrpc_parse(s, len, NULL);
	TAP_CHECK(back != NULL && json_equal(back, msg),
	    "expected the line to parse back to the message, got %s", s);
	json_decref(back);
	json_decref(msg);
	free(s);
}

static void
test_write_appends(void)
{
	struct evbuffer *out = evbuffer_new();
	json_t *a = jsonrpc_notification("a", NULL);
	json_t *b = jsonrpc_notification("b", NULL);
	char *s;
	size_t len;

	jsonrpc_write(out, a);
	jsonrpc_write(out, b);
	len = evbuffer_get_length(out);
	s = (char *)evbuffer_pullup(out, -1);
	TAP_CHECK(len > 0 &&
		strncmp(s,
		    "{\"jsonrpc\":\"2.0\",\"method\":\"a\"}\n"
		    "{\"jsonrpc\":\"2.0\",\"method\":\"b\"}\n",
		    len) == 0,
	    "expected two lines, got %.*s", (int)len, s);
	evbuffer_free(out);
	json_decref(a);
	json_decref(b);
}

static void
test_parse(void)
{
	static const char line[] = "{\"a\":1} trailing";
	json_error_t err;
	json_t *j;

	j = jsonrpc_parse(line, 7, &err);
	TAP_CHECK(json_is_object(j),
	    "expected an object from the first 7 "
	    "bytes, got %s",
	    j != NULL ? "something else" : err.text);
	json_decref(j);
	TAP_CHECK(jsonrpc_parse(line, strlen(line), &err) == NULL,
	    "expected trailing garbage to be refused");
	TAP_CHECK(jsonrpc_parse("{\"a\":", 5, &err) == NULL,
	    "expected a truncated object to be refused");
	TAP_CHECK(err.text[0] != '\0', "expected an error text");
	j = jsonrpc_parse("3", 1, &err);
	TAP_CHECK(json_is_integer(j), "expected a scalar to parse");
	json_decref(j);
}

static void
test_constructors_classify(void)
{
	json_t *id = json_integer(9);
	json_t *msgs[] = {
		jsonrpc_request(id, "m", json_object()),
		jsonrpc_notification("n", NULL),
		jsonrpc_result(id, NULL),
		jsonrpc_error_kind(id, ERRORS_TIMEOUT, "late", NULL),
	};

	for (size_t i = 0; i < TAP_COUNT(msgs); i++) {
		struct jsonrpc_msg m;
		char *cause = NULL;

		TAP_CHECK(jsonrpc_classify(msgs[i], &m, &cause) == 0 &&
			m.type == (enum jsonrpc_type)i,
		    "constructor %zu: expected a %s, got %s", i, type_names[i],
		    tap_str_show(cause));
		free(cause);
		json_decref(msgs[i]);
	}
	json_decref(id);
}

/* The ids of the requests left in unsent, as one JSON array. */
static json_t *
unsent_ids(const json_t *unsent)
{
	json_t *ids = json_array(), *entry;
	size_t i;

	json_array_foreach(unsent, i, entry)
		json_array_append(ids,
		    json_object_get(json_array_get(entry, 0), "id"));
	return ids;
}

static void
check_unsent(const json_t *unsent, const char *want)
{
	json_t *got = unsent_ids(unsent), *w = load(want);
	char *text = json_dumps(got, JSON_COMPACT);

	TAP_CHECK(json_equal(got, w), "left %s, expected %s", text, want);
	free(text);
	json_decref(got);
	json_decref(w);
}

static void
test_unqueue_cancelled(void)
{
	json_t *unsent = load("[[{\"id\": 1, \"method\": \"a\"}, null],"
			      " [{\"id\": 2, \"method\": \"b\"}, {}],"
			      " [{\"id\": \"x\", \"method\": \"c\"}]]");
	json_t *cancel2 = load("{\"method\": \"notifications/cancelled\","
			       " \"params\": {\"requestId\": 2}}");
	json_t *cancel9 = load("{\"method\": \"notifications/cancelled\","
			       " \"params\": {\"requestId\": 9}}");
	json_t *other = load("{\"method\": \"notifications/progress\","
			     " \"params\": {\"requestId\": 1}}");

	TAP_CHECK_INT(jsonrpc_unqueue_cancelled(unsent, other), -1);
	TAP_CHECK_INT(jsonrpc_unqueue_cancelled(unsent, cancel9), 0);
	check_unsent(unsent, "[1, 2, \"x\"]");
	TAP_CHECK_INT(jsonrpc_unqueue_cancelled(unsent, cancel2), 1);
	check_unsent(unsent, "[1, \"x\"]");
	TAP_CHECK_INT(jsonrpc_unqueue_cancelled(unsent, cancel2), 0);
	json_decref(unsent);
	json_decref(cancel2);
	json_decref(cancel9);
	json_decref(other);
}

/* A raw result keeps its id whatever its length (a client's long string). */
static void
test_raw_result_long_id(void)
{
	static const size_t lens[] = { 1, 125, 126, 127, 300, 5000 };

	for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
		char *s = malloc(lens[i] + 1);
		struct evbuffer *out = evbuffer_new();
		json_t *id, *back;

		TAP_REQUIRE(s != NULL && out != NULL, "out of memory");
		memset(s, 'i', lens[i]);
		s[lens[i]] = '\0';
		id = json_string(s);
		TAP_CHECK_INT(jsonrpc_write_raw_result(out, id, "{\"a\":1}", 7),
		    0);
		back = jsonrpc_parse((const char *)evbuffer_pullup(out, -1),
		    evbuffer_get_length(out) - 1, NULL);
		TAP_CHECK(back != NULL &&
			json_equal(json_object_get(back, "id"), id),
		    "id of %zu characters", lens[i]);
		json_decref(back);
		json_decref(id);
		evbuffer_free(out);
		free(s);
	}
}

static void
test_parse_int(void)
{
	static const struct {
		const char *text;
		bool is_int;
		int64_t v;
	} cases[] = {
		{ "0", true, 0 },
		{ "42", true, 42 },
		{ "-7", true, -7 },
		{ "9223372036854775807", true, INT64_MAX },
		{ "-9223372036854775808", true, INT64_MIN },
		{ "9223372036854775808", false, 0 },
		{ "-9223372036854775809", false, 0 },
		{ "99999999999999999999", false, 0 },
		{ "", false, 0 },
		{ "-", false, 0 },
		{ "+1", false, 0 },
		{ " 1", false, 0 },
		{ "1 ", false, 0 },
		{ "1.0", false, 0 },
		{ "1e3", false, 0 },
		{ "\"1\"", false, 0 },
	};
	int64_t v;

	for (size_t i = 0; i < TAP_COUNT(cases); i++) {
		v = -1;
		TAP_CHECK(jsonrpc_parse_int(cases[i].text,
			      strlen(cases[i].text), &v) == cases[i].is_int,
		    "%s is%s an integer", cases[i].text,
		    cases[i].is_int ? "" : " not");
		if (cases[i].is_int)
			TAP_CHECK(v == cases[i].v, "%s parses to itself",
			    cases[i].text);
	}
}

/* jsonrpc_load_value makes what json_loadb makes, or NULL where it does. */
static void
test_load_value(void)
{
	static const char *const texts[] = { "1", "-42", "0",
		"9223372036854775807", "9223372036854775808", "1.5", "1e3",
		"\"tools/call\"", "\"\"", "\"a\\\"b\"", "\"\\u00e9\"",
		"\"\xc3\xa9\"", "\"\xff\"", "null", "true", "{\"a\":1}",
		"[1,2]", "\"", "-", "" };

	for (size_t i = 0; i < TAP_COUNT(texts); i++) {
		size_t len = strlen(texts[i]);
		json_t *got = jsonrpc_load_value(texts[i], len);
		json_t *want = json_loadb(texts[i], len, JSON_DECODE_ANY, NULL);

		TAP_CHECK(want == NULL ? got == NULL :
					 got != NULL && json_equal(got, want) &&
			    json_typeof(got) == json_typeof(want),
		    "%s: not what json_loadb makes", texts[i]);
		json_decref(got);
		json_decref(want);
	}
}

static const struct tap_test tests[] = {
	{ "parse_int: plain integers, their limits, nothing else",
	    test_parse_int },
	{ "raw result with a long id", test_raw_result_long_id },
	{ "classify: requests, notifications, results, errors",
	    test_classify_valid },
	{ "classify: invalid shapes are -EINVAL with a cause",
	    test_classify_invalid },
	{ "classify: cause may be NULL", test_classify_null_cause },
	{ "request: exact JSON, id not stolen", test_request_exact },
	{ "notification: exact JSON", test_notification_exact },
	{ "result: exact JSON, null id and empty result defaults",
	    test_result_exact },
	{ "error: exact JSON with and without data", test_error_exact },
	{ "error: a message that is not UTF-8 is replaced, not dropped",
	    test_error_message_not_utf8 },
	{ "error_kind: code and data.kind for every kind",
	    test_error_kind_every_kind },
	{ "error_kind: keeps the caller's data", test_error_kind_keeps_data },
	{ "error_get_kind: -1 without a known data.kind",
	    test_error_get_kind_unknown },
	{ "write: one line, one final newline, escaped newlines",
	    test_write_one_line },
	{ "write: appends lines", test_write_appends },
	{ "parse: exact length, garbage, scalars", test_parse },
	{ "load_value: what json_loadb makes, plain ones without it",
	    test_load_value },
	{ "constructors produce what classify expects",
	    test_constructors_classify },
	{ "unqueue_cancelled: removes the cancelled request, only that",
	    test_unqueue_cancelled },
};

int
main(void)
{
	return tap_run(tests, TAP_COUNT(tests));
}
