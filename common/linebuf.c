/* SPDX-License-Identifier: ISC */
/* Bounded line reading: finds newlines incrementally, never rescans. */
#include <errno.h>
#include <string.h>

#include <event2/buffer.h>

#include "linebuf.h"

void
linebuf_init(struct linebuf *lb, size_t max)
{
	memset(lb, 0, sizeof *lb);
	lb->max = max;
}

static ssize_t
linebuf_find_newline(struct linebuf *lb, struct evbuffer *in)
{
	struct evbuffer_ptr start, found;
	size_t len = evbuffer_get_length(in);

	if (lb->scanned >= len)
		return -1;
	if (evbuffer_ptr_set(in, &start, lb->scanned, EVBUFFER_PTR_SET) < 0)
		return -1;
	found = evbuffer_search(in, "\n", 1, &start);
	if (found.pos < 0) {
		lb->scanned = len;
		return -1;
	}
	return found.pos;
}

int
linebuf_peek(struct linebuf *lb, struct evbuffer *in, char **ret_line,
    size_t *ret_len)
{
	ssize_t nl = linebuf_find_newline(lb, in);
	size_t len;
	char *line;

	if (nl < 0)
		return lb->scanned > lb->max ? -EMSGSIZE : 0;
	if ((size_t)nl > lb->max + 1)
		return -EMSGSIZE;
	line = (char *)evbuffer_pullup(in, nl + 1);
	if (line == NULL)
		return -ENOMEM;
	len = nl;
	if (len > 0 && line[len - 1] == '\r')
		len--;
	if (len > lb->max)
		return -EMSGSIZE;
	line[len] = '\0'; /* overwrites the "\r" or "\n" we drop anyway */
	lb->taken = nl + 1;
	*ret_line = line;
	*ret_len = len;
	return 1;
}

void
linebuf_consume(struct linebuf *lb, struct evbuffer *in)
{
	evbuffer_drain(in, lb->taken);
	lb->taken = 0;
	lb->scanned = 0;
}
