/* SPDX-License-Identifier: ISC */
/* Unit tests of daemon/net-http-parse.c: framing, limits, refusals, split reads. */
#include <errno.h>
#include <string.h>

#include <event2/buffer.h>

#include "mcpd-stubs.h"
#include "tap.h"

/* What one response gave the callbacks, and how the parse ended. */
struct seen {
	int err;
	enum http_parse_state state;
	int status;
	int nheads;
	char head[512]; /* "name=value;" per header */
	char body[4096];
	size_t body_len;
	size_t leftover;
	bool is_keep_alive;
};

static int
seen_head(void *arg, const struct http_response *r)
{
	struct seen *s = arg;

	s->nheads++;
	s->status = r->status;
	s->head[0] = '\0';
	for (size_t i = 0; i < r->nheaders; i++) {
		size_t n = strlen(s->head);

		snprintf(s->head + n, sizeof s->head - n, "%s=%s;",
		    r->headers[i].name, r->headers[i].value);
	}
	return 0;
}

static int
seen_body(void *arg, const char *data, size_t len)
{
	struct seen *s = arg;

	if (s->body_len + len < sizeof s->body)
		memcpy(s->body + s->body_len, data, len);
	s->body_len += len;
	return 0;
}

static const struct http_cbs cbs = { seen_head, seen_body, NULL };

/* Feeds text in pieces of step bytes (0: all at once), as net-http.c does. */
static struct seen
parse(const char *text, size_t len, size_t step, bool is_head)
{
	struct evbuffer *in = evbuffer_new();
	struct http_parse p;
	struct seen s = { 0 };
	size_t off = 0;
	int r;

	http_parse_init(&p, is_head);
	while (off < len && s.err == 0 && p.state != HTTP_PARSE_DONE) {
		size_t n = step == 0 || step > len - off ? len - off : step;

		evbuffer_add(in, text + off, n);
		off += n;
		while (p.state != HTTP_PARSE_DONE &&
		    (r = http_parse_step(&p, in, &cbs, &s)) != 0)
			if (r < 0) {
				s.err = r;
				break;
			}
	}
	s.body[s.body_len < sizeof s.body ? s.body_len : 0] = '\0';
	s.state = p.state;
	s.leftover = evbuffer_get_length(in) + (len - off);
	s.is_keep_alive = p.is_keep_alive;
	http_parse_clear(&p);
	evbuffer_free(in);
	return s;
}

#define PARSE(text) parse((text), strlen(text), 0, false)

static void
test_content_length(void)
{
	struct seen s = PARSE("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
			      "Content-Length: 5\r\n\r\nhelloHTTP/1.1");

	TAP_CHECK_INT(s.err, 0);
	TAP_CHECK_INT(s.state, HTTP_PARSE_DONE);
	TAP_CHECK_INT(s.status, 200);
	TAP_CHECK_STR(s.head, "Content-Type=text/plain;Content-Length=5;");
	TAP_CHECK_STR(s.body, "hello");
	TAP_CHECK_INT(s.leftover, strlen("HTTP/1.1"));
	TAP_CHECK(s.is_keep_alive, "HTTP/1.1 keeps the connection");
	s = PARSE("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
	TAP_CHECK(s.state == HTTP_PARSE_DONE && s.body_len == 0,
	    "an empty body ends at the head");
	s = PARSE("HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nab");
	TAP_CHECK(s.state == HTTP_PARSE_DONE && !s.is_keep_alive,
	    "HTTP/1.0 does not keep the connection");
	s = PARSE("HTTP/1.1 200 OK\r\nconnection: Close\r\n"
		  "Content-Length: 1\r\n\r\nx");
	TAP_CHECK(!s.is_keep_alive, "Connection: close is honoured");
}

static void
test_chunked(void)
{
	struct seen s = PARSE("HTTP/1.1 200 OK\r\n"
			      "Transfer-Encoding: Chunked\r\n"
			      "Content-Length: 999\r\n\r\n"
			      "5;name=value;other\r\nhello\r\n"
			      "1A\r\nabcdefghijklmnopqrstuvwxyz\r\n"
			      "0;last\r\nX-Trailer: 1\r\nY: 2\r\n\r\nleft");

	TAP_CHECK_INT(s.err, 0);
	TAP_CHECK_INT(s.state, HTTP_PARSE_DONE);
	TAP_CHECK_STR(s.body, "helloabcdefghijklmnopqrstuvwxyz");
	TAP_CHECK_INT(s.leftover, 4);
	TAP_CHECK(s.is_keep_alive, "a chunked body keeps the connection");
	s = PARSE("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
		  "3\r\nabcX\r\n0\r\n\r\n");
	TAP_CHECK_INT(s.err, -EPROTO);
	s = PARSE("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
		  "zz\r\n");
	TAP_CHECK_INT(s.err, -EPROTO);
	s = PARSE("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
		  "ffffffffffffffffff\r\n");
	TAP_CHECK_INT(s.err, -EPROTO);
}

static void
test_close_delimited_and_no_body(void)
{
	struct seen s = PARSE("HTTP/1.1 200 OK\r\n\r\nall of it");

	TAP_CHECK_INT(s.state, HTTP_PARSE_BODY_CLOSE);
	TAP_CHECK_STR(s.body, "all of it");
	TAP_CHECK(!s.is_keep_alive, "the body ends with the connection");
	s = PARSE("HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\n");
	TAP_CHECK(s.state == HTTP_PARSE_DONE && s.body_len == 0, "204");
	s = PARSE("HTTP/1.1 304 Not Modified\r\n\r\n");
	TAP_CHECK(s.state == HTTP_PARSE_DONE && s.body_len == 0, "304");
	s = parse("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", 38, 0, true);
	TAP_CHECK(s.state == HTTP_PARSE_DONE && s.body_len == 0,
	    "a HEAD request's answer has no body");
	s = PARSE("HTTP/1.1 100 Continue\r\n\r\n"
		  "HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n"
		  "HTTP/1.1 201 Created\r\nContent-Length: 1\r\n\r\nx");
	TAP_CHECK(s.nheads == 1 && s.status == 201, "interim answers skipped");
	TAP_CHECK_STR(s.head, "Content-Length=1;");
}

static void
test_garbage_status_lines(void)
{
	static const char *const lines[] = {
		"HTTP/1.1\r\n\r\n",
		"HTTP/1.1 2000 OK\r\n\r\n",
		"HTTP/1.1 200OK\r\n\r\n",
		"HTTP/1.1  200 OK\r\n\r\n",
		"HTTP/1.-1 200 OK\r\n\r\n",
		"HTTP/1.10 200 OK\r\n\r\n",
		"HTTP/1.1 +20 OK\r\n\r\n",
		"HTTP/1.1 OK\r\n\r\n",
		"HTTP/2 200\r\n\r\n",
		"HTTP/1.1 99 Low\r\n\r\n",
		"HTTP/1.1 600 High\r\n\r\n",
		"ICY 200 OK\r\n\r\n",
		"http/1.1 200 OK\r\n\r\n",
		"\x01\x02\x03\r\n\r\n",
	};

	for (size_t i = 0; i < TAP_COUNT(lines); i++) {
		struct seen s = PARSE(lines[i]);

		TAP_CHECK(s.err == -EPROTO && s.nheads == 0,
		    "\"%s\": expected -EPROTO, got %d", lines[i], s.err);
	}
}

static void
test_bad_headers(void)
{
	struct seen s = PARSE("HTTP/1.1 200 OK\r\nno colon here\r\n\r\n");

	TAP_CHECK_INT(s.err, -EPROTO);
	s = PARSE("HTTP/1.1 200 OK\r\n: empty name\r\n\r\n");
	TAP_CHECK_INT(s.err, -EPROTO);
	s = PARSE("HTTP/1.1 200 OK\r\nContent-Length: 5x\r\n\r\nhello");
	TAP_CHECK_INT(s.err, -EPROTO);
	s = PARSE("HTTP/1.1 200 OK\r\nContent-Length: "
		  "99999999999999999999999\r\n\r\n");
	TAP_CHECK_INT(s.err, -EPROTO);
	s = PARSE("HTTP/1.1 200 OK\r\nX:\t \tv\r\n\r\n");
	TAP_CHECK_STR(s.head, "X=v;");
}

static void
test_limits(void)
{
	size_t big = HTTP_HEAD_MAX + 64, n;
	char *text = malloc(big + 256);
	struct seen s;

	TAP_REQUIRE(text != NULL, "malloc");
	/* One header line longer than the head may be, never ended. */
	n = (size_t)sprintf(text, "HTTP/1.1 200 OK\r\nX: ");
	memset(text + n, 'a', big - n);
	s = parse(text, big, 0, false);
	TAP_CHECK_INT(s.err, -EMSGSIZE);
	s = parse(text, big, 4096, false);
	TAP_CHECK_INT(s.err, -EMSGSIZE);
	/* The same, ended: still too long. */
	memcpy(text + big, "\r\n\r\n", 4);
	s = parse(text, big + 4, 0, false);
	TAP_CHECK_INT(s.err, -EMSGSIZE);
	/* Many short lines that add up past the limit. */
	n = (size_t)sprintf(text, "HTTP/1.1 200 OK\r\n");
	while (n < big)
		n += (size_t)sprintf(text + n, "X%zu: %0200d\r\n", n, 0);
	s = parse(text, n, 0, false);
	TAP_CHECK(s.err == -EMSGSIZE || s.err == -EPROTO,
	    "a long head is refused, got %d", s.err);
	/* HTTP_HEADERS_MAX headers pass; one more is refused. */
	for (int extra = 0; extra <= 1; extra++) {
		n = (size_t)sprintf(text, "HTTP/1.1 200 OK\r\n");
		for (int i = 0; i < HTTP_HEADERS_MAX - 1 + extra; i++)
			n += (size_t)sprintf(text + n, "H%d: v\r\n", i);
		n += (size_t)sprintf(text + n, "Content-Length: 0\r\n\r\n");
		s = parse(text, n, 0, false);
		TAP_CHECK_INT(s.err, extra ? -EPROTO : 0);
	}
	/* A chunk-size line is bounded too. */
	n = (size_t)sprintf(text,
	    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1");
	memset(text + n, ';', big - n);
	s = parse(text, big, 0, false);
	TAP_CHECK_INT(s.err, -EMSGSIZE);
	free(text);
}

/* A response and its body, read in every split into two pieces. */
static void
test_split_at_every_byte(void)
{
	static const char *const texts[] = {
		"HTTP/1.1 200 OK\r\nContent-Length: 11\r\nA: b\r\n\r\nhello world",
		"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n"
		"Transfer-Encoding: chunked\r\n\r\n4;x=y\r\nwiki\r\n"
		"5\r\npedia\r\n0\r\nT: 1\r\n\r\n",
		"HTTP/1.0 404 Not Found\nContent-Length: 2\n\nno",
	};

	for (size_t t = 0; t < TAP_COUNT(texts); t++) {
		size_t len = strlen(texts[t]);
		struct seen whole = parse(texts[t], len, 0, false);

		TAP_CHECK(whole.err == 0 && whole.state == HTTP_PARSE_DONE,
		    "text %zu parses", t);
		for (size_t step = 1; step <= len; step++) {
			struct seen s = parse(texts[t], len, step, false);

			TAP_CHECK(s.err == 0 && s.state == HTTP_PARSE_DONE &&
				s.status == whole.status &&
				strcmp(s.head, whole.head) == 0 &&
				s.body_len == whole.body_len &&
				strcmp(s.body, whole.body) == 0,
			    "text %zu in pieces of %zu", t, step);
		}
		/* Split once at each byte: the head and body are the same. */
		for (size_t cut = 1; cut < len; cut++) {
			struct evbuffer *in = evbuffer_new();
			struct http_parse p;
			struct seen s = { 0 };
			int r = 1;

			http_parse_init(&p, false);
			evbuffer_add(in, texts[t], cut);
			while (p.state != HTTP_PARSE_DONE && r > 0)
				r = http_parse_step(&p, in, &cbs, &s);
			evbuffer_add(in, texts[t] + cut, len - cut);
			while (p.state != HTTP_PARSE_DONE && r >= 0 &&
			    (r = http_parse_step(&p, in, &cbs, &s)) > 0)
				;
			s.body[s.body_len] = '\0';
			TAP_CHECK(p.state == HTTP_PARSE_DONE &&
				strcmp(s.body, whole.body) == 0 &&
				s.nheads == 1,
			    "text %zu cut at %zu", t, cut);
			http_parse_clear(&p);
			evbuffer_free(in);
		}
	}
}

/*
 * RFC 9112 6.3 and 7.1: a Content-Length is digits only, a chunk size hex
 * digits only (then nothing or ";" extensions); strtoull would take a
 * sign, leading white space and "0x". Each is refused before the head
 * callback, and a length is at most HTTP_LENGTH_MAX.
 */
static void
test_lengths_are_digits_only(void)
{
	static const char *const bad_lengths[] = { "-1", "+5", "\v5", "\f5",
		"5 5", "5,5", "5, 5", "0x5", "1e3", "", "9223372036854775808",
		"18446744073709551615", "18446744073709551616" };
	static const char *const bad_chunks[] = { "-1", "+5", " 5", "\t5",
		"\v5", "0x5", "5 ", "5x", ";x", "", "8000000000000000",
		"ffffffffffffffff", "10000000000000000" };
	char text[256];
	struct seen s;

	for (size_t i = 0; i < TAP_COUNT(bad_lengths); i++) {
		snprintf(text, sizeof text,
		    "HTTP/1.1 200 OK\r\nContent-Length: %s\r\n\r\nhello",
		    bad_lengths[i]);
		s = PARSE(text);
		TAP_CHECK(s.err == -EPROTO && s.nheads == 0 && s.body_len == 0,
		    "Content-Length \"%s\": expected -EPROTO before the head, got %d (%d heads, %zu body bytes)",
		    bad_lengths[i], s.err, s.nheads, s.body_len);
	}
	for (size_t i = 0; i < TAP_COUNT(bad_chunks); i++) {
		snprintf(text, sizeof text,
		    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
		    "%s\r\nhello\r\n0\r\n\r\n",
		    bad_chunks[i]);
		s = PARSE(text);
		TAP_CHECK(s.err == -EPROTO && s.body_len == 0,
		    "chunk size \"%s\": expected -EPROTO, got %d (%zu body bytes)",
		    bad_chunks[i], s.err, s.body_len);
	}
	/* Two lengths must agree; the same one twice is one length. */
	s = PARSE("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n"
		  "content-length: 6\r\n\r\nhello!");
	TAP_CHECK(s.err == -EPROTO && s.nheads == 0, "5 then 6: got %d", s.err);
	s = PARSE("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n"
		  "Content-Length: 5\r\n\r\nhello");
	TAP_CHECK_INT(s.err, 0);
	TAP_CHECK_STR(s.body, "hello");
	/* What the grammar allows: leading zeros, white space around. */
	s = PARSE("HTTP/1.1 200 OK\r\nContent-Length:\t 0005 \t\r\n\r\nhello");
	TAP_CHECK_INT(s.err, 0);
	TAP_CHECK_STR(s.body, "hello");
	TAP_CHECK_STR(s.head, "Content-Length=0005;");
	s = PARSE("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
		  "005 ;a=b\r\nhello\r\n0\t;last\r\n\r\n");
	TAP_CHECK_INT(s.err, 0);
	TAP_CHECK_STR(s.body, "hello");
	/* The bound itself is taken. */
	s = PARSE("HTTP/1.1 200 OK\r\nContent-Length: 9223372036854775807"
		  "\r\n\r\nabc");
	TAP_CHECK(s.err == 0 && s.state == HTTP_PARSE_BODY_LENGTH &&
		s.body_len == 3,
	    "INT64_MAX: got %d in state %d", s.err, (int)s.state);
	s = PARSE("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
		  "7fffffffffffffff\r\nabc");
	TAP_CHECK(s.err == 0 && s.state == HTTP_PARSE_CHUNK_DATA &&
		s.body_len == 3,
	    "a chunk of INT64_MAX: got %d in state %d", s.err, (int)s.state);
}

static int
refuse_head(void *arg, const struct http_response *r)
{
	(void)arg, (void)r;
	return -1;
}

static void
test_callback_refusal(void)
{
	static const struct http_cbs refusing = { refuse_head, seen_body,
		NULL };
	struct evbuffer *in = evbuffer_new();
	struct http_parse p;
	const char *t = "HTTP/1.1 200 OK\r\n\r\n";
	int r;

	http_parse_init(&p, false);
	evbuffer_add(in, t, strlen(t));
	while ((r = http_parse_step(&p, in, &refusing, NULL)) > 0)
		;
	TAP_CHECK_INT(r, -ECANCELED);
	http_parse_clear(&p);
	evbuffer_free(in);
}

static const struct tap_test tests[] = {
	{ "Content-Length bodies and keep-alive", test_content_length },
	{ "chunked bodies with extensions and trailers", test_chunked },
	{ "close-delimited, 204, 304, HEAD and 1xx",
	    test_close_delimited_and_no_body },
	{ "garbage status lines are refused", test_garbage_status_lines },
	{ "bad header lines and lengths are refused", test_bad_headers },
	{ "limits on the head, header count and chunk lines", test_limits },
	{ "reads split at every byte give the same response",
	    test_split_at_every_byte },
	{ "a head callback can refuse the response", test_callback_refusal },
	{ "lengths and chunk sizes are digits only, and bounded",
	    test_lengths_are_digits_only },
};

int
main(void)
{
	return tap_run(tests, TAP_COUNT(tests));
}
