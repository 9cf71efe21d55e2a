/* SPDX-License-Identifier: ISC */
/* A bounded ring of log lines: the newest max_lines, each cut to a size. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "isotime.h"
#include "log.h"
#include "mcpd.h"

#define LOGRING_LINE_MAX  4096
#define LOGRING_FIRST	  16 /* slots of a ring's first line */
#define LOGRING_RESTARTED "-- mcpd restarted at "
#define LOGRING_HEADER	  "mcpd-logs 1\n"
#define LOGRING_MS_MAX	  15 /* digits of a saved time (ms: past year 30000) */
#define LOGRING_MS_TOP	  999999999999999LL

/*
 * One line and the time mcpd read it, in one allocation: a line costs
 * its slot (a pointer), 8 bytes of time and its text with a NUL.
 */
struct logring_line {
	int64_t ms;
	char text[];
};

/*
 * The slots grow as lines come (most servers log little), so a ring costs
 * what it holds, not its limit. Until it wraps, head == count <= size.
 */
struct logring {
	struct logring_line **lines;
	size_t size; /* slots allocated, <= max */
	size_t max;
	size_t head; /* next slot to write */
	size_t count;
	size_t restored; /* the oldest lines, from before mcpd restarted */
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
logring_push_at(struct logring *r, int64_t ms, const char *line, size_t len)
{
	struct logring_line *l;
	const char *nul = memchr(line, '\0', len);

	if (nul != NULL)
		len = (size_t)(nul - line);
	if (len > LOGRING_LINE_MAX)
		len = LOGRING_LINE_MAX;
	l = xmalloc(sizeof *l + len + 1);
	l->ms = ms;
	memcpy(l->text, line, len);
	l->text[len] = '\0';
	/* A line is one line (a note may quote text with a newline). */
	for (size_t i = 0; i < len; i++)
		if (l->text[i] == '\n')
			l->text[i] = ' ';
	if (r->count == r->size && r->size < r->max)
		logring_grow(r);
	free(r->lines[r->head]);
	r->lines[r->head] = l;
	r->head = (r->head + 1) % r->max;
	if (r->count < r->max)
		r->count++;
	else if (r->restored > 0)
		r->restored--; /* the oldest went, and it was an old one */
}

void
logring_push(struct logring *r, const char *line, size_t len)
{
	logring_push_at(r, isotime_now_ms(), line, len);
}

/* The i-th of the last n lines, oldest first. */
static const struct logring_line *
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
		json_t *s = json_string(logring_at(r, n, i)->text);

		/* Not UTF-8: keep what can be shown rather than nothing. */
		if (s == NULL)
			s = json_string("(line not valid UTF-8)");
		json_array_append_new(a, s);
	}
	return a;
}

json_t *
logring_times(const struct logring *r, size_t n)
{
	json_t *a = json_array();
	char at[ISOTIME_LEN];

	n = logring_clamp(r, n);
	for (size_t i = 0; i < n; i++) {
		isotime_format(at, logring_at(r, n, i)->ms);
		json_array_append_new(a, json_string(at));
	}
	return a;
}

size_t
logring_restored(const struct logring *r)
{
	return r->restored;
}

void
logring_mark_restart(struct logring *r)
{
	char at[ISOTIME_LEN], line[64];
	int64_t now = isotime_now_ms();

	isotime_format(at, now);
	snprintf(line, sizeof line, LOGRING_RESTARTED "%s --", at);
	logring_push_at(r, now, line, strlen(line));
	r->restored = r->count;
}

size_t
logring_save_max(size_t max_lines)
{
	return sizeof LOGRING_HEADER - 1 +
	    max_lines * (LOGRING_MS_MAX + 1 + LOGRING_LINE_MAX + 1);
}

void
logring_save(const struct logring *r, char **ret, size_t *ret_len)
{
	size_t len = sizeof LOGRING_HEADER - 1, n = r->count;
	char *buf, *p;

	for (size_t i = 0; i < n; i++)
		len += LOGRING_MS_MAX + 2 + strlen(logring_at(r, n, i)->text);
	p = buf = xmalloc(len + 1);
	p += snprintf(p, len + 1, "%s", LOGRING_HEADER);
	for (size_t i = 0; i < n; i++) {
		const struct logring_line *l = logring_at(r, n, i);
		long long ms = l->ms < 0 ? 0 : l->ms;

		/* What fits LOGRING_MS_MAX digits, as the reader wants. */
		p += snprintf(p, len + 1 - (size_t)(p - buf), "%lld %s\n",
		    ms > LOGRING_MS_TOP ? LOGRING_MS_TOP : ms, l->text);
	}
	*ret = buf;
	*ret_len = (size_t)(p - buf);
}

/* The time of a saved line at *p (digits, then a space), past it; -1. */
static int64_t
logring_parse_ms(const char **p, const char *end)
{
	int64_t ms = 0;
	size_t digits = 0;

	while (*p < end && **p >= '0' && **p <= '9' &&
	    digits < LOGRING_MS_MAX) {
		ms = ms * 10 + (**p - '0');
		(*p)++;
		digits++;
	}
	if (digits == 0 || *p == end || **p != ' ')
		return -1;
	(*p)++;
	return ms;
}

/* Checks buf as logring_save writes it: 0, or -EBADMSG and *cause. */
static int
logring_check(const char *buf, size_t len, char **cause)
{
	const char *p = buf + sizeof LOGRING_HEADER - 1, *end = buf + len, *nl;
	size_t line = 1;

	if (len < sizeof LOGRING_HEADER - 1 ||
	    memcmp(buf, LOGRING_HEADER, sizeof LOGRING_HEADER - 1) != 0)
		return errors_cause(cause, -EBADMSG,
		    "it does not start with \"mcpd-logs 1\"");
	while (p < end) {
		line++;
		if (logring_parse_ms(&p, end) < 0)
			return errors_cause(cause, -EBADMSG,
			    "line %zu does not start with a time in ms and a space",
			    line);
		if ((nl = memchr(p, '\n', (size_t)(end - p))) == NULL)
			return errors_cause(cause, -EBADMSG,
			    "line %zu has no end", line);
		if ((size_t)(nl - p) > LOGRING_LINE_MAX ||
		    memchr(p, '\0', (size_t)(nl - p)) != NULL)
			return errors_cause(cause, -EBADMSG,
			    "line %zu is longer than %d bytes or holds a NUL",
			    line, LOGRING_LINE_MAX);
		p = nl + 1;
	}
	return 0;
}

int
logring_load(struct logring *r, const char *buf, size_t len, char **cause)
{
	const char *p, *end = buf + len, *nl;
	size_t n = 0;
	int64_t ms;
	int e;

	/* All of it is checked first: a bad file adds nothing. */
	if ((e = logring_check(buf, len, cause)) < 0)
		return e;
	for (p = buf + sizeof LOGRING_HEADER - 1; p < end; p = nl + 1) {
		ms = logring_parse_ms(&p, end);
		nl = memchr(p, '\n', (size_t)(end - p));
		logring_push_at(r, ms, p, (size_t)(nl - p));
		n++;
	}
	return n > INT_MAX ? INT_MAX : (int)n;
}
