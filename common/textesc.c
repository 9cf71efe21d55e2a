/* SPDX-License-Identifier: ISC */
/* Escaping of control characters and broken UTF-8 for display. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "textesc.h"

/*
 * The length of the well-formed UTF-8 sequence at s (at most n bytes) and
 * its code point, or 0 when there is none (RFC 3629: no overlong forms,
 * no surrogates, nothing past U+10FFFF).
 */
static size_t
textesc_utf8(const unsigned char *s, size_t n, uint32_t *cp)
{
	size_t len;
	uint32_t c, min;

	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if ((s[0] & 0xe0) == 0xc0) {
		len = 2, c = s[0] & 0x1f, min = 0x80;
	} else if ((s[0] & 0xf0) == 0xe0) {
		len = 3, c = s[0] & 0x0f, min = 0x800;
	} else if ((s[0] & 0xf8) == 0xf0) {
		len = 4, c = s[0] & 0x07, min = 0x10000;
	} else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return len;
}

/* Code points that must not reach a terminal as they are. */
static bool
textesc_is_hidden(uint32_t c)
{
	return (c >= 0x80 && c <= 0x9f) || c == 0x200e || c == 0x200f ||
	    c == 0x2028 || c == 0x2029 || (c >= 0x202a && c <= 0x202e) ||
	    (c >= 0x2066 && c <= 0x2069);
}

char *
textesc(const char *s, size_t len, bool is_quoted)
{
	const unsigned char *p = (const unsigned char *)s;
	char *buf = NULL;
	size_t size = 0, n;
	uint32_t c;
	FILE *f = open_memstream(&buf, &size);

	if (f == NULL)
		return NULL;
	if (is_quoted)
		fputc('"', f);
	for (size_t i = 0; i < len; i += n) {
		if ((n = textesc_utf8(p + i, len - i, &c)) == 0) {
			fprintf(f, "\\x%02x", p[i]);
			n = 1;
		} else if (c == '\n')
			fputs("\\n", f);
		else if (c == '\r')
			fputs("\\r", f);
		else if (c == '\t')
			fputs("\\t", f);
		else if (c < 0x20 || c == 0x7f)
			fprintf(f, "\\x%02x", (unsigned)c);
		else if (textesc_is_hidden(c))
			fprintf(f, "\\u%04x", (unsigned)c);
		else if (is_quoted && (c == '"' || c == '\\'))
			fprintf(f, "\\%c", (char)c);
		else
			fwrite(p + i, 1, n, f);
	}
	if (is_quoted)
		fputc('"', f);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

size_t
textesc_chars(const char *s)
{
	size_t n = 0;

	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		n += (*p & 0xc0) != 0x80;
	return n;
}

char *
textesc_cut(const char *s, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t chars = 0, at = 0;
	char *out;

	if (max < 3)
		max = 3;
	if (textesc_chars(s) <= max)
		return strdup(s);
	/* The first max - 3 characters, then "...". */
	for (; p[at] != '\0'; at++)
		if ((p[at] & 0xc0) != 0x80 && chars++ == max - 3)
			break;
	if ((out = malloc(at + 4)) == NULL)
		return NULL;
	memcpy(out, s, at);
	memcpy(out + at, "...", 4);
	return out;
}
