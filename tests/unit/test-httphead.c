/* SPDX-License-Identifier: ISC */
/* Unit tests of common/httphead.c: head ends, request heads, body framing. */
#include <stdint.h>

#include "httphead.h"
#include "tap.h"

#define IN(lit) (lit), sizeof(lit) - 1
#define MAX	1024 /* the body limit of most cases */

/*
 * A head parsed from a copy of exactly its bytes (so that a read past
 * them shows under ASan); the fields point into buf.
 */
struct parsed {
	char *buf;
	int rc;
	struct httphead h;
};

static void
parsed_run(struct parsed *p, const char *text, size_t len)
{
	p->buf = malloc(len > 0 ? len : 1);
	if (p->buf == NULL)
		abort();
	memcpy(p->buf, text, len);
	memset(&p->h, 0, sizeof p->h);
	p->rc = httphead_parse(p->buf, len, &p->h);
}

static void
parsed_free(struct parsed *p)
{
	free(p->buf);
	p->buf = NULL;
}

/* The status parse gives text (a literal). */
static int
parse_rc(const char *text, size_t len)
{
	struct parsed p;
	int rc;

	parsed_run(&p, text, len);
	rc = p.rc;
	parsed_free(&p);
	return rc;
}

#define PARSE_RC(lit) parse_rc(IN(lit))

static void
test_end(void)
{
	TAP_CHECK_INT(httphead_end(IN("GET / HTTP/1.1\r\nHost: a\r\n\r\n"), 0),
	    27);
	/* What follows the head is not part of it. */
	TAP_CHECK_INT(httphead_end(IN("GET / HTTP/1.1\r\n\r\nbody\r\n\r\n"), 0),
	    18);
	TAP_CHECK_INT(httphead_end(IN("GET / HTTP/1.1\nHost: a\n\n"), 0), 24);
	TAP_CHECK_INT(httphead_end(IN("GET / HTTP/1.1\nHost: a\n\nx"), 0), 24);
	TAP_CHECK_INT(httphead_end(IN("GET / HTTP/1.1\r\nHost: a\n\r\n"), 0),
	    26);
	TAP_CHECK_INT(httphead_end(IN("GET / HTTP/1.1\nHost: a\r\n\n"), 0), 25);
	/* One leading empty line is before the request line, not its end. */
	TAP_CHECK_INT(httphead_end(IN("\r\nGET / HTTP/1.1\r\n\r\n"), 0), 20);
	TAP_CHECK_INT(httphead_end(IN("\nGET / HTTP/1.1\n\n"), 0), 17);
	/* Not all come yet. */
	TAP_CHECK_INT(httphead_end(IN(""), 0), 0);
	TAP_CHECK_INT(httphead_end(IN("GET / HTTP/1.1"), 0), 0);
	TAP_CHECK_INT(httphead_end(IN("GET / HTTP/1.1\r\n"), 0), 0);
	TAP_CHECK_INT(httphead_end(IN("GET / HTTP/1.1\r\nHost: a\r\n"), 0), 0);
	TAP_CHECK_INT(httphead_end(IN("GET / HTTP/1.1\r\nHost: a\r\n\r"), 0),
	    0);
	TAP_CHECK_INT(httphead_end(IN("GET / HTTP/1.1\r\n\r\r\n"), 0), 0);
	TAP_CHECK_INT(httphead_end(IN("GET / HTTP/1.1\r\r\r"), 0), 0);
	/* len is where the bytes stop, whatever follows in memory. */
	TAP_CHECK_INT(httphead_end("GET / HTTP/1.1\n\n", 15, 0), 0);
	TAP_CHECK_INT(httphead_end("GET / HTTP/1.1\r\n\r\n", 17, 0), 0);
}

/* Checks httphead_end on every prefix and every resume point of s. */
static void
check_end_resume(const char *s, size_t len, size_t want)
{
	size_t whole = httphead_end(s, len, 0), from = 0, r = 0;

	TAP_CHECK(whole == want, "\"%s\": expected %zu, got %zu", s, want,
	    whole);
	/* from is any point where a scan of the bytes before it found none. */
	for (size_t k = 0; k <= len; k++) {
		if (httphead_end(s, k, 0) != 0)
			break;
		r = httphead_end(s, len, k);
		TAP_CHECK(r == whole, "\"%s\" from %zu: expected %zu, got %zu",
		    s, k, whole, r);
	}
	/* A byte at a time, each call given the length of the last. */
	for (size_t n = 0; n <= len; n++) {
		size_t exp = whole != 0 && whole <= n ? whole : 0;

		r = httphead_end(s, n, from);
		TAP_CHECK(r == exp,
		    "\"%s\" %zu bytes from %zu: expected %zu, got %zu", s, n,
		    from, exp, r);
		if (r != 0)
			break;
		from = n;
	}
	/* In two pieces, split anywhere. */
	for (size_t k = 0; k <= len; k++) {
		size_t exp = whole != 0 && whole <= k ? whole : 0;

		r = httphead_end(s, k, 0);
		TAP_CHECK(r == exp, "\"%s\" first %zu: expected %zu, got %zu",
		    s, k, exp, r);
		if (r == 0) {
			r = httphead_end(s, len, k);
			TAP_CHECK(r == whole,
			    "\"%s\" then from %zu: expected %zu, got %zu", s, k,
			    whole, r);
		}
	}
}

static void
test_end_resume(void)
{
	check_end_resume(IN("POST /mcp HTTP/1.1\r\nHost: a\r\nX: \r\n\r\n{}"),
	    36);
	check_end_resume(IN("POST /mcp HTTP/1.1\nHost: a\nX:\n\nbody"), 31);
	check_end_resume(IN("GET / HTTP/1.1\r\nA: b\n\r\n\r\n"), 23);
	check_end_resume(IN("GET / HTTP/1.1\r\nA: \r\r\n\r\r\n"), 0);
	check_end_resume(IN("\n\n"), 2);
	check_end_resume(IN("\r\n\r\n"), 4);
	check_end_resume(IN("\r\n\r"), 0);
}

static void
test_parse_request(void)
{
	struct parsed p;

	parsed_run(&p,
	    IN("GET /mcp?x=1&y HTTP/1.1\r\nHost: 127.0.0.1:8\r\n"
	       "Accept:  text/event-stream \t \r\nX-Empty:\r\n"
	       "X-Spaces: \t \r\nX-Inner:a \t b\r\n\r\n"));
	TAP_REQUIRE(p.rc == 0, "expected 0, got %d", p.rc);
	TAP_CHECK_INT(p.h.method, HTTPHEAD_GET);
	TAP_CHECK_STR(p.h.path, "/mcp");
	TAP_CHECK_INT(p.h.minor, 1);
	TAP_REQUIRE(p.h.nfields == 5, "expected 5 fields, got %zu",
	    p.h.nfields);
	TAP_CHECK_STR(p.h.fields[0].name, "Host");
	TAP_CHECK_STR(p.h.fields[0].value, "127.0.0.1:8");
	TAP_CHECK_STR(p.h.fields[1].name, "Accept");
	TAP_CHECK_STR(p.h.fields[1].value, "text/event-stream");
	TAP_CHECK_STR(p.h.fields[2].name, "X-Empty");
	TAP_CHECK_STR(p.h.fields[2].value, "");
	TAP_CHECK_STR(p.h.fields[3].name, "X-Spaces");
	TAP_CHECK_STR(p.h.fields[3].value, "");
	TAP_CHECK_STR(p.h.fields[4].name, "X-Inner");
	TAP_CHECK_STR(p.h.fields[4].value, "a \t b");
	TAP_CHECK_INT(p.h.fields[0].name_len, 4);
	TAP_CHECK_INT(p.h.fields[2].name_len, 7);
	/* In place: the strings lie in the bytes given. */
	TAP_CHECK(p.h.path == p.buf + 4, "expected the path in the buffer");
	TAP_CHECK(p.h.fields[0].name == p.buf + 25,
	    "expected the first name in the buffer");
	parsed_free(&p);

	/* Bare LF line ends, no fields. */
	parsed_run(&p, IN("POST / HTTP/1.0\n\n"));
	TAP_CHECK_INT(p.rc, 0);
	TAP_CHECK_INT(p.h.method, HTTPHEAD_POST);
	TAP_CHECK_STR(p.h.path, "/");
	TAP_CHECK_INT(p.h.minor, 0);
	TAP_CHECK_INT(p.h.nfields, 0);
	parsed_free(&p);

	/* Values keep obs-text and inner tabs; names keep their case. */
	parsed_run(&p,
	    IN("GET / HTTP/1.1\r\nxT!#$%&'*+-.^_`|~: "
	       "caf\xc3\xa9\t\"q\"\r\n\r\n"));
	TAP_CHECK_INT(p.rc, 0);
	TAP_CHECK_INT(p.h.nfields, 1);
	TAP_CHECK_STR(p.h.fields[0].name, "xT!#$%&'*+-.^_`|~");
	TAP_CHECK_STR(p.h.fields[0].value, "caf\xc3\xa9\t\"q\"");
	parsed_free(&p);
}

static void
test_parse_methods(void)
{
	static const struct {
		const char *in;
		enum httphead_method method;
	} cases[] = {
		{ "GET / HTTP/1.1\r\n\r\n", HTTPHEAD_GET },
		{ "POST / HTTP/1.1\r\n\r\n", HTTPHEAD_POST },
		{ "DELETE / HTTP/1.1\r\n\r\n", HTTPHEAD_DELETE },
		{ "PUT / HTTP/1.1\r\n\r\n", HTTPHEAD_OTHER },
		{ "OPTIONS / HTTP/1.1\r\n\r\n", HTTPHEAD_OTHER },
		/* Methods are case-sensitive (RFC 9110 9.1). */
		{ "get / HTTP/1.1\r\n\r\n", HTTPHEAD_OTHER },
		{ "GETS / HTTP/1.1\r\n\r\n", HTTPHEAD_OTHER },
		{ "GE / HTTP/1.1\r\n\r\n", HTTPHEAD_OTHER },
		{ "DELET / HTTP/1.1\r\n\r\n", HTTPHEAD_OTHER },
		{ "X-M!#$%&'*+.^_`|~9 / HTTP/1.1\r\n\r\n", HTTPHEAD_OTHER },
	};

	for (size_t i = 0; i < TAP_COUNT(cases); i++) {
		struct parsed p;

		parsed_run(&p, cases[i].in, strlen(cases[i].in));
		TAP_CHECK(p.rc == 0, "\"%s\": expected 0, got %d", cases[i].in,
		    p.rc);
		TAP_CHECK(p.rc != 0 || p.h.method == cases[i].method,
		    "\"%s\": expected method %d, got %d", cases[i].in,
		    (int)cases[i].method, (int)p.h.method);
		parsed_free(&p);
	}
}

static void
test_parse_targets(void)
{
	static const struct {
		const char *in;
		const char *path;
	} cases[] = {
		{ "GET /mcp HTTP/1.1\r\n\r\n", "/mcp" },
		{ "GET /mcp? HTTP/1.1\r\n\r\n", "/mcp" },
		{ "GET /mcp?a=/b?c HTTP/1.1\r\n\r\n", "/mcp" },
		{ "GET /a/b/ HTTP/1.1\r\n\r\n", "/a/b/" },
		{ "GET //mcp HTTP/1.1\r\n\r\n", "//mcp" },
		{ "GET /?x HTTP/1.1\r\n\r\n", "/" },
		{ "GET /mcp#f HTTP/1.1\r\n\r\n", "/mcp" },
		{ "GET /m%20cp HTTP/1.1\r\n\r\n", "/m%20cp" },
		{ "POST http://127.0.0.1:8/mcp?x HTTP/1.1\r\n\r\n", "/mcp" },
		{ "POST http://127.0.0.1:8/mcp HTTP/1.1\r\n\r\n", "/mcp" },
		{ "GET http://host HTTP/1.1\r\n\r\n", "/" },
		{ "GET http://host/ HTTP/1.1\r\n\r\n", "/" },
		{ "GET HTTPS://[::1]:443/a/b?c HTTP/1.1\r\n\r\n", "/a/b" },
		{ "GET svn+ssh://h/x HTTP/1.1\r\n\r\n", "/x" },
	};

	for (size_t i = 0; i < TAP_COUNT(cases); i++) {
		struct parsed p;

		parsed_run(&p, cases[i].in, strlen(cases[i].in));
		TAP_CHECK(p.rc == 0, "\"%s\": expected 0, got %d", cases[i].in,
		    p.rc);
		TAP_CHECK(p.rc != 0 || tap_str_eq(p.h.path, cases[i].path),
		    "\"%s\": expected path \"%s\", got \"%s\"", cases[i].in,
		    cases[i].path, p.rc == 0 ? tap_str_show(p.h.path) : "");
		parsed_free(&p);
	}
}

static void
test_parse_versions(void)
{
	struct parsed p;

	parsed_run(&p, IN("GET / HTTP/1.0\r\n\r\n"));
	TAP_CHECK_INT(p.rc, 0);
	TAP_CHECK_INT(p.h.minor, 0);
	parsed_free(&p);
	parsed_run(&p, IN("GET / HTTP/1.1\r\n\r\n"));
	TAP_CHECK_INT(p.rc, 0);
	TAP_CHECK_INT(p.h.minor, 1);
	parsed_free(&p);
	/* A higher minor version is answered as 1.1 (RFC 9110 2.5). */
	parsed_run(&p, IN("GET / HTTP/1.7\r\n\r\n"));
	TAP_CHECK_INT(p.rc, 0);
	TAP_CHECK_INT(p.h.minor, 1);
	parsed_free(&p);
	parsed_run(&p, IN("GET / HTTP/1.9\r\n\r\n"));
	TAP_CHECK_INT(p.rc, 0);
	TAP_CHECK_INT(p.h.minor, 1);
	parsed_free(&p);

	TAP_CHECK_INT(PARSE_RC("GET / HTTP/2.0\r\n\r\n"), 505);
	TAP_CHECK_INT(PARSE_RC("GET / HTTP/0.9\r\n\r\n"), 505);
	TAP_CHECK_INT(PARSE_RC("GET / HTTP/3.1\r\n\r\n"), 505);
	TAP_CHECK_INT(PARSE_RC("GET / HTTP/9.0\nHost: a\n\n"), 505);

	TAP_CHECK_INT(PARSE_RC("GET / http/1.1\r\n\r\n"), 400);
	TAP_CHECK_INT(PARSE_RC("GET / Http/1.1\r\n\r\n"), 400);
	TAP_CHECK_INT(PARSE_RC("GET / HTTP/1.10\r\n\r\n"), 400);
	TAP_CHECK_INT(PARSE_RC("GET / HTTP/10.1\r\n\r\n"), 400);
	TAP_CHECK_INT(PARSE_RC("GET / HTTP/1\r\n\r\n"), 400);
	TAP_CHECK_INT(PARSE_RC("GET / HTTP/1.\r\n\r\n"), 400);
	TAP_CHECK_INT(PARSE_RC("GET / HTTP/1,1\r\n\r\n"), 400);
	TAP_CHECK_INT(PARSE_RC("GET / HTTP/x.1\r\n\r\n"), 400);
	TAP_CHECK_INT(PARSE_RC("GET / HTTP/1.x\r\n\r\n"), 400);
	TAP_CHECK_INT(PARSE_RC("GET / HTTP/1.1 \r\n\r\n"), 400);
	TAP_CHECK_INT(PARSE_RC("GET / HTTP/1.1\t\r\n\r\n"), 400);
	TAP_CHECK_INT(PARSE_RC("GET / HTTP /1.1\r\n\r\n"), 400);
}

static void
test_parse_request_line_refused(void)
{
	static const char *const cases[] = {
		"GET\r\n\r\n",
		"GET /\r\n\r\n",
		"GET/ HTTP/1.1\r\n\r\n",
		"GET  / HTTP/1.1\r\n\r\n",
		" GET / HTTP/1.1\r\n\r\n",
		" / HTTP/1.1\r\n\r\n",
		"GET /  HTTP/1.1\r\n\r\n",
		"GET\t/ HTTP/1.1\r\n\r\n",
		"G(T / HTTP/1.1\r\n\r\n",
		"G@T / HTTP/1.1\r\n\r\n",
		"G:T / HTTP/1.1\r\n\r\n",
		"G\"T / HTTP/1.1\r\n\r\n",
		"G\xc3\xa9T / HTTP/1.1\r\n\r\n",
		/* White space inside the target. */
		"GET /a b HTTP/1.1\r\n\r\n",
		"GET /a\tb HTTP/1.1\r\n\r\n",
		"GET /a\t HTTP/1.1\r\n\r\n",
		/* Neither origin-form nor absolute-form. */
		"GET mcp HTTP/1.1\r\n\r\n",
		"OPTIONS * HTTP/1.1\r\n\r\n",
		"CONNECT h:443 HTTP/1.1\r\n\r\n",
		"GET ://h/ HTTP/1.1\r\n\r\n",
		"GET ht[p://h/ HTTP/1.1\r\n\r\n",
		"GET a/b://h/ HTTP/1.1\r\n\r\n",
		"GET ?x HTTP/1.1\r\n\r\n",
		/* Bare CR, NUL or another control character in the line. */
		"GET /\r HTTP/1.1\r\n\r\n",
		"GET / HTTP/1.1\r\r\n\r\n",
		"GET /\x01 HTTP/1.1\r\n\r\n",
		"GET /\x7f HTTP/1.1\r\n\r\n",
		"GET /\x1b HTTP/1.1\r\n\r\n",
	};

	for (size_t i = 0; i < TAP_COUNT(cases); i++) {
		int rc = parse_rc(cases[i], strlen(cases[i]));

		TAP_CHECK(rc == 400, "\"%s\": expected 400, got %d", cases[i],
		    rc);
	}
	/* A NUL, which strlen would stop at. */
	TAP_CHECK_INT(PARSE_RC("GET /\0 HTTP/1.1\r\n\r\n"), 400);
	TAP_CHECK_INT(PARSE_RC("GET / HTTP/1.1\0\r\n\r\n"), 400);
}

static void
test_parse_fields_refused(void)
{
	static const char *const cases[] = {
		/* A bare CR or a control character in a value. */
		"GET / HTTP/1.1\r\nHost: a\rb\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: a\r\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: a\r \r\n\r\n",
		"GET / HTTP/1.1\r\nX: a\rYY: b\r\n\r\n",
		"GET / HTTP/1.1\r\nX: a\x01\r\n\r\n",
		"GET / HTTP/1.1\r\nX: a\x1f\r\n\r\n",
		"GET / HTTP/1.1\r\nX: \x7f\r\n\r\n",
		"GET / HTTP/1.1\r\nX: a\x0b\r\n\r\n",
		"GET / HTTP/1.1\r\nX: a\x0c\r\n\r\n",
		/* White space before the colon, or in the name. */
		"GET / HTTP/1.1\r\nHost : a\r\n\r\n",
		"GET / HTTP/1.1\r\nHost\t: a\r\n\r\n",
		"GET / HTTP/1.1\r\nX Y: a\r\n\r\n",
		" Host: a\r\n\r\n",
		/* A continuation line (obs-fold). */
		"GET / HTTP/1.1\r\nX: a\r\n b\r\n\r\n",
		"GET / HTTP/1.1\r\nX: a\r\n\tb\r\n\r\n",
		"GET / HTTP/1.1\r\n Host: a\r\n\r\n",
		"GET / HTTP/1.1\r\nX: a\n b:c\n\n",
		/* No name, no colon, a name that is no token. */
		"GET / HTTP/1.1\r\n: a\r\n\r\n",
		"GET / HTTP/1.1\r\nHost a\r\n\r\n",
		"GET / HTTP/1.1\r\nHost\r\n\r\n",
		"GET / HTTP/1.1\r\nX(y): a\r\n\r\n",
		"GET / HTTP/1.1\r\nX/y: a\r\n\r\n",
		"GET / HTTP/1.1\r\nX\xc3\xa9: a\r\n\r\n",
		"GET / HTTP/1.1\r\nX\x01: a\r\n\r\n",
		/* Not a whole head: no empty line, bytes after it, no LF. */
		"GET / HTTP/1.1\r\nHost: a\r\n",
		"GET / HTTP/1.1\r\n\r\nx\n",
		"GET / HTTP/1.1\r\n\r\n\r\n",
		"GET / HTTP/1.1\n\n\n",
		"GET / HTTP/1.1\r\n\r",
		"GET / HTTP/1.1\r\n",
		"\n",
		"",
	};

	for (size_t i = 0; i < TAP_COUNT(cases); i++) {
		int rc = parse_rc(cases[i], strlen(cases[i]));

		TAP_CHECK(rc == 400, "\"%s\": expected 400, got %d", cases[i],
		    rc);
	}
	TAP_CHECK_INT(PARSE_RC("GET / HTTP/1.1\r\nX: a\0b\r\n\r\n"), 400);
	TAP_CHECK_INT(PARSE_RC("GET / HTTP/1.1\r\nX: \0\r\n\r\n"), 400);
	TAP_CHECK_INT(PARSE_RC("GET / HTTP/1.1\r\nX\0: a\r\n\r\n"), 400);
	TAP_CHECK_INT(PARSE_RC("GET / HTTP/1.1\r\n\0\r\n\r\n"), 400);
	/* The request line is judged first. */
	TAP_CHECK_INT(PARSE_RC("GET / HTTP/2.0\r\nX : a\r\n\r\n"), 505);
}

static void
test_parse_leading_empty_lines(void)
{
	struct parsed p;

	parsed_run(&p, IN("\r\nGET /x HTTP/1.1\r\nHost: a\r\n\r\n"));
	TAP_CHECK_INT(p.rc, 0);
	TAP_CHECK_STR(p.rc == 0 ? p.h.path : NULL, "/x");
	TAP_CHECK_INT(p.h.nfields, 1);
	parsed_free(&p);
	parsed_run(&p, IN("\nPOST /y HTTP/1.0\n\n"));
	TAP_CHECK_INT(p.rc, 0);
	TAP_CHECK_STR(p.rc == 0 ? p.h.path : NULL, "/y");
	TAP_CHECK_INT(p.h.method, HTTPHEAD_POST);
	parsed_free(&p);
	/* parse skips more than one (httphead_end stops at the second). */
	parsed_run(&p, IN("\r\n\n\r\nDELETE /z HTTP/1.1\r\n\r\n"));
	TAP_CHECK_INT(p.rc, 0);
	TAP_CHECK_STR(p.rc == 0 ? p.h.path : NULL, "/z");
	TAP_CHECK_INT(p.h.method, HTTPHEAD_DELETE);
	parsed_free(&p);
	/* A line of white space is not an empty line. */
	TAP_CHECK_INT(PARSE_RC(" \r\nGET / HTTP/1.1\r\n\r\n"), 400);
	TAP_CHECK_INT(PARSE_RC("\r\r\nGET / HTTP/1.1\r\n\r\n"), 400);
}

/*
 * Empty lines and nothing else: httphead_end's answer for "\r\n\r\n" is 4
 * and for "\n\n" is 2. The parser must not read past len looking for more
 * (ASan sees it: the copy is exactly len bytes).
 */
static void
test_parse_only_empty_lines(void)
{
	TAP_CHECK_INT(PARSE_RC("\r\n\r\n"), 400);
	TAP_CHECK_INT(PARSE_RC("\n\n"), 400);
	TAP_CHECK_INT(PARSE_RC("\r\n\n"), 400);
	TAP_CHECK_INT(PARSE_RC("\n\r\n"), 400);
}

/* A head of n fields "X-<i>: <i>", parsed into p. */
static void
parse_fields(struct parsed *p, size_t n)
{
	char *text;
	size_t len;
	FILE *f = open_memstream(&text, &len);

	if (f == NULL)
		abort();
	fputs("POST /mcp HTTP/1.1\r\n", f);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "X-%zu: %zu\r\n", i, i);
	fputs("\r\n", f);
	fclose(f);
	parsed_run(p, text, len);
	free(text);
}

static void
test_parse_field_count(void)
{
	struct parsed p;

	parse_fields(&p, HTTPHEAD_HEADERS_MAX);
	TAP_CHECK_INT(p.rc, 0);
	TAP_CHECK_INT(p.h.nfields, HTTPHEAD_HEADERS_MAX);
	TAP_CHECK_STR(p.h.fields[0].name, "X-0");
	TAP_CHECK_STR(p.h.fields[HTTPHEAD_HEADERS_MAX - 1].name, "X-99");
	TAP_CHECK_STR(p.h.fields[HTTPHEAD_HEADERS_MAX - 1].value, "99");
	TAP_CHECK_STR(httphead_field(&p.h, "x-99"), "99");
	parsed_free(&p);
	parse_fields(&p, HTTPHEAD_HEADERS_MAX + 1);
	TAP_CHECK_INT(p.rc, 431);
	parsed_free(&p);
	parse_fields(&p, 5 * HTTPHEAD_HEADERS_MAX);
	TAP_CHECK_INT(p.rc, 431);
	parsed_free(&p);
	parse_fields(&p, 0);
	TAP_CHECK_INT(p.rc, 0);
	TAP_CHECK_INT(p.h.nfields, 0);
	parsed_free(&p);
}

static void
test_field_lookup(void)
{
	struct parsed p;

	parsed_run(&p,
	    IN("GET / HTTP/1.1\r\nContent-Type: a\r\ncontent-type: b\r\n"
	       "X-Empty:\r\nHost: h\r\n\r\n"));
	TAP_REQUIRE(p.rc == 0, "expected 0, got %d", p.rc);
	TAP_CHECK_STR(httphead_field(&p.h, "Content-Type"), "a");
	TAP_CHECK_STR(httphead_field(&p.h, "content-type"), "a");
	TAP_CHECK_STR(httphead_field(&p.h, "CONTENT-TYPE"), "a");
	TAP_CHECK_STR(httphead_field(&p.h, "hOsT"), "h");
	TAP_CHECK_STR(httphead_field(&p.h, "x-empty"), "");
	TAP_CHECK_STR(httphead_field(&p.h, "Hos"), NULL);
	TAP_CHECK_STR(httphead_field(&p.h, "Host2"), NULL);
	TAP_CHECK_STR(httphead_field(&p.h, "Accept"), NULL);
	TAP_CHECK_STR(httphead_field(&p.h, ""), NULL);
	parsed_free(&p);
	/* The first field wins, even when its value is empty. */
	parsed_run(&p, IN("GET / HTTP/1.1\nA:\nA: x\n\n"));
	TAP_CHECK_INT(p.rc, 0);
	TAP_CHECK_STR(httphead_field(&p.h, "a"), "");
	parsed_free(&p);
}

/* What httphead_body says of a head: its status, length and chunked. */
struct body_case {
	const char *fields; /* "Name: value\r\n" lines */
	int minor;
	size_t max;
	int rc;
	size_t len;
	bool is_chunked;
};

static void
check_body(const struct body_case *c)
{
	struct parsed p;
	char text[2048];
	size_t len = 12345;
	bool is_chunked = !c->is_chunked;
	int n, rc;

	n = snprintf(text, sizeof text, "POST /mcp HTTP/1.%d\r\n%s\r\n",
	    c->minor, c->fields);
	if (n < 0 || (size_t)n >= sizeof text)
		abort();
	parsed_run(&p, text, (size_t)n);
	TAP_CHECK(p.rc == 0, "\"%s\": parse: expected 0, got %d", c->fields,
	    p.rc);
	if (p.rc != 0) {
		parsed_free(&p);
		return;
	}
	rc = httphead_body(&p.h, c->max, &len, &is_chunked);
	TAP_CHECK(rc == c->rc, "\"%s\" (max %zu): expected %d, got %d",
	    c->fields, c->max, c->rc, rc);
	if (rc == 0 && c->rc == 0) {
		TAP_CHECK(len == c->len, "\"%s\": expected length %zu, got %zu",
		    c->fields, c->len, len);
		TAP_CHECK(is_chunked == c->is_chunked,
		    "\"%s\": expected chunked %d, got %d", c->fields,
		    c->is_chunked, is_chunked);
	}
	parsed_free(&p);
}

#define BODY_OK(fields, minor, max, len, chunked)             \
	{                                                     \
		(fields), (minor), (max), 0, (len), (chunked) \
	}
#define BODY_NO(fields, minor, max, rc)                  \
	{                                                \
		(fields), (minor), (max), (rc), 0, false \
	}

static void
test_body(void)
{
	static const struct body_case cases[] = {
		BODY_OK("", 1, MAX, 0, false),
		BODY_OK("Host: a\r\n", 0, MAX, 0, false),
		BODY_OK("Content-Length: 42\r\n", 1, MAX, 42, false),
		BODY_OK("content-length:42\r\n", 0, MAX, 42, false),
		BODY_OK("CONTENT-LENGTH: \t 7 \t\r\n", 1, MAX, 7, false),
		BODY_OK("Content-Length: 0\r\n", 1, MAX, 0, false),
		BODY_OK("Content-Length: 0\r\n", 1, 0, 0, false),
		BODY_OK("Content-Length: 007\r\n", 1, MAX, 7, false),
		BODY_OK("Content-Length: 1024\r\n", 1, MAX, 1024, false),
		BODY_OK("Content-Length: "
			"0000000000000000000000000000000000000001\r\n",
		    1, MAX, 1, false),
		BODY_NO("Content-Length: 1025\r\n", 1, MAX, 413),
		BODY_NO("Content-Length: 1\r\n", 1, 0, 413),
		BODY_NO("Content-Length: 10000\r\n", 1, MAX, 413),
		BODY_NO(
		    "Content-Length: 99999999999999999999999999999999999\r\n",
		    1, MAX, 413),
		BODY_NO("Content-Length: 18446744073709551616\r\n", 1, MAX,
		    413),
		BODY_NO("Content-Length: 18446744073709551617\r\n", 1,
		    SIZE_MAX / 2, 413),
		BODY_NO("Content-Length: abc\r\n", 1, MAX, 400),
		BODY_NO("Content-Length:\r\n", 1, MAX, 400),
		BODY_NO("Content-Length: \t \r\n", 1, MAX, 400),
		BODY_NO("Content-Length: +5\r\n", 1, MAX, 400),
		BODY_NO("Content-Length: -1\r\n", 1, MAX, 400),
		BODY_NO("Content-Length: 5 5\r\n", 1, MAX, 400),
		BODY_NO("Content-Length: 5,5\r\n", 1, MAX, 400),
		BODY_NO("Content-Length: 0x10\r\n", 1, MAX, 400),
		BODY_NO("Content-Length: 1e3\r\n", 1, MAX, 400),
		/* Two lengths, equal or not. */
		BODY_NO("Content-Length: 5\r\nContent-Length: 5\r\n", 1, MAX,
		    400),
		BODY_NO("Content-Length: 5\r\ncontent-length: 6\r\n", 1, MAX,
		    400),
		BODY_OK("Transfer-Encoding: chunked\r\n", 1, MAX, 0, true),
		BODY_OK("transfer-encoding: CHUNKED\r\n", 1, MAX, 0, true),
		BODY_OK("TRANSFER-ENCODING:Chunked \r\n", 1, 0, 0, true),
		BODY_NO("Transfer-Encoding: gzip\r\n", 1, MAX, 501),
		BODY_NO("Transfer-Encoding: gzip, chunked\r\n", 1, MAX, 501),
		BODY_NO("Transfer-Encoding: chunked, chunked\r\n", 1, MAX, 501),
		BODY_NO("Transfer-Encoding: chunkedx\r\n", 1, MAX, 501),
		BODY_NO("Transfer-Encoding:\r\n", 1, MAX, 501),
		BODY_NO("Transfer-Encoding: chunked\r\n"
			"Transfer-Encoding: chunked\r\n",
		    1, MAX, 501),
		/* A length with chunked, either order: a smuggling attempt. */
		BODY_NO("Transfer-Encoding: chunked\r\nContent-Length: 5\r\n",
		    1, MAX, 400),
		BODY_NO("Content-Length: 5\r\nTransfer-Encoding: chunked\r\n",
		    1, MAX, 400),
		BODY_NO("Content-Length: 5\r\nTransfer-Encoding: gzip\r\n", 1,
		    MAX, 400),
		/* HTTP/1.0 has no Transfer-Encoding. */
		BODY_NO("Transfer-Encoding: chunked\r\n", 0, MAX, 400),
	};

	for (size_t i = 0; i < TAP_COUNT(cases); i++)
		check_body(&cases[i]);
}

/* Values that parse never gives (it trims them), built by hand. */
static void
test_body_untrimmed(void)
{
	static const char *const values[] = { " 5", "5 ", "\t5", "" };
	struct httphead h;
	size_t len;
	bool is_chunked;

	for (size_t i = 0; i < TAP_COUNT(values); i++) {
		memset(&h, 0, sizeof h);
		h.minor = 1;
		h.path = "/";
		h.nfields = 1;
		h.fields[0].name = "Content-Length";
		h.fields[0].name_len = strlen("Content-Length");
		h.fields[0].value = values[i];
		TAP_CHECK(httphead_body(&h, MAX, &len, &is_chunked) == 400,
		    "\"%s\": expected 400", values[i]);
	}
}

/*
 * A length near SIZE_MAX with max SIZE_MAX ("no limit") must not wrap:
 * 18446744073709551616 is 2^64, which wraps to 0 in a 64-bit size_t.
 */
static void
test_body_no_wrap(void)
{
	static const struct body_case cases[] = {
		BODY_OK("Content-Length: 18446744073709551615\r\n", 1, SIZE_MAX,
		    SIZE_MAX, false),
		BODY_OK("Content-Length: 18446744073709551614\r\n", 1,
		    SIZE_MAX - 1, SIZE_MAX - 1, false),
		BODY_NO("Content-Length: 18446744073709551616\r\n", 1, SIZE_MAX,
		    413),
		BODY_NO("Content-Length: 18446744073709551620\r\n", 1, SIZE_MAX,
		    413),
		BODY_NO("Content-Length: 18446744073709551619\r\n", 1,
		    SIZE_MAX - 1, 413),
	};

	if (SIZE_MAX != UINT64_MAX)
		return;
	for (size_t i = 0; i < TAP_COUNT(cases); i++)
		check_body(&cases[i]);
}

/* What pred says of a head "METHOD / HTTP/1.<minor>" with these fields. */
static void
check_pred(bool (*pred)(const struct httphead *), const char *what, int minor,
    const char *fields, bool want)
{
	struct parsed p;
	char text[512];
	int n;

	n = snprintf(text, sizeof text, "POST / HTTP/1.%d\r\n%s\r\n", minor,
	    fields);
	if (n < 0 || (size_t)n >= sizeof text)
		abort();
	parsed_run(&p, text, (size_t)n);
	TAP_CHECK(p.rc == 0, "\"%s\": parse: expected 0, got %d", fields, p.rc);
	if (p.rc == 0)
		TAP_CHECK(pred(&p.h) == want, "HTTP/1.%d \"%s\": expected %s%s",
		    minor, fields, want ? "" : "not ", what);
	parsed_free(&p);
}

/* Whether a head of these fields keeps its connection alive. */
static void
check_keeps_alive(int minor, const char *fields, bool want)
{
	check_pred(httphead_keeps_alive, "kept alive", minor, fields, want);
}

static void
test_keeps_alive(void)
{
	check_keeps_alive(1, "", true);
	check_keeps_alive(1, "Host: a\r\n", true);
	check_keeps_alive(1, "Connection: close\r\n", false);
	check_keeps_alive(1, "connection: CLOSE\r\n", false);
	check_keeps_alive(1, "Connection: Upgrade, close\r\n", false);
	check_keeps_alive(1, "Connection: close ,Upgrade\r\n", false);
	check_keeps_alive(1, "Connection: ,, close ,,\r\n", false);
	check_keeps_alive(1, "Connection: keep-alive\r\n", true);
	check_keeps_alive(1, "Connection: Upgrade\r\n", true);
	check_keeps_alive(1, "Connection: closed\r\n", true);
	check_keeps_alive(1, "Connection: clos\r\n", true);
	check_keeps_alive(1, "Connection: \"close\"\r\n", true);
	check_keeps_alive(1, "Connection:\r\n", true);
	check_keeps_alive(1, "X-Connection: close\r\n", true);
	/* The list of Connection may come in several fields. */
	check_keeps_alive(1, "Connection: Upgrade\r\nConnection: close\r\n",
	    false);
	check_keeps_alive(1, "Connection: a\r\nX: close\r\nConnection: b\r\n",
	    true);
	check_keeps_alive(0, "", false);
	check_keeps_alive(0, "Host: a\r\n", false);
	check_keeps_alive(0, "Connection: Keep-Alive, Upgrade\r\n", true);
	check_keeps_alive(0, "Connection: keep-alive\r\n", true);
	check_keeps_alive(0, "Connection: Upgrade,\tKEEP-ALIVE\r\n", true);
	check_keeps_alive(0, "Connection: keep-alive-x\r\n", false);
	check_keeps_alive(0, "Connection: Upgrade\r\n", false);
	check_keeps_alive(0, "Connection: close\r\n", false);
	check_keeps_alive(0, "Keep-Alive: timeout=5\r\n", false);
	check_keeps_alive(0,
	    "Connection: Upgrade\r\nconnection: Keep-Alive\r\n", true);
}

/* Whether a head of these fields waits for "100 Continue". */
static void
check_expects_continue(int minor, const char *fields, bool want)
{
	check_pred(httphead_expects_continue, "waiting for 100 Continue", minor,
	    fields, want);
}

static void
test_expects_continue(void)
{
	check_expects_continue(1, "Expect: 100-continue\r\n", true);
	check_expects_continue(1, "expect:100-Continue \r\n", true);
	check_expects_continue(0, "Expect: 100-continue\r\n", false);
	check_expects_continue(1, "", false);
	check_expects_continue(1, "Expect:\r\n", false);
	check_expects_continue(1, "Expect: 200-ok\r\n", false);
	check_expects_continue(1, "Expect: 100-continued\r\n", false);
	check_expects_continue(1, "Expect: 100\r\n", false);
	/* A list, as one field or several. */
	check_expects_continue(1, "Expect: x\r\nExpect: 100-continue\r\n",
	    true);
	check_expects_continue(1, "Expect: x, 100-CONTINUE\r\n", true);
	check_expects_continue(1, "Expect: x\r\nExpect: y\r\n", false);
}

/* A chunk size line and what comes of it. */
struct chunk_case {
	const char *line;
	size_t max;
	int rc;
	size_t size;
};

static void
test_chunk_size(void)
{
	static const struct chunk_case cases[] = {
		{ "0", MAX, 0, 0 },
		{ "000", MAX, 0, 0 },
		{ "1a", MAX, 0, 26 },
		{ "1A", MAX, 0, 26 },
		{ "1A;ext=1", MAX, 0, 26 },
		{ "1a;a=\"b;c\";d", MAX, 0, 26 },
		{ "10 ", MAX, 0, 16 },
		{ "10\t", MAX, 0, 16 },
		{ "10 ;x", MAX, 0, 16 },
		{ "aBcD", 0xabcd, 0, 0xabcd },
		{ "eF", MAX, 0, 0xef },
		{ "9", MAX, 0, 9 },
		{ "400", MAX, 0, 1024 },
		{ "0000000000000000000000000000000000000f", MAX, 0, 15 },
		{ "", MAX, -1, 0 },
		{ "g", MAX, -1, 0 },
		{ "1g", MAX, -1, 0 },
		{ ";ext", MAX, -1, 0 },
		{ " 1", MAX, -1, 0 },
		{ "-1", MAX, -1, 0 },
		{ "+1", MAX, -1, 0 },
		{ "0x10", MAX, -1, 0 },
		{ "1,2", MAX, -1, 0 },
		{ "1\r", MAX, -1, 0 },
		{ "401", MAX, -1, 0 },
		{ "1", 0, -1, 0 },
		{ "10", 15, -1, 0 },
		{ "ffffffffffffffffffffffffffffffffffffffff", MAX, -1, 0 },
		{ "ffffffffffffffffffffffffffffffffffffffff", SIZE_MAX / 2, -1,
		    0 },
		{ "10000000000000000", MAX, -1, 0 },
	};

	for (size_t i = 0; i < TAP_COUNT(cases); i++) {
		const struct chunk_case *c = &cases[i];
		size_t size = 12345;
		int rc = httphead_chunk_size(c->line, strlen(c->line), c->max,
		    &size);

		TAP_CHECK(rc == c->rc, "\"%s\" (max %zu): expected %d, got %d",
		    c->line, c->max, c->rc, rc);
		TAP_CHECK(size == (rc == 0 ? c->size : 12345),
		    "\"%s\": expected size %zu, got %zu", c->line,
		    rc == 0 ? c->size : 12345, size);
	}
}

static void
test_chunk_size_len(void)
{
	size_t size = 0;

	/* Only len bytes are read: no NUL is needed. */
	TAP_CHECK_INT(httphead_chunk_size("1a", 1, MAX, &size), 0);
	TAP_CHECK_INT(size, 1);
	TAP_CHECK_INT(httphead_chunk_size("1a\r\n", 2, MAX, &size), 0);
	TAP_CHECK_INT(size, 26);
	TAP_CHECK_INT(httphead_chunk_size("1a", 0, MAX, &size), -1);
	TAP_CHECK_INT(httphead_chunk_size("1\0", 2, MAX, &size), -1);
}

/*
 * Hexadecimal digits near SIZE_MAX with max SIZE_MAX must not wrap:
 * 10000000000000000 is 2^64, which wraps to 0, the last chunk's size.
 */
static void
test_chunk_size_no_wrap(void)
{
	static const char *const lines[] = { "10000000000000000",
		"1000000000000000f", "1ffffffffffffffff" };
	size_t size = 12345;

	if (SIZE_MAX != UINT64_MAX)
		return;
	TAP_CHECK_INT(httphead_chunk_size(IN("ffffffffffffffff"), SIZE_MAX,
			  &size),
	    0);
	TAP_CHECK(size == SIZE_MAX, "expected SIZE_MAX, got %zu", size);
	TAP_CHECK_INT(httphead_chunk_size(IN("fffffffffffffffe"), SIZE_MAX - 1,
			  &size),
	    0);
	TAP_CHECK(size == SIZE_MAX - 1, "expected SIZE_MAX - 1, got %zu", size);
	for (size_t i = 0; i < TAP_COUNT(lines); i++) {
		int rc = httphead_chunk_size(lines[i], strlen(lines[i]),
		    SIZE_MAX, &size);

		TAP_CHECK(rc == -1, "\"%s\": expected -1, got %d (size %zu)",
		    lines[i], rc, size);
	}
}

static const struct tap_test tests[] = {
	{ "the end of a head: CRLF, bare LF, not yet", test_end },
	{ "resuming from where the last call stopped finds the same end",
	    test_end_resume },
	{ "a request: method, path, minor, fields without white space",
	    test_parse_request },
	{ "GET, POST, DELETE, and any other token", test_parse_methods },
	{ "origin-form and absolute-form targets give the path",
	    test_parse_targets },
	{ "HTTP/1.x only, in capitals; 505 for another major",
	    test_parse_versions },
	{ "a malformed request line is 400", test_parse_request_line_refused },
	{ "a malformed field line is 400", test_parse_fields_refused },
	{ "empty lines before the request line are ignored",
	    test_parse_leading_empty_lines },
	{ "a head of empty lines only is 400, read within its length",
	    test_parse_only_empty_lines },
	{ "HTTPHEAD_HEADERS_MAX fields, and 431 past it",
	    test_parse_field_count },
	{ "a field is found in any case, the first one", test_field_lookup },
	{ "body framing: none, Content-Length, chunked, refusals", test_body },
	{ "a Content-Length with white space is 400", test_body_untrimmed },
	{ "a Content-Length near SIZE_MAX does not wrap", test_body_no_wrap },
	{ "keep-alive: 1.1 by default, 1.0 when asked", test_keeps_alive },
	{ "Expect: 100-continue in HTTP/1.1 only", test_expects_continue },
	{ "chunk sizes: hex, extensions, limits", test_chunk_size },
	{ "a chunk size line is read within its length", test_chunk_size_len },
	{ "a chunk size near SIZE_MAX does not wrap", test_chunk_size_no_wrap },
};

int
main(void)
{
	return tap_run(tests, TAP_COUNT(tests));
}
