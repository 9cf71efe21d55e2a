/* SPDX-License-Identifier: ISC */
/* Fuzzes the HTTP/1.1 response parser (daemon/net-http-parse.c) fed in splits. */
#include <errno.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>

#include "fuzz.h"
#include "mcpd.h"

/* What one parse saw: compared between a whole feed and a split one. */
struct fuzz_http_seen {
	int err;
	enum http_parse_state state;
	int status;
	size_t nheads;
	char *head; /* "name: value\n" per header, of the last head */
	size_t head_len;
	char *body;
	size_t body_len;
	size_t leftover;
};

static int
fuzz_http_head(void *arg, const struct http_response *r)
{
	struct fuzz_http_seen *seen = arg;
	FILE *f;

	/* Interim 1xx answers never reach the caller. */
	FUZZ_CHECK(r->status >= 200 && r->status <= 599);
	FUZZ_CHECK(r->nheaders <= HTTP_HEADERS_MAX);
	seen->nheads++;
	seen->status = r->status;
	free(seen->head);
	f = open_memstream(&seen->head, &seen->head_len);
	FUZZ_CHECK(f != NULL);
	for (size_t i = 0; i < r->nheaders; i++) {
		const char *name = r->headers[i].name;
		const char *value = r->headers[i].value;

		FUZZ_CHECK(name != NULL && value != NULL);
		FUZZ_CHECK(name[0] != '\0' && strchr(name, ':') == NULL);
		FUZZ_CHECK(value[0] != ' ' && value[0] != '\t');
		FUZZ_CHECK(strpbrk(name, "\n") == NULL);
		FUZZ_CHECK(strpbrk(value, "\n") == NULL);
		size_t j = 0;

		/* The first header of a name (any case) is the one found. */
		while (strcasecmp(r->headers[j].name, name) != 0)
			j++;
		FUZZ_CHECK(http_response_header(r, name) ==
		    r->headers[j].value);
		fprintf(f, "%s: %s\n", name, value);
	}
	fclose(f);
	return 0;
}

static int
fuzz_http_body(void *arg, const char *data, size_t len)
{
	struct fuzz_http_seen *seen = arg;

	FUZZ_CHECK(len > 0);
	seen->body = realloc(seen->body, seen->body_len + len);
	FUZZ_CHECK(seen->body != NULL);
	memcpy(seen->body + seen->body_len, data, len);
	seen->body_len += len;
	return 0;
}

static void fuzz_http_done(void *arg, int err, const char *why);

static void
fuzz_http_done(void *arg, int err, const char *why)
{
	(void)arg, (void)err, (void)why;
	FUZZ_CHECK(!"the parser never calls done");
}

static const struct http_cbs fuzz_http_cbs = { fuzz_http_head, fuzz_http_body,
	fuzz_http_done };

/* Parses buf in pieces as net-http.c does: steps until it needs more bytes. */
static void
fuzz_http_parse(const uint8_t *buf, size_t len, bool is_head, uint8_t seed,
    bool is_whole, struct fuzz_http_seen *seen)
{
	struct evbuffer *in = evbuffer_new();
	struct http_parse p;
	struct fuzz_split split;
	size_t off = 0;

	memset(seen, 0, sizeof *seen);
	fuzz_split_init(&split, seed);
	http_parse_init(&p, is_head);
	while (off < len && seen->err == 0 && p.state != HTTP_PARSE_DONE) {
		size_t n = is_whole ? len : fuzz_split_next(&split, len - off);
		int r;

		evbuffer_add(in, buf + off, n);
		off += n;
		while (p.state != HTTP_PARSE_DONE &&
		    (r = http_parse_step(&p, in, &fuzz_http_cbs, seen)) != 0)
			if (r < 0) {
				FUZZ_CHECK(r == -EPROTO || r == -EMSGSIZE);
				seen->err = r;
				break;
			}
	}
	seen->state = p.state;
	/* What the parser left, and the input it was never given. */
	seen->leftover = evbuffer_get_length(in) + (len - off);
	FUZZ_CHECK(seen->body_len <= len);
	FUZZ_CHECK(seen->nheads <= 1);
	/* The head is handed over once the headers have ended. */
	if (seen->err == 0)
		FUZZ_CHECK((seen->nheads == 1) ==
		    (p.state != HTTP_PARSE_STATUS &&
			p.state != HTTP_PARSE_HEADERS));
	if (p.state == HTTP_PARSE_STATUS || p.state == HTTP_PARSE_HEADERS)
		FUZZ_CHECK(p.head_bytes <= HTTP_HEAD_MAX);
	http_parse_clear(&p);
	evbuffer_free(in);
}

static void
fuzz_http_seen_free(struct fuzz_http_seen *seen)
{
	free(seen->head);
	free(seen->body);
}

/* Frames data as a chunked or a Content-Length body and parses it back. */
static void
fuzz_http_roundtrip(const uint8_t *data, size_t len, uint8_t seed,
    bool is_chunked)
{
	struct fuzz_http_seen seen;
	char *msg;
	size_t msg_len, off = 0;
	FILE *f = open_memstream(&msg, &msg_len);

	FUZZ_CHECK(f != NULL);
	if (is_chunked) {
		fputs("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
		    f);
		while (off < len) {
			/* A chunk's size comes from the data it carries. */
			size_t n = 1 + data[off] % 37;

			if (n > len - off)
				n = len - off;
			fprintf(f,
			    data[off] & 1 ? "%zx\r\n" : "%zX;ext=\"v\"\r\n", n);
			fwrite(data + off, 1, n, f);
			fputs("\r\n", f);
			off += n;
		}
		fputs("0\r\nX-Trailer: t\r\n\r\n", f);
	} else {
		fprintf(f,
		    "HTTP/1.0 201 Created\r\nContent-Length: %zu\r\n\r\n", len);
		fwrite(data, 1, len, f);
	}
	fclose(f);
	fuzz_http_parse((const uint8_t *)msg, msg_len, false, seed, false,
	    &seen);
	FUZZ_CHECK(seen.err == 0);
	FUZZ_CHECK(seen.state == HTTP_PARSE_DONE);
	FUZZ_CHECK(seen.leftover == 0);
	FUZZ_CHECK(seen.body_len == len);
	FUZZ_CHECK(len == 0 || memcmp(seen.body, data, len) == 0);
	fuzz_http_seen_free(&seen);
	free(msg);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_http_seen whole, split;
	uint8_t mode, seed;

	if (size < 2)
		return 0;
	mode = data[0];
	seed = data[1];
	data += 2;
	size -= 2;
	if (mode % 4 == 1 || mode % 4 == 2) {
		fuzz_http_roundtrip(data, size, seed, mode % 4 == 1);
		return 0;
	}
	/* Any split of the same bytes gives the same response. */
	fuzz_http_parse(data, size, mode & 4, seed, true, &whole);
	fuzz_http_parse(data, size, mode & 4, seed, false, &split);
	FUZZ_CHECK(whole.err == split.err);
	FUZZ_CHECK(whole.state == split.state);
	FUZZ_CHECK(whole.nheads == split.nheads);
	FUZZ_CHECK(whole.status == split.status);
	FUZZ_CHECK(whole.head_len == split.head_len);
	FUZZ_CHECK(whole.head_len == 0 ||
	    memcmp(whole.head, split.head, whole.head_len) == 0);
	if (whole.err == 0) {
		FUZZ_CHECK(whole.body_len == split.body_len);
		FUZZ_CHECK(whole.body_len == 0 ||
		    memcmp(whole.body, split.body, whole.body_len) == 0);
		FUZZ_CHECK(whole.leftover == split.leftover);
	}
	fuzz_http_seen_free(&whole);
	fuzz_http_seen_free(&split);
	return 0;
}
