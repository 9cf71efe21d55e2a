/* SPDX-License-Identifier: ISC */
/* A bounded newline-delimited line reader over a libevent evbuffer. */
#ifndef MCPD_LINEBUF_H
#define MCPD_LINEBUF_H

#include <stddef.h>

struct evbuffer;

/* Scan state of one input stream; zero it with linebuf_init. */
struct linebuf {
	size_t max;	/* longest line accepted, without its newline */
	size_t scanned; /* bytes already known to hold no newline */
	size_t taken;	/* length of the line last peeked, with its newline */
};

void linebuf_init(struct linebuf *, size_t max);
/*
 * Finds the next line in `in`. Returns 1 and points *ret_line at it (made
 * contiguous inside the buffer, NUL-terminated, without "\n" or "\r\n"),
 * 0 when no complete line is buffered yet, -EMSGSIZE when more than max
 * bytes arrived without a newline. A line stays in the buffer until
 * linebuf_consume.
 */
int linebuf_peek(struct linebuf *, struct evbuffer *in, char **ret_line,
    size_t *ret_len);
/* Drops the line last returned by linebuf_peek. */
void linebuf_consume(struct linebuf *, struct evbuffer *in);

#endif
