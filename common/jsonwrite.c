/* SPDX-License-Identifier: ISC */
/* A writer of JSON text into a caller's buffer: no printf, no allocation. */
#include <stdlib.h>
#include <string.h>

#include "jsonrpc.h"
#include "jsonwrite.h"

/*
 * What each byte becomes in a string: 0 as it is, else the letter after
 * the backslash ('u': \u00XX). One table per style, so that a string is
 * escaped in one pass with one load a byte.
 */
#define JSONWRITE_CONTROLS                                                    \
	['\0'] = 'u', [1] = 'u', [2] = 'u', [3] = 'u', [4] = 'u', [5] = 'u',  \
	[6] = 'u', [7] = 'u', [11] = 'u', [14] = 'u', [15] = 'u', [16] = 'u', \
	[17] = 'u', [18] = 'u', [19] = 'u', [20] = 'u', [21] = 'u',           \
	[22] = 'u', [23] = 'u', [24] = 'u', [25] = 'u', [26] = 'u',           \
	[27] = 'u', [28] = 'u', [29] = 'u', [30] = 'u', [31] = 'u',           \
	['"'] = '"', ['\\'] = '\\'

static const char jsonwrite_jansson[256] = { JSONWRITE_CONTROLS, ['\b'] = 'b',
	['\f'] = 'f', ['\n'] = 'n', ['\r'] = 'r', ['\t'] = 't' };
static const char jsonwrite_plain[256] = { JSONWRITE_CONTROLS, ['\b'] = 'u',
	['\f'] = 'u', ['\n'] = 'u', ['\r'] = 'u', ['\t'] = 'u' };

void
jsonwrite_init(struct jsonwrite *w, char *buf, size_t size)
{
	w->buf = buf;
	w->size = size;
	w->len = 0;
	w->is_over = false;
}

static void
jsonwrite_escaped(struct jsonwrite *w, const char *s, size_t n,
    const char table[256], const char *hex)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, run;
	char esc[6] = { '\\', 0, '0', '0', 0, 0 };

	jsonwrite_lit(w, "\"");
	for (;;) {
		for (run = i; run < n && table[p[run]] == 0; run++)
			;
		jsonwrite_raw(w, s + i, run - i);
		if (run == n)
			break;
		esc[1] = table[p[run]];
		if (esc[1] != 'u')
			jsonwrite_raw(w, esc, 2);
		else {
			esc[4] = hex[p[run] >> 4];
			esc[5] = hex[p[run] & 15];
			jsonwrite_raw(w, esc, 6);
		}
		i = run + 1;
	}
	jsonwrite_lit(w, "\"");
}

void
jsonwrite_string(struct jsonwrite *w, const char *s, size_t n)
{
	jsonwrite_escaped(w, s, n, jsonwrite_jansson, "0123456789ABCDEF");
}

void
jsonwrite_string_plain(struct jsonwrite *w, const char *s, size_t n)
{
	jsonwrite_escaped(w, s, n, jsonwrite_plain, "0123456789abcdef");
}

void
jsonwrite_int(struct jsonwrite *w, int64_t v)
{
	char num[JSONRPC_INT_MAX];

	jsonwrite_raw(w, num, jsonrpc_format_int(num, v));
}

void
jsonwrite_thousandths(struct jsonwrite *w, uint64_t thousandths)
{
	char num[JSONRPC_INT_MAX + 4];
	size_t n = jsonrpc_format_int(num, (int64_t)(thousandths / 1000));

	num[n] = '.';
	num[n + 1] = (char)('0' + thousandths / 100 % 10);
	num[n + 2] = (char)('0' + thousandths / 10 % 10);
	num[n + 3] = (char)('0' + thousandths % 10);
	jsonwrite_raw(w, num, n + 4);
}

void
jsonwrite_json(struct jsonwrite *w, const json_t *v)
{
	const char *key;
	json_t *one;
	char *text;
	size_t i;

	if (v == NULL) {
		jsonwrite_lit(w, "null");
		return;
	}
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		jsonwrite_lit(w, "{");
		i = 0;
		json_object_foreach((json_t *)(uintptr_t)v, key, one) {
			if (i++ > 0)
				jsonwrite_lit(w, ",");
			jsonwrite_string(w, key, strlen(key));
			jsonwrite_lit(w, ":");
			jsonwrite_json(w, one);
		}
		jsonwrite_lit(w, "}");
		return;
	case JSON_ARRAY:
		jsonwrite_lit(w, "[");
		json_array_foreach(v, i, one) {
			if (i > 0)
				jsonwrite_lit(w, ",");
			jsonwrite_json(w, one);
		}
		jsonwrite_lit(w, "]");
		return;
	case JSON_STRING:
		jsonwrite_string(w, json_string_value(v),
		    json_string_length(v));
		return;
	case JSON_INTEGER:
		jsonwrite_int(w, json_integer_value(v));
		return;
	case JSON_TRUE:
		jsonwrite_lit(w, "true");
		return;
	case JSON_FALSE:
		jsonwrite_lit(w, "false");
		return;
	case JSON_NULL:
		jsonwrite_lit(w, "null");
		return;
	default: /* a real: jansson's own digits */
		text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
		if (text != NULL)
			jsonwrite_raw(w, text, strlen(text));
		else
			jsonwrite_lit(w, "null");
		free(text);
	}
}
