/* SPDX-License-Identifier: ISC */
/* A writer of JSON text into a caller's buffer, byte for byte as jansson. */
#ifndef MCPD_JSONWRITE_H
#define MCPD_JSONWRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <jansson.h>

/* Text being written into buf; what does not fit sets is_over. */
struct jsonwrite {
	char *buf;
	size_t size;
	size_t len;
	bool is_over; /* a write did not fit: the text is incomplete */
};

/* Starts w on buf (size bytes), empty. */
void jsonwrite_init(struct jsonwrite *w, char *buf, size_t size);
/* n bytes of s as they are (inline: most are a few bytes, known). */
static inline void
jsonwrite_raw(struct jsonwrite *w, const char *s, size_t n)
{
	if (w->is_over || n > w->size - w->len) {
		w->is_over = true;
		return;
	}
	memcpy(w->buf + w->len, s, n);
	w->len += n;
}
/* A string literal as it is, its length known when compiled. */
#define jsonwrite_lit(w, s) jsonwrite_raw((w), "" s, sizeof(s) - 1)
/*
 * s (n bytes of UTF-8) as a JSON string, escaped as json_dumps escapes it
 * without flags: \" \\ \b \f \n \r \t, \u00XX (uppercase) for the other
 * controls, every other byte as it is.
 */
void jsonwrite_string(struct jsonwrite *w, const char *s, size_t n);
/*
 * The same with only what JSON requires: \" \\ and \u00xx (lowercase) for
 * every control, as the audit log has written its own fields from its
 * first version on.
 */
void jsonwrite_string_plain(struct jsonwrite *w, const char *s, size_t n);
/* An integer, as json_dumps writes one. */
void jsonwrite_int(struct jsonwrite *w, int64_t v);
/* thousandths / 1000 with three decimals, as printf's %.3f writes it. */
void jsonwrite_thousandths(struct jsonwrite *w, uint64_t thousandths);
/*
 * v as json_dumps writes it with JSON_COMPACT | JSON_ENCODE_ANY (members
 * in their order), without its allocations but for a real's; NULL as
 * null.
 */
void jsonwrite_json(struct jsonwrite *w, const json_t *v);

#endif
