/* SPDX-License-Identifier: ISC */
/* Unit tests of common/sse.c: fields, line ends, ids, retry, limits, splits. */
#include <errno.h>
#include <inttypes.h>

#include "sse.h"
#include "tap.h"

#define MAX	  1024 /* the limit of most cases */
#define STOP_RC	  42   /* what the callback returns to stop the parser */
#define IN(lit)	  (lit), sizeof(lit) - 1
#define CASE(lit) .in = (lit), .len = sizeof(lit) - 1

/*
 * One stream and what must come out of it: the events as "type:data",
 * then " id:=X" when the event set the id X itself or " id=X" when it
 * inherited it, then " retry=N" when it carried one, then ";". Data bytes
 * LF, CR and NUL are shown as \n, \r and \0. state, when not NULL, is the
 * parser's state at the end: "last=<id or ~> retry=<n>".
 */
struct sse_case {
	const char *in;
	size_t len;
	const char *events;
	const char *state;
	int rc;		/* what the last feed returns */
	size_t max;	/* 0 for MAX */
	int stop_after; /* the callback stops after this many events */
};

/* What came out of one run. */
struct outcome {
	char events[4096];
	size_t len;
	int count;
	int stop_after;
	int rc;
	char state[128];
};

static void
outcome_add(struct outcome *o, const char *s, size_t n)
{
	if (n >= sizeof o->events - o->len)
		n = sizeof o->events - o->len - 1;
	memcpy(o->events + o->len, s, n);
	o->len += n;
	o->events[o->len] = '\0';
}

static void
outcome_add_str(struct outcome *o, const char *s)
{
	outcome_add(o, s, strlen(s));
}

static void
outcome_add_escaped(struct outcome *o, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\n')
			outcome_add_str(o, "\\n");
		else if (s[i] == '\r')
			outcome_add_str(o, "\\r");
		else if (s[i] == '\0')
			outcome_add_str(o, "\\0");
		else
			outcome_add(o, s + i, 1);
	}
}

static int
outcome_event(void *arg, const struct sse_event *ev)
{
	struct outcome *o = arg;
	char retry[32];

	TAP_CHECK(ev->data[ev->data_len] == '\0', "expected a NUL after data");
	outcome_add_str(o, ev->type);
	outcome_add_str(o, ":");
	outcome_add_escaped(o, ev->data, ev->data_len);
	if (ev->has_id || ev->id != NULL) {
		outcome_add_str(o, ev->has_id ? " id:=" : " id=");
		outcome_add_str(o, ev->id != NULL ? ev->id : "");
	}
	if (ev->retry_ms >= 0) {
		snprintf(retry, sizeof retry, " retry=%" PRId64, ev->retry_ms);
		outcome_add_str(o, retry);
	}
	outcome_add_str(o, ";");
	o->count++;
	return o->count == o->stop_after ? STOP_RC : 0;
}

static void
outcome_state(struct outcome *o, const struct sse_parser *p)
{
	const char *id = sse_parser_last_id_peek(p);

	snprintf(o->state, sizeof o->state, "last=%s retry=%" PRId64,
	    id != NULL ? id : "~", sse_parser_retry_ms(p));
}

/* Feeds c->in in chunks of size chunk until the end or an error. */
static void
run_case(const struct sse_case *c, size_t chunk, struct outcome *o)
{
	struct sse_parser p;

	memset(o, 0, sizeof *o);
	o->stop_after = c->stop_after;
	sse_parser_init(&p, c->max != 0 ? c->max : MAX);
	for (size_t off = 0; off < c->len && o->rc == 0; off += chunk) {
		size_t n = c->len - off < chunk ? c->len - off : chunk;

		o->rc = sse_parser_feed(&p, c->in + off, n, outcome_event, o);
	}
	outcome_state(o, &p);
	sse_parser_free(&p);
}

/*
 * Runs one case whole and in chunks of 1, 2, 3 and 7 bytes: the same
 * events, return code and end state must come out of every split.
 */
static void
check_case(const struct sse_case *c, size_t index)
{
	static const size_t chunks[] = { 1, 2, 3, 7, 0 };
	struct outcome o;

	for (size_t i = 0; i < sizeof chunks / sizeof chunks[0]; i++) {
		size_t chunk = chunks[i] != 0 ? chunks[i] : c->len;

		if (chunk == 0)
			chunk = 1;
		run_case(c, chunk, &o);
		TAP_CHECK(tap_str_eq(o.events, c->events),
		    "case %zu \"%s\", chunk %zu: expected events \"%s\", "
		    "got \"%s\"",
		    index, c->in, chunk, c->events, o.events);
		TAP_CHECK(o.rc == c->rc,
		    "case %zu \"%s\", chunk %zu: expected rc %d, got %d", index,
		    c->in, chunk, c->rc, o.rc);
		TAP_CHECK(c->state == NULL || tap_str_eq(o.state, c->state),
		    "case %zu \"%s\", chunk %zu: expected state \"%s\", got "
		    "\"%s\"",
		    index, c->in, chunk, tap_str_show(c->state), o.state);
	}
}

static void
check_cases(const struct sse_case *cases, size_t n)
{
	for (size_t i = 0; i < n; i++)
		check_case(&cases[i], i);
}

#define CHECK_CASES(cases) check_cases((cases), TAP_COUNT(cases))

static void
test_fields(void)
{
	static const struct sse_case cases[] = {
		{ CASE("data: a\n\n"), .events = "message:a;" },
		{ CASE("data:a\n\n"), .events = "message:a;" },
		{ CASE("data:  a\n\n"), .events = "message: a;" },
		{ CASE("data: a \n\n"), .events = "message:a ;" },
		{ CASE("data: a:b: c\n\n"), .events = "message:a:b: c;" },
		{ CASE("data\n\n"), .events = "message:;" },
		{ CASE("data:\n\n"), .events = "message:;" },
		{ CASE("data: \n\n"), .events = "message:;" },
		{ CASE("event: add\ndata: x\n\n"), .events = "add:x;" },
		{ CASE("event:add\ndata: x\n\n"), .events = "add:x;" },
		{ CASE("event\ndata: x\n\n"), .events = "message:x;" },
		{ CASE("event: \ndata: x\n\n"), .events = "message:x;" },
		{ CASE("event: a\nevent: b\ndata: x\n\n"), .events = "b:x;" },
		{ CASE("data: x\nevent: late\n\n"), .events = "late:x;" },
		{ CASE("foo: bar\ndata: x\nbar\n\n"), .events = "message:x;" },
		/* Field names are exact: case, spaces and prefixes matter. */
		{ CASE("Data: x\n\nDATA: y\n\n"), .events = "" },
		{ CASE("data : x\n\n"), .events = "" },
		{ CASE(" data: x\n\n"), .events = "" },
		{ CASE("dat: x\n\ndataa: x\n\n"), .events = "" },
		{ CASE("datadatadata: x\n\n"), .events = "" },
		{ CASE("events: t\nids: 1\nretrys: 5\ndata: x\n\n"),
		    .events = "message:x;", .state = "last=~ retry=-1" },
	};

	CHECK_CASES(cases);
}

static void
test_comments(void)
{
	static const struct sse_case cases[] = {
		{ CASE(": hello\ndata: x\n: mid\ndata: y\n\n"),
		    .events = "message:x\\ny;" },
		{ CASE(":\n\n"), .events = "" },
		{ CASE(": data: x\n\n"), .events = "" },
		{ CASE(":data: x\n\n"), .events = "" },
		{ CASE("data: x\n:\n\n"), .events = "message:x;" },
		{ CASE(":\ndata: x\n\n"), .events = "message:x;" },
		{ CASE(":id: 5\n\n"), .events = "",
		    .state = "last=~ retry=-1" },
	};

	CHECK_CASES(cases);
}

static void
test_multiline_data(void)
{
	static const struct sse_case cases[] = {
		{ CASE("data: a\ndata: b\ndata: c\n\n"),
		    .events = "message:a\\nb\\nc;" },
		{ CASE("data: a\ndata\ndata: c\n\n"),
		    .events = "message:a\\n\\nc;" },
		{ CASE("data\ndata\n\n"), .events = "message:\\n;" },
		{ CASE("data: a\ndata:\n\n"), .events = "message:a\\n;" },
		{ CASE("data: a\n\ndata: b\n\n"),
		    .events = "message:a;message:b;" },
		{ CASE("event: e\ndata: {\"x\":\ndata: 1}\n\n"),
		    .events = "e:{\"x\":\\n1};" },
		/* NUL bytes in data are data. */
		{ CASE("data: a\0b\n\n"), .events = "message:a\\0b;" },
	};

	CHECK_CASES(cases);
}

static void
test_line_ends(void)
{
	static const struct sse_case cases[] = {
		{ CASE("data: a\r\ndata: b\r\n\r\n"),
		    .events = "message:a\\nb;" },
		{ CASE("data: a\rdata: b\r\r"), .events = "message:a\\nb;" },
		{ CASE("data: a\ndata: b\r\n\r"), .events = "message:a\\nb;" },
		{ CASE("data: a\r\n\r\ndata: b\r\r"),
		    .events = "message:a;message:b;" },
		{ CASE("data: a\r\r\n"), .events = "message:a;" },
		{ CASE("data: a\n\r\n"), .events = "message:a;" },
		{ CASE("data: a\r\n\n"), .events = "message:a;" },
		{ CASE("data: a\n\r"), .events = "message:a;" },
		{ CASE("data: a\r\n\rdata: b\n\r"),
		    .events = "message:a;message:b;" },
		{ CASE("\r\n\r\n\r\r\n\ndata: x\r\n\r\n"),
		    .events = "message:x;" },
		/* One CR LF is one line end, not a line end and a blank line. */
		{ CASE("data: a\r\ndata: b\r\n\r\n"),
		    .events = "message:a\\nb;" },
		{ CASE("data: a\r\n"), .events = "" },
	};

	CHECK_CASES(cases);
}

/* Feeds each part in turn and checks the events. */
static void
check_feeds(const char *const *parts, const char *want)
{
	struct sse_parser p;
	struct outcome o;

	memset(&o, 0, sizeof o);
	sse_parser_init(&p, MAX);
	for (size_t i = 0; parts[i] != NULL; i++)
		TAP_CHECK_INT(sse_parser_feed(&p, parts[i], strlen(parts[i]),
				  outcome_event, &o),
		    0);
	TAP_CHECK_STR(o.events, want);
	sse_parser_free(&p);
}

static void
test_cr_lf_split(void)
{
	static const char *const joined[] = { "data: a\r", "\ndata: b\r", "\n",
		"\r", "\n", NULL };
	static const char *const empty_between[] = { "data: a\r", "", "\n",
		"data: b\n", "\n", NULL };
	static const char *const cr_then_cr[] = { "data: a\r", "\r", "data: b",
		"\r", "\r", NULL };
	static const char *const cr_then_text[] = { "data: a\r", "data: b\r",
		"\n\r", "\n", NULL };

	check_feeds(joined, "message:a\\nb;");
	check_feeds(empty_between, "message:a\\nb;");
	check_feeds(cr_then_cr, "message:a;message:b;");
	check_feeds(cr_then_text, "message:a\\nb;");
}

static void
test_bom(void)
{
	static const struct sse_case cases[] = {
		{ CASE("\xEF\xBB\xBF"
		       "data: x\n\n"),
		    .events = "message:x;" },
		{ CASE("\xEF\xBB\xBF:c\r\ndata: x\r\n\r\n"),
		    .events = "message:x;" },
		{ CASE("\xEF\xBB\xBF\ndata: x\n\n"), .events = "message:x;" },
		/* Once only: a second BOM is part of the field name. */
		{ CASE("\xEF\xBB\xBF\xEF\xBB\xBF"
		       "data: x\n\n"),
		    .events = "" },
		/* A BOM's first bytes that are not a BOM are kept. */
		{ CASE("\xEF\xBB"
		       "data: x\n\n"),
		    .events = "" },
		{ CASE("\xEF"
		       "data: x\n\n"),
		    .events = "" },
		{ CASE("\xEF\xBB\xBE\n"
		       "data: x\n\n"),
		    .events = "message:x;" },
		/* Only at the start of the stream. */
		{ CASE("data: x\n\n\xEF\xBB\xBF"
		       "data: y\n\n"),
		    .events = "message:x;" },
		{ CASE("\xEF\xBB\xBF"
		       "data: \xEF\xBB\xBF\n\n"),
		    .events = "message:\xEF\xBB\xBF;" },
	};

	CHECK_CASES(cases);
}

static void
test_ids(void)
{
	static const struct sse_case cases[] = {
		{ CASE("id: 1\ndata: a\n\ndata: b\n\n"),
		    .events = "message:a id:=1;message:b id=1;",
		    .state = "last=1 retry=-1" },
		{ CASE("id: 1\nid: 2\ndata: a\n\n"),
		    .events = "message:a id:=2;", .state = "last=2 retry=-1" },
		{ CASE("id:  1\ndata: a\n\n"), .events = "message:a id:= 1;" },
		{ CASE("data: a\nid: 3\ndata: b\n\n"),
		    .events = "message:a\\nb id:=3;" },
		/* An empty id clears it. */
		{ CASE("id: 1\ndata: a\n\nid\ndata: b\n\ndata: c\n\n"),
		    .events = "message:a id:=1;message:b id:=;message:c;",
		    .state = "last=~ retry=-1" },
		{ CASE("id: 1\ndata: a\n\nid:\ndata: b\n\n"),
		    .events = "message:a id:=1;message:b id:=;",
		    .state = "last=~ retry=-1" },
		/* A blank line commits the id even when nothing is dispatched. */
		{ CASE("id: 7\n\n"), .events = "", .state = "last=7 retry=-1" },
		{ CASE("id: 7\n\ndata: x\n\n"), .events = "message:x id=7;",
		    .state = "last=7 retry=-1" },
		/* An unfinished event's id is not committed. */
		{ CASE("data: x\nid: 7\n"), .events = "",
		    .state = "last=~ retry=-1" },
		{ CASE("id: 1\ndata: a\n\nid: 2\ndata: b\n"),
		    .events = "message:a id:=1;", .state = "last=1 retry=-1" },
	};

	CHECK_CASES(cases);
}

static void
test_id_nul(void)
{
	static const struct sse_case cases[] = {
		{ CASE("id: 1\ndata: a\n\nid: 2\0x\ndata: b\n\n"),
		    .events = "message:a id:=1;message:b id=1;",
		    .state = "last=1 retry=-1" },
		{ CASE("id: \0\ndata: a\n\n"), .events = "message:a;",
		    .state = "last=~ retry=-1" },
		{ CASE("id: 5\nid: 6\0\ndata: a\n\n"),
		    .events = "message:a id:=5;", .state = "last=5 retry=-1" },
		{ CASE("id: \0"
		       "5\ndata: a\n\n"),
		    .events = "message:a;", .state = "last=~ retry=-1" },
	};

	CHECK_CASES(cases);
}

static void
test_retry(void)
{
	static const struct sse_case cases[] = {
		{ CASE("retry: 1500\ndata: a\n\n"),
		    .events = "message:a retry=1500;",
		    .state = "last=~ retry=1500" },
		{ CASE("retry:1500\ndata: a\n\n"),
		    .events = "message:a retry=1500;" },
		{ CASE("retry: 0\ndata: a\n\n"),
		    .events = "message:a retry=0;" },
		{ CASE("retry: 007\ndata: a\n\n"),
		    .events = "message:a retry=7;" },
		{ CASE("retry: 100\nretry: 200\ndata: a\n\n"),
		    .events = "message:a retry=200;",
		    .state = "last=~ retry=200" },
		/* It takes effect without dispatch; it belongs to one event. */
		{ CASE("retry: 1500\n\ndata: a\n\n"), .events = "message:a;",
		    .state = "last=~ retry=1500" },
		{ CASE("retry: 5\ndata: a\n\ndata: b\n\n"),
		    .events = "message:a retry=5;message:b;",
		    .state = "last=~ retry=5" },
		/* Digits only, else ignored; the last valid value stays. */
		{ CASE("retry: 15x\ndata: a\n\n"), .events = "message:a;",
		    .state = "last=~ retry=-1" },
		{ CASE("retry: -1\nretry: +5\nretry: 1.5\nretry: 1e3\n\n"),
		    .events = "", .state = "last=~ retry=-1" },
		{ CASE("retry:  15\nretry: 15 \nretry: 0x10\n\n"), .events = "",
		    .state = "last=~ retry=-1" },
		{ CASE("retry:\nretry\nretry: \n\n"), .events = "",
		    .state = "last=~ retry=-1" },
		{ CASE("retry: 1\0"
		       "2\n\n"),
		    .events = "", .state = "last=~ retry=-1" },
		{ CASE("retry: 100\ndata: a\n\nretry: x\ndata: b\n\n"),
		    .events = "message:a retry=100;message:b;",
		    .state = "last=~ retry=100" },
		/* Too large for 64 bits: the largest value. */
		{ CASE("retry: 9223372036854775807\n\n"), .events = "",
		    .state = "last=~ retry=9223372036854775807" },
		{ CASE("retry: 99999999999999999999999999\n\n"), .events = "",
		    .state = "last=~ retry=9223372036854775807" },
	};

	CHECK_CASES(cases);
}

static void
test_no_data_no_event(void)
{
	static const struct sse_case cases[] = {
		{ CASE("event: x\nid: 1\nretry: 5\n\n"), .events = "",
		    .state = "last=1 retry=5" },
		{ CASE("\n\n\n"), .events = "" },
		{ CASE(""), .events = "" },
		{ CASE("event: add\n\ndata: y\n\n"), .events = "message:y;" },
		{ CASE("event: add\ndata: x\n\ndata: y\n\n"),
		    .events = "add:x;message:y;" },
		/* The stream ends before the blank line. */
		{ CASE("data: x"), .events = "" },
		{ CASE("data: x\n"), .events = "" },
		{ CASE("data: x\r"), .events = "" },
	};

	CHECK_CASES(cases);
}

static void
test_size_limit(void)
{
	static const struct sse_case cases[] = {
		/* A line of 16 bytes is accepted, with any line end. */
		{ CASE("data:0123456789a\n\n"),
		    .events = "message:0123456789a;", .max = 16 },
		{ CASE("data:0123456789a\r\n\r\n"),
		    .events = "message:0123456789a;", .max = 16 },
		{ CASE("data:0123456789a\r\r"),
		    .events = "message:0123456789a;", .max = 16 },
		/* 17 bytes are not, whatever the field, line end or none. */
		{ CASE("data:0123456789ab\n\n"), .events = "", .rc = -EMSGSIZE,
		    .max = 16 },
		{ CASE("data:0123456789ab"), .events = "", .rc = -EMSGSIZE,
		    .max = 16 },
		{ CASE(":0123456789abcdef\n\n"), .events = "", .rc = -EMSGSIZE,
		    .max = 16 },
		{ CASE("x-unknown-field:0\n\n"), .events = "", .rc = -EMSGSIZE,
		    .max = 16 },
		{ CASE("id:0123456789abcd\n\n"), .events = "", .rc = -EMSGSIZE,
		    .max = 16 },
		/* Data of 16 bytes over two lines, then of 17. */
		{ CASE("data:0123456\ndata:01234567\n\n"),
		    .events = "message:0123456\\n01234567;", .max = 16 },
		{ CASE("data:01234567\ndata:01234567\n\n"), .events = "",
		    .rc = -EMSGSIZE, .max = 16 },
		{ CASE("data\ndata\ndata\ndata\ndata\ndata\ndata\ndata\ndata\n"
		       "data\ndata\ndata\ndata\ndata\ndata\ndata\ndata\n\n"),
		    .events =
			"message:\\n\\n\\n\\n\\n\\n\\n\\n\\n\\n\\n\\n\\n\\n\\n\\n;",
		    .max = 16 },
		{ CASE(
		      "data\ndata\ndata\ndata\ndata\ndata\ndata\ndata\ndata\n"
		      "data\ndata\ndata\ndata\ndata\ndata\ndata\ndata\ndata\n\n"),
		    .events = "", .rc = -EMSGSIZE, .max = 16 },
		/* What came before is delivered. */
		{ CASE("data: ok\n\ndata:0123456789abcdef\n\n"),
		    .events = "message:ok;", .rc = -EMSGSIZE, .max = 16 },
	};

	CHECK_CASES(cases);
}

static void
test_size_limit_exact_point(void)
{
	static const char text[] = "data:0123456789ab\n\n";
	struct sse_parser p;
	struct outcome o;

	/* Byte 17 of the line is refused, not a byte before. */
	memset(&o, 0, sizeof o);
	sse_parser_init(&p, 16);
	for (size_t i = 0; i < 16; i++)
		TAP_CHECK(sse_parser_feed(&p, text + i, 1, outcome_event, &o) ==
			0,
		    "byte %zu: expected 0", i + 1);
	TAP_CHECK_INT(sse_parser_feed(&p, text + 16, 1, outcome_event, &o),
	    -EMSGSIZE);
	/* It sticks until reset. */
	TAP_CHECK_INT(sse_parser_feed(&p, "\n\ndata: x\n\n", 11, outcome_event,
			  &o),
	    -EMSGSIZE);
	TAP_CHECK_STR(o.events, "");
	sse_parser_reset(&p);
	TAP_CHECK_INT(sse_parser_feed(&p, "data: x\n\n", 9, outcome_event, &o),
	    0);
	TAP_CHECK_STR(o.events, "message:x;");
	sse_parser_free(&p);
}

/* Checks a big event arrives whole. */
static int
check_big_event(void *arg, const struct sse_event *ev)
{
	const char *want = arg;

	TAP_CHECK_INT(ev->data_len, strlen(want));
	TAP_CHECK(strcmp(ev->data, want) == 0, "expected the event's bytes");
	return STOP_RC;
}

static void
test_big_event(void)
{
	const size_t size = 1 << 20, chunk = 4096;
	char *stream = malloc(size + 8), *want = malloc(size + 1);
	struct sse_parser p;
	size_t len, off;
	int r = 0;

	/* "data:" and 1 MiB - 5 bytes make a line of exactly 1 MiB. */
	memcpy(stream, "data:", 5);
	for (off = 5; off < size; off++)
		stream[off] = want[off - 5] = 'a' + off % 26;
	want[size - 5] = '\0';
	memcpy(stream + size, "\r\n\r\n", 4);
	len = size + 4;
	sse_parser_init(&p, size);
	for (off = 0; off < len && r == 0; off += chunk)
		r = sse_parser_feed(&p, stream + off,
		    len - off < chunk ? len - off : chunk, check_big_event,
		    want);
	TAP_CHECK_INT(r, STOP_RC);
	sse_parser_free(&p);
	free(stream);
	free(want);
}

static void
test_callback_stops(void)
{
	static const struct sse_case cases[] = {
		{ CASE("data: a\n\ndata: b\n\n"), .events = "message:a;",
		    .rc = STOP_RC, .stop_after = 1 },
		{ CASE("data: a\n\ndata: b\n\ndata: c\n\n"),
		    .events = "message:a;message:b;", .rc = STOP_RC,
		    .stop_after = 2 },
	};

	CHECK_CASES(cases);
}

static void
test_reset(void)
{
	struct sse_parser p;
	struct outcome o;
	static const char first[] = "id: 1\nretry: 50\ndata: a\n\n"
				    "event: e\ndata: partial\nid: 2\n";

	memset(&o, 0, sizeof o);
	sse_parser_init(&p, MAX);
	TAP_CHECK_INT(sse_parser_feed(&p, IN(first), outcome_event, &o), 0);
	sse_parser_reset(&p);
	/* What a reconnection sends: the committed id and the retry. */
	TAP_CHECK_STR(sse_parser_last_id_peek(&p), "1");
	TAP_CHECK_INT(sse_parser_retry_ms(&p), 50);
	/* A BOM is skipped again; the unfinished event is gone. */
	TAP_CHECK_INT(sse_parser_feed(&p,
			  IN("\xEF\xBB\xBF"
			     "data: b\n\nid: 3\ndata: c\n\n"),
			  outcome_event, &o),
	    0);
	TAP_CHECK_STR(o.events,
	    "message:a id:=1 retry=50;message:b id=1;message:c id:=3;");
	TAP_CHECK_STR(sse_parser_last_id_peek(&p), "3");
	sse_parser_free(&p);
	sse_parser_free(&p);
	sse_parser_free(NULL);
}

static const struct tap_test tests[] = {
	{ "fields: data, event, unknown, one space dropped", test_fields },
	{ "comments are ignored", test_comments },
	{ "data lines are joined with LF", test_multiline_data },
	{ "CRLF, LF and CR end lines", test_line_ends },
	{ "a CR and a LF in separate feeds are one line end",
	    test_cr_lf_split },
	{ "one leading BOM is skipped", test_bom },
	{ "ids persist and are committed at blank lines", test_ids },
	{ "an id with a NUL is ignored", test_id_nul },
	{ "retry: digits only, per event and persisting", test_retry },
	{ "an event without data is not dispatched", test_no_data_no_event },
	{ "a line or event data beyond max is -EMSGSIZE", test_size_limit },
	{ "-EMSGSIZE at byte max+1, sticky until reset",
	    test_size_limit_exact_point },
	{ "a 1 MiB event in 4 KiB chunks", test_big_event },
	{ "a callback's non-zero return stops the feed", test_callback_stops },
	{ "reset keeps the last id and retry, drops the rest", test_reset },
};

int
main(void)
{
	return tap_run(tests, TAP_COUNT(tests));
}
