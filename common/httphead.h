/* SPDX-License-Identifier: ISC */
/*
 * An HTTP/1.1 request's head (RFC 9112), parsed in place: the request
 * line and its header fields become NUL-terminated strings inside the
 * bytes they came in, with no allocation. The HTTP front reads with it.
 */
#ifndef MCPD_HTTPHEAD_H
#define MCPD_HTTPHEAD_H

#include <stdbool.h>
#include <stddef.h>

#define HTTPHEAD_HEADERS_MAX 100 /* header fields of one request */

enum httphead_method {
	HTTPHEAD_GET,
	HTTPHEAD_POST,
	HTTPHEAD_DELETE,
	HTTPHEAD_OTHER /* any other token: not served */
};

struct httphead_field {
	const char *name;
	const char *value; /* without the white space around it */
	size_t name_len;
};

struct httphead {
	enum httphead_method method;
	const char *path; /* the target's path: no query, no scheme://host */
	int minor;	  /* HTTP/1.<minor>, 0 or 1 (a higher one is 1) */
	size_t nfields;
	struct httphead_field fields[HTTPHEAD_HEADERS_MAX];
};

/*
 * The length of the head at the start of text (through its empty line),
 * or 0 when it has not all come. Bytes before from are known to hold no
 * end (from is what the last call was given), so a head that comes a byte
 * at a time is scanned once.
 */
size_t httphead_end(const char *text, size_t len, size_t from);
/*
 * Parses the len bytes of a whole head (httphead_end's), writing NULs into
 * them. 0, or the status that refuses it: 400 (malformed), 431 (over
 * HTTPHEAD_HEADERS_MAX fields), 505 (not HTTP/1.x).
 */
int httphead_parse(char *text, size_t len, struct httphead *);
/* The value of the first field named name (any case), or NULL. */
const char *httphead_field(const struct httphead *, const char *name);
/*
 * How the body comes: *ret_len bytes (Content-Length, or 0 with none), or
 * chunked. 0, or the status that refuses it: 400 (a bad or second
 * length, a length with chunked), 413 (a length over max), 501 (a coding
 * other than chunked).
 */
int httphead_body(const struct httphead *, size_t max, size_t *ret_len,
    bool *ret_chunked);
/* Whether the connection may carry another request after this one
 * (what Connection lists, in any of its fields). */
bool httphead_keeps_alive(const struct httphead *);
/* Whether the client waits for "100 Continue" before sending its body
 * (Expect lists 100-continue). */
bool httphead_expects_continue(const struct httphead *);
/*
 * A chunk's size line (without its CRLF): hexadecimal digits, then
 * optional extensions after ';'. -1 when malformed or over max.
 */
int httphead_chunk_size(const char *line, size_t len, size_t max, size_t *ret);

#endif
