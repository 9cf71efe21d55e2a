/* SPDX-License-Identifier: ISC */
/* Server-Sent Events parsing: lines, fields and dispatch, in any split. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "sse.h"

#define SSE_BOM_LEN  3
#define SSE_BUF_MIN  64
#define SSE_BUF_KEEP (64 * 1024) /* a larger data buffer goes after use */

static const char sse_bom[SSE_BOM_LEN] = { '\xEF', '\xBB', '\xBF' };

static int
sse_fail(struct sse_parser *p, int err)
{
	p->error = err;
	return err;
}

/* Appends n bytes, keeping a NUL after them; the buffer never exceeds max. */
static int
sse_buf_append(struct sse_buf *b, const char *s, size_t n, size_t max)
{
	size_t size;
	char *bytes;

	if (n > max - b->len)
		return -EMSGSIZE;
	if (b->len + n + 1 > b->size) {
		size = b->size > SSE_BUF_MIN / 2 ? b->size * 2 : SSE_BUF_MIN;
		if (size < b->len + n + 1)
			size = b->len + n + 1;
		if (size > max + 1)
			size = max + 1;
		if ((bytes = realloc(b->bytes, size)) == NULL)
			return -ENOMEM;
		b->bytes = bytes;
		b->size = size;
	}
	memcpy(b->bytes + b->len, s, n);
	b->len += n;
	b->bytes[b->len] = '\0';
	return 0;
}

static void
sse_buf_clear(struct sse_buf *b)
{
	b->len = 0;
	if (b->bytes != NULL)
		b->bytes[0] = '\0';
}

static void
sse_buf_free(struct sse_buf *b)
{
	free(b->bytes);
	memset(b, 0, sizeof *b);
}

static void
sse_buf_swap(struct sse_buf *a, struct sse_buf *b)
{
	struct sse_buf t = *a;

	*a = *b;
	*b = t;
}

void
sse_parser_init(struct sse_parser *p, size_t max)
{
	memset(p, 0, sizeof *p);
	p->max = max;
	p->event_retry_ms = -1;
	p->retry_ms = -1;
}

static enum sse_field
sse_field_lookup(const char *name, size_t len)
{
	static const struct {
		const char *name;
		enum sse_field field;
	} fields[] = {
		{ "data", SSE_FIELD_DATA },
		{ "event", SSE_FIELD_EVENT },
		{ "id", SSE_FIELD_ID },
		{ "retry", SSE_FIELD_RETRY },
	};

	for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
		if (strlen(fields[i].name) == len &&
		    memcmp(fields[i].name, name, len) == 0)
			return fields[i].field;
	return SSE_FIELD_OTHER;
}

/* The field name is complete: get ready for its value. */
static int
sse_field_begin(struct sse_parser *p)
{
	int r;

	p->field = sse_field_lookup(p->name, p->name_len);
	switch (p->field) {
	case SSE_FIELD_DATA:
		if (p->has_data &&
		    (r = sse_buf_append(&p->data, "\n", 1, p->max)) < 0)
			return sse_fail(p, r);
		p->has_data = true;
		break;
	case SSE_FIELD_EVENT:
		sse_buf_clear(&p->type);
		break;
	case SSE_FIELD_ID:
		sse_buf_clear(&p->id_value);
		p->is_id_value_bad = false;
		break;
	case SSE_FIELD_RETRY:
		p->retry_value = 0;
		p->has_retry_digit = false;
		p->is_retry_value_bad = false;
		break;
	case SSE_FIELD_OTHER:
		break;
	}
	return 0;
}

static void
sse_retry_bytes(struct sse_parser *p, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int digit = s[i] - '0';

		if (digit < 0 || digit > 9) {
			p->is_retry_value_bad = true;
			return;
		}
		p->has_retry_digit = true;
		if (p->retry_value > (INT64_MAX - digit) / 10)
			p->retry_value = INT64_MAX;
		else
			p->retry_value = p->retry_value * 10 + digit;
	}
}

static int
sse_value_bytes(struct sse_parser *p, const char *s, size_t n)
{
	struct sse_buf *b = NULL;
	int r;

	switch (p->field) {
	case SSE_FIELD_DATA:
		b = &p->data;
		break;
	case SSE_FIELD_EVENT:
		b = &p->type;
		break;
	case SSE_FIELD_ID:
		if (memchr(s, '\0', n) != NULL)
			p->is_id_value_bad = true;
		if (!p->is_id_value_bad)
			b = &p->id_value;
		break;
	case SSE_FIELD_RETRY:
		sse_retry_bytes(p, s, n);
		break;
	case SSE_FIELD_OTHER:
		break;
	}
	if (b != NULL && (r = sse_buf_append(b, s, n, p->max)) < 0)
		return sse_fail(p, r);
	return 0;
}

/* The field's line ended: id and retry take effect now. */
static void
sse_field_end(struct sse_parser *p)
{
	if (p->field == SSE_FIELD_ID && !p->is_id_value_bad) {
		sse_buf_swap(&p->id_value, &p->id_pending);
		p->is_id_pending = true;
		p->has_event_id = true;
	}
	if (p->field == SSE_FIELD_RETRY && p->has_retry_digit &&
	    !p->is_retry_value_bad) {
		p->retry_ms = p->retry_value;
		p->event_retry_ms = p->retry_value;
	}
}

/* Reads field-name bytes up to a colon; returns the bytes it took. */
static ssize_t
sse_name_bytes(struct sse_parser *p, const char *s, size_t n)
{
	int r;

	for (size_t i = 0; i < n; i++) {
		if (s[i] != ':') {
			if (p->name_len < sizeof p->name)
				p->name[p->name_len] = s[i];
			p->name_len++;
			continue;
		}
		if (p->name_len == 0) {
			p->state = SSE_STATE_COMMENT;
			return i + 1;
		}
		if ((r = sse_field_begin(p)) < 0)
			return r;
		p->state = SSE_STATE_SPACE;
		return i + 1;
	}
	return n;
}

/* Takes n bytes of one line that hold no CR or LF. */
static int
sse_line_bytes(struct sse_parser *p, const char *s, size_t n)
{
	ssize_t used = 0;
	int r;

	if (n > p->max - p->line_len)
		return sse_fail(p, -EMSGSIZE);
	p->line_len += n;
	for (; n > 0; s += used, n -= used) {
		switch (p->state) {
		case SSE_STATE_NAME:
			if ((used = sse_name_bytes(p, s, n)) < 0)
				return used;
			break;
		case SSE_STATE_SPACE:
			used = s[0] == ' ' ? 1 : 0;
			p->state = SSE_STATE_VALUE;
			break;
		case SSE_STATE_VALUE:
			if ((r = sse_value_bytes(p, s, n)) < 0)
				return r;
			used = n;
			break;
		case SSE_STATE_COMMENT:
			used = n;
			break;
		}
	}
	return 0;
}

/* The event is over: its type, data and per-event fields start afresh. */
static void
sse_event_clear(struct sse_parser *p)
{
	if (p->data.size > SSE_BUF_KEEP)
		sse_buf_free(&p->data);
	sse_buf_clear(&p->data);
	sse_buf_clear(&p->type);
	p->has_data = false;
	p->has_event_id = false;
	p->event_retry_ms = -1;
}

static int
sse_dispatch(struct sse_parser *p, sse_event_fn *fn, void *arg)
{
	struct sse_event ev;
	int r;

	if (p->is_id_pending) {
		sse_buf_swap(&p->id_pending, &p->last_id);
		p->is_id_pending = false;
	}
	if (!p->has_data) {
		sse_event_clear(p);
		return 0;
	}
	ev.type = p->type.len > 0 ? p->type.bytes : "message";
	ev.data = p->data.len > 0 ? p->data.bytes : "";
	ev.data_len = p->data.len;
	ev.id = sse_parser_last_id_peek(p);
	ev.has_id = p->has_event_id;
	ev.retry_ms = p->event_retry_ms;
	r = fn(arg, &ev);
	sse_event_clear(p);
	return r;
}

/* A line ended: finish its field, or dispatch when it was blank. */
static int
sse_line_end(struct sse_parser *p, sse_event_fn *fn, void *arg)
{
	bool is_blank = p->line_len == 0;
	int r = 0;

	if (!is_blank && p->state == SSE_STATE_NAME)
		r = sse_field_begin(p);
	if (!is_blank && r == 0)
		sse_field_end(p); /* a comment's field is SSE_FIELD_OTHER */
	p->state = SSE_STATE_NAME;
	p->field = SSE_FIELD_OTHER;
	p->name_len = 0;
	p->line_len = 0;
	if (r < 0)
		return r;
	return is_blank ? sse_dispatch(p, fn, arg) : 0;
}

/* The length of the run of bytes before the next CR or LF. */
static size_t
sse_run_length(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (s[i] == '\r' || s[i] == '\n')
			break;
	return i;
}

static int
sse_parse(struct sse_parser *p, const char *buf, size_t len, sse_event_fn *fn,
    void *arg)
{
	size_t i = 0, n;
	int r;

	while (i < len) {
		if (p->is_after_cr) {
			p->is_after_cr = false;
			if (buf[i] == '\n') {
				i++;
				continue;
			}
		}
		if (buf[i] == '\r' || buf[i] == '\n') {
			p->is_after_cr = buf[i++] == '\r';
			if ((r = sse_line_end(p, fn, arg)) != 0)
				return r;
			continue;
		}
		n = sse_run_length(buf + i, len - i);
		if ((r = sse_line_bytes(p, buf + i, n)) < 0)
			return r;
		i += n;
	}
	return 0;
}

/*
 * Matches a leading BOM, which may come split over feeds. Returns the
 * bytes of buf it took; a prefix that turns out not to be a BOM is parsed
 * as ordinary bytes.
 */
static ssize_t
sse_bom_skip(struct sse_parser *p, const char *buf, size_t len)
{
	size_t i, seen;
	int r;

	for (i = 0; i < len && p->bom_seen < SSE_BOM_LEN; i++) {
		if (buf[i] == sse_bom[p->bom_seen]) {
			p->bom_seen++;
			continue;
		}
		seen = p->bom_seen;
		p->bom_seen = SSE_BOM_LEN;
		/* No line end in there: nothing is dispatched. */
		if ((r = sse_parse(p, sse_bom, seen, NULL, NULL)) < 0)
			return r;
		break;
	}
	return i;
}

int
sse_parser_feed(struct sse_parser *p, const char *buf, size_t len,
    sse_event_fn *fn, void *arg)
{
	ssize_t skip = 0;

	if (p->error != 0)
		return p->error;
	if (p->bom_seen < SSE_BOM_LEN && (skip = sse_bom_skip(p, buf, len)) < 0)
		return skip;
	return sse_parse(p, buf + skip, len - skip, fn, arg);
}

void
sse_parser_reset(struct sse_parser *p)
{
	struct sse_buf last_id = p->last_id;
	int64_t retry_ms = p->retry_ms;
	size_t max = p->max;

	memset(&p->last_id, 0, sizeof p->last_id);
	sse_parser_free(p);
	sse_parser_init(p, max);
	p->last_id = last_id;
	p->retry_ms = retry_ms;
}

void
sse_parser_free(struct sse_parser *p)
{
	if (p == NULL)
		return;
	sse_buf_free(&p->data);
	sse_buf_free(&p->type);
	sse_buf_free(&p->id_value);
	sse_buf_free(&p->id_pending);
	sse_buf_free(&p->last_id);
	memset(p, 0, sizeof *p);
}

const char *
sse_parser_last_id_peek(const struct sse_parser *p)
{
	return p->last_id.len > 0 ? p->last_id.bytes : NULL;
}

int64_t
sse_parser_retry_ms(const struct sse_parser *p)
{
	return p->retry_ms;
}
