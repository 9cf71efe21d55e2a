/* SPDX-License-Identifier: ISC */
/* The HTTP/1.1 response parser: status line, headers, body framing, limits. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>

#include "mcpd.h"

const char *
http_response_header(const struct http_response *r, const char *name)
{
	for (size_t i = 0; i < r->nheaders; i++)
		if (strcasecmp(r->headers[i].name, name) == 0)
			return r->headers[i].value;
	return NULL;
}

static void
http_parse_clear_response(struct http_response *r)
{
	for (size_t i = 0; i < r->nheaders; i++) {
		free(r->headers[i].name);
		free(r->headers[i].value);
	}
	free(r->headers);
	memset(r, 0, sizeof *r);
}

void
http_parse_init(struct http_parse *p, bool is_head_request)
{
	memset(p, 0, sizeof *p);
	p->state = HTTP_PARSE_STATUS;
	p->is_head_request = is_head_request;
}

void
http_parse_clear(struct http_parse *p)
{
	http_parse_clear_response(&p->resp);
}

/* RFC 9112 4: "HTTP/1.x" SP 3DIGIT [SP reason], nothing looser. */
static int
http_parse_status(struct http_parse *p, const char *line)
{
	int status;

	if (strncmp(line, "HTTP/1.", 7) != 0 ||
	    !isdigit((unsigned char)line[7]) || line[8] != ' ' ||
	    !isdigit((unsigned char)line[9]) ||
	    !isdigit((unsigned char)line[10]) ||
	    !isdigit((unsigned char)line[11]) ||
	    (line[12] != '\0' && line[12] != ' '))
		return -EPROTO;
	status = (line[9] - '0') * 100 + (line[10] - '0') * 10 + line[11] - '0';
	if (status < 100 || status > 599)
		return -EPROTO;
	p->resp.status = status;
	p->is_keep_alive = line[7] >= '1';
	return 0;
}

static int
http_parse_header(struct http_parse *p, char *line)
{
	char *colon = strchr(line, ':'), *v, *end;
	struct http_header *h;

	if (colon == NULL || colon == line ||
	    p->resp.nheaders >= HTTP_HEADERS_MAX)
		return -EPROTO;
	*colon = '\0';
	for (v = colon + 1; *v == ' ' || *v == '\t'; v++)
		;
	/* RFC 9110 5.5: the value has no whitespace at either end. */
	for (end = v + strlen(v);
	     end > v && (end[-1] == ' ' || end[-1] == '\t');)
		*--end = '\0';
	h = xreallocarray(p->resp.headers, p->resp.nheaders + 1, sizeof *h);
	p->resp.headers = h;
	h[p->resp.nheaders].name = xstrdup(line);
	h[p->resp.nheaders].value = xstrdup(v);
	p->resp.nheaders++;
	return 0;
}

/*
 * The digits of a length (base 10 or 16) at *sp into *ret, no more than
 * HTTP_LENGTH_MAX; *sp moves past them. -EPROTO for no digit, a sign, a
 * space or anything strtoull would take that the grammar does not.
 */
static int
http_parse_number(const char **sp, unsigned base, size_t *ret)
{
	const char *s = *sp;
	unsigned long long n = 0;
	unsigned d;

	for (;; s++) {
		if (*s >= '0' && *s <= '9')
			d = (unsigned)(*s - '0');
		else if (base == 16 && *s >= 'a' && *s <= 'f')
			d = (unsigned)(*s - 'a') + 10;
		else if (base == 16 && *s >= 'A' && *s <= 'F')
			d = (unsigned)(*s - 'A') + 10;
		else
			break;
		if (n > (HTTP_LENGTH_MAX - d) / base)
			return -EPROTO;
		n = n * base + d;
	}
	if (s == *sp)
		return -EPROTO;
	*sp = s;
	*ret = (size_t)n;
	return 0;
}

/*
 * RFC 9112 6.3: Content-Length is 1*DIGIT, and every Content-Length field
 * of the response says the same.
 */
static int
http_parse_content_length(const struct http_response *r, size_t *ret)
{
	bool is_seen = false;
	const char *s;
	size_t n;

	for (size_t i = 0; i < r->nheaders; i++) {
		if (strcasecmp(r->headers[i].name, "content-length") != 0)
			continue;
		s = r->headers[i].value;
		if (http_parse_number(&s, 10, &n) < 0 || *s != '\0' ||
		    (is_seen && n != *ret))
			return -EPROTO;
		*ret = n;
		is_seen = true;
	}
	return 0;
}

/* After the headers: how the body is framed, then the head callback. */
static int
http_parse_begin_body(struct http_parse *p, const struct http_cbs *cbs,
    void *arg)
{
	const char *te = http_response_header(&p->resp, "transfer-encoding");
	const char *cl = http_response_header(&p->resp, "content-length");
	const char *conn = http_response_header(&p->resp, "connection");
	int status = p->resp.status;

	if (status >= 100 && status < 200) {
		http_parse_clear_response(&p->resp); /* an interim answer */
		p->state = HTTP_PARSE_STATUS;
		return 0;
	}
	size_t length = 0;

	if (conn != NULL && strcasecmp(conn, "close") == 0)
		p->is_keep_alive = false;
	/* A malformed length is refused before anyone sees the head. */
	if (cl != NULL && http_parse_content_length(&p->resp, &length) < 0)
		return -EPROTO;
	if (cbs != NULL && cbs->head(arg, &p->resp) < 0)
		return -ECANCELED;
	if (p->is_head_request || status == 204 || status == 304) {
		p->state = HTTP_PARSE_DONE;
	} else if (te != NULL && strcasecmp(te, "chunked") == 0) {
		p->state = HTTP_PARSE_CHUNK_SIZE;
	} else if (cl != NULL) {
		p->remaining = length;
		p->state = p->remaining > 0 ? HTTP_PARSE_BODY_LENGTH :
					      HTTP_PARSE_DONE;
	} else {
		p->is_keep_alive = false;
		p->state = HTTP_PARSE_BODY_CLOSE;
	}
	return 0;
}

static int
http_parse_read_line(struct http_parse *p, struct evbuffer *in, char **line)
{
	size_t len;

	*line = evbuffer_readln(in, &len, EVBUFFER_EOL_CRLF);
	if (*line == NULL)
		return evbuffer_get_length(in) > HTTP_HEAD_MAX ? -EMSGSIZE : 0;
	p->head_bytes += len + 2;
	if (p->head_bytes <= HTTP_HEAD_MAX)
		return 1;
	free(*line); /* over the limit: the caller gets no line to free */
	*line = NULL;
	return -EMSGSIZE;
}

static int
http_parse_head_line(struct http_parse *p, struct evbuffer *in,
    const struct http_cbs *cbs, void *arg)
{
	char *line;
	int r;

	if ((r = http_parse_read_line(p, in, &line)) <= 0)
		return r;
	if (p->state == HTTP_PARSE_STATUS)
		r = http_parse_status(p, line);
	else if (line[0] != '\0')
		r = http_parse_header(p, line);
	else
		r = http_parse_begin_body(p, cbs, arg);
	if (r == 0 && p->state == HTTP_PARSE_STATUS && p->resp.status != 0)
		p->state = HTTP_PARSE_HEADERS;
	free(line);
	return r < 0 ? r : 1;
}

/* Hands up to max buffered body bytes to the body callback. */
static int
http_parse_deliver(struct evbuffer *in, size_t max, const struct http_cbs *cbs,
    void *arg)
{
	size_t n = evbuffer_get_length(in);
	int r = 0;

	if (n > max)
		n = max;
	if (n == 0)
		return 0;
	if (cbs != NULL)
		r = cbs->body(arg, (const char *)evbuffer_pullup(in, n), n);
	evbuffer_drain(in, n);
	return r < 0 ? -ECANCELED : (int)n;
}

/*
 * RFC 9112 7.1: chunk-size is 1*HEXDIG, then nothing or chunk extensions
 * (BWS ";" ...), which are skipped.
 */
static int
http_parse_chunk_size(const char *line, size_t *ret)
{
	const char *s = line;

	if (http_parse_number(&s, 16, ret) < 0)
		return -EPROTO;
	if (*s == '\0')
		return 0;
	while (*s == ' ' || *s == '\t')
		s++;
	return *s == ';' ? 0 : -EPROTO;
}

static int
http_parse_chunk_line(struct http_parse *p, struct evbuffer *in)
{
	char *line;
	int r;

	if ((r = http_parse_read_line(p, in, &line)) <= 0)
		return r;
	if (p->state == HTTP_PARSE_CHUNK_END) {
		r = line[0] == '\0' ? 0 : -EPROTO;
		p->state = HTTP_PARSE_CHUNK_SIZE;
	} else if (p->state == HTTP_PARSE_TRAILERS) {
		if (line[0] == '\0')
			p->state = HTTP_PARSE_DONE;
	} else if ((r = http_parse_chunk_size(line, &p->remaining)) == 0)
		p->state = p->remaining > 0 ? HTTP_PARSE_CHUNK_DATA :
					      HTTP_PARSE_TRAILERS;
	p->head_bytes = 0; /* the limit is per line here */
	free(line);
	return r < 0 ? r : 1;
}

int
http_parse_step(struct http_parse *p, struct evbuffer *in,
    const struct http_cbs *cbs, void *arg)
{
	int r;

	switch (p->state) {
	case HTTP_PARSE_STATUS:
	case HTTP_PARSE_HEADERS:
		return http_parse_head_line(p, in, cbs, arg);
	case HTTP_PARSE_BODY_LENGTH:
	case HTTP_PARSE_CHUNK_DATA:
		if ((r = http_parse_deliver(in, p->remaining, cbs, arg)) <= 0)
			return r;
		p->remaining -= r;
		if (p->remaining == 0)
			p->state = p->state == HTTP_PARSE_BODY_LENGTH ?
			    HTTP_PARSE_DONE :
			    HTTP_PARSE_CHUNK_END;
		return 1;
	case HTTP_PARSE_BODY_CLOSE:
		return http_parse_deliver(in, SIZE_MAX, cbs, arg);
	case HTTP_PARSE_CHUNK_SIZE:
	case HTTP_PARSE_CHUNK_END:
	case HTTP_PARSE_TRAILERS:
		return http_parse_chunk_line(p, in);
	default:
		return 0;
	}
}
