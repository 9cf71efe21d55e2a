/* SPDX-License-Identifier: ISC */
/* Bounded line reading: finds newlines incrementally, never rescans. */
#include <errno.h>
#include <stdbool.h>
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

/* More than max bytes without a newline; byte max+1 may be a "\r\n"'s "\r". */
static bool
linebuf_overlong(const struct linebuf *lb, struct evbuffer *in)
{
	struct evbuffer_ptr at;
	char c;

	if (lb->scanned != lb->max + 1)
		return lb->scanned > lb->max;
	if (evbuffer_ptr_set(in, &at, lb->max, EVBUFFER_PTR_SET) < 0 ||
	    evbuffer_copyout_from(in, &at, &c, 1) != 1)
		return true;
	return c != '\r';
}

/* The line peeked before: its "\n", or the "\r" of its "\r\n", is the NUL. */
static int
linebuf_peek_again(struct linebuf *lb, struct evbuffer *in, char **ret_line,
    size_t *ret_len)
{
	char *line = (char *)evbuffer_pullup(in, lb->taken);
	size_t len = lb->taken - 1;

	if (line == NULL)
		return -ENOMEM;
	if (len > 0 && line[len] == '\n')
		len--;
	*ret_line = line;
	*ret_len = len;
	return 1;
}

int
linebuf_peek(struct linebuf *lb, struct evbuffer *in, char **ret_line,
    size_t *ret_len)
{
	ssize_t nl;
	size_t len;
	char *line;

	if (lb->taken > 0)
		return linebuf_peek_again(lb, in, ret_line, ret_len);
	nl = linebuf_find_newline(lb, in);
	if (nl < 0)
		return linebuf_overlong(lb, in) ? -EMSGSIZE : 0;
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
