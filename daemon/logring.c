/* SPDX-License-Identifier: ISC */
/* A bounded ring of log lines: the newest max_lines, each cut to a size. */
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "mcpd.h"

#define LOGRING_LINE_MAX 4096
#define LOGRING_FIRST	 16 /* slots of a ring's first line */

/*
 * The slots grow as lines come (most servers log little), so a ring costs
 * what it holds, not its limit. Until it wraps, head == count <= size.
 */
struct logring {
	char **lines;
	size_t size; /* slots allocated, <= max */
	size_t max;
	size_t head; /* next slot to write */
	size_t count;
};

struct logring *
logring_new(size_t max_lines)
{
	struct logring *r = xcalloc(1, sizeof *r);

	r->max = max_lines > 0 ? max_lines : 1;
	return r;
}

/* Room for one more line before the ring wraps. */
static void
logring_grow(struct logring *r)
{
	size_t size = r->size == 0 ? LOGRING_FIRST : r->size * 2;

	if (size > r->max)
		size = r->max;
	r->lines = xreallocarray(r->lines, size, sizeof *r->lines);
	memset(r->lines + r->size, 0, (size - r->size) * sizeof *r->lines);
	r->size = size;
}

void
logring_free(struct logring *r)
{
	if (r == NULL)
		return;
	for (size_t i = 0; i < r->size; i++)
		free(r->lines[i]);
	free(r->lines);
	free(r);
}

void
logring_push(struct logring *r, const char *line, size_t len)
{
	char *copy;

	if (len > LOGRING_LINE_MAX)
		len = LOGRING_LINE_MAX;
	copy = xstrndup(line, len);
	if (r->count == r->size && r->size < r->max)
		logring_grow(r);
	free(r->lines[r->head]);
	r->lines[r->head] = copy;
	r->head = (r->head + 1) % r->max;
	if (r->count < r->max)
		r->count++;
}

/* The i-th of the last n lines, oldest first. */
static const char *
logring_at(const struct logring *r, size_t n, size_t i)
{
	return r->lines[(r->head + r->size - n + i) % r->size];
}

static size_t
logring_clamp(const struct logring *r, size_t n)
{
	return n == 0 || n > r->count ? r->count : n;
}

json_t *
logring_tail(const struct logring *r, size_t n)
{
	json_t *a = json_array();

	n = logring_clamp(r, n);
	for (size_t i = 0; i < n; i++) {
		const char *line = logring_at(r, n, i);
		json_t *s = json_string(line);

		/* Not UTF-8: keep what can be shown rather than nothing. */
		if (s == NULL)
			s = json_string("(line not valid UTF-8)");
		json_array_append_new(a, s);
	}
	return a;
}
