/* SPDX-License-Identifier: ISC */
/* An incremental parser of Server-Sent Events streams (text/event-stream). */
#ifndef MCPD_SSE_H
#define MCPD_SSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The parser follows the "event stream" rules of the WHATWG HTML standard
 * (section 9.2.6, "Interpreting an event stream"):
 *
 * - A line ends in CRLF, LF or CR; a CR that ends one feed and a LF that
 *   starts the next are one line end. One leading UTF-8 BOM is skipped.
 * - A line starting with ":" is a comment. "name:value" is a field; one
 *   space after the colon is dropped; a line without a colon is a field
 *   with an empty value. Field names are compared exactly (case matters).
 * - data: appends its value to the event's data (lines joined with "\n").
 *   event: sets the event type. id: sets the last event id, unless the
 *   value holds a NUL byte (then the line is ignored); an empty value
 *   clears it. retry: sets the reconnection time in milliseconds when the
 *   value is one or more ASCII digits, and is ignored otherwise (a value
 *   beyond INT64_MAX counts as INT64_MAX). Other fields are ignored.
 * - A blank line ends an event. The last event id is committed (even when
 *   nothing is dispatched) and persists across events and resets; the
 *   event is dispatched only if it had a data field; the event type, the
 *   data and the per-event id and retry flags start afresh.
 * - Bytes are passed through as they are, without UTF-8 decoding: the JSON
 *   parser that reads the data checks its encoding.
 * - An event that never ends in a blank line is never dispatched.
 *
 * The limit: a line longer than max bytes (field name, colon and value,
 * without its line end; comments and ignored fields too), or an event
 * whose data grows beyond max bytes (counting the "\n" between lines),
 * makes sse_parser_feed return -EMSGSIZE at the first byte over, before
 * storing it. The error is sticky until sse_parser_reset.
 */

/* One dispatched event; every pointer is valid during the callback only. */
struct sse_event {
	const char *type; /* the event field, or "message" */
	const char *data; /* NUL-terminated; may also hold NUL bytes */
	size_t data_len;
	const char *id;	  /* the last event id as of this event, or NULL */
	bool has_id;	  /* this event carried a (valid) id field itself */
	int64_t retry_ms; /* the retry field of this event, or -1 */
};

/*
 * Called for each dispatched event. A non-zero return stops
 * sse_parser_feed, which returns that value.
 */
typedef int sse_event_fn(void *arg, const struct sse_event *);

/* A growable byte buffer owned by a parser, NUL-terminated once allocated. */
struct sse_buf {
	char *bytes;
	size_t len;
	size_t size;
};

enum sse_state {
	SSE_STATE_NAME,	   /* at a line start or in a field name */
	SSE_STATE_SPACE,   /* just after the colon: one space may go */
	SSE_STATE_VALUE,   /* in a field value */
	SSE_STATE_COMMENT, /* in a line that starts with ":" */
};

enum sse_field {
	SSE_FIELD_OTHER,
	SSE_FIELD_DATA,
	SSE_FIELD_EVENT,
	SSE_FIELD_ID,
	SSE_FIELD_RETRY,
};

/* The state of one event source; set up with sse_parser_init. */
struct sse_parser {
	size_t max;	   /* longest line, largest event data */
	int error;	   /* sticky -EMSGSIZE or -ENOMEM, else 0 */
	unsigned bom_seen; /* leading BOM bytes matched; 3 when done */
	bool is_after_cr;  /* a LF now belongs to the last line end */
	enum sse_state state;
	enum sse_field field; /* the field of the current line */
	char name[8];	      /* its first bytes: the known names fit */
	size_t name_len;      /* its whole length */
	size_t line_len;      /* bytes of the current line */

	struct sse_buf data; /* the event's data, without a last "\n" */
	bool has_data;	     /* the event had a data field */
	struct sse_buf type; /* the event type, empty for "message" */
	bool has_event_id;   /* the event had a valid id field */
	int64_t event_retry_ms;

	struct sse_buf id_value;   /* the value of an id line being read */
	bool is_id_value_bad;	   /* it holds a NUL */
	struct sse_buf id_pending; /* the stream's last event id buffer */
	bool is_id_pending;	   /* it differs from last_id */
	struct sse_buf last_id;	   /* committed at each blank line */

	int64_t retry_value; /* the value of a retry line being read */
	bool has_retry_digit;
	bool is_retry_value_bad;
	int64_t retry_ms; /* the last valid retry, or -1 */
};

/* Sets up a parser of one stream; max bounds a line and an event's data. */
void sse_parser_init(struct sse_parser *, size_t max);
/*
 * Parses the next len bytes of the stream, in any split, calling fn for
 * each event. Returns 0, -EMSGSIZE or -ENOMEM (the caller drops the
 * stream), or the first non-zero value fn returned: then the bytes after
 * that event are left unparsed, and the parser should be reset (or the
 * stream dropped) before it is fed again.
 */
int sse_parser_feed(struct sse_parser *, const char *buf, size_t len,
    sse_event_fn *fn, void *arg);
/*
 * Starts a new stream of the same source, as a reconnection does: the
 * last committed event id and the retry value stay, everything else starts
 * afresh (a BOM is skipped again, an unfinished event and its id field are
 * dropped, an error is cleared). The new stream's id buffer starts with
 * the last event id, as Chromium's EventSource does, where the standard's
 * text would start it empty and lose the id at the first blank line.
 */
void sse_parser_reset(struct sse_parser *);
/* Frees the parser's buffers; it may be set up again. NULL is a no-op. */
void sse_parser_free(struct sse_parser *);

/* The last committed event id (borrowed), or NULL when none or empty. */
const char *sse_parser_last_id_peek(const struct sse_parser *);
/* The last valid retry value in milliseconds, or -1 when none came. */
int64_t sse_parser_retry_ms(const struct sse_parser *);

#endif
