/* SPDX-License-Identifier: ISC */
/* Text from elsewhere (a registry, a publisher) made safe to show. */
#ifndef MCPD_TEXTESC_H
#define MCPD_TEXTESC_H

#include <stdbool.h>
#include <stddef.h>

/*
 * s (len bytes, any bytes) as text that a terminal shows as it is: \n, \r
 * and \t for those, \xHH for the other C0 controls, DEL and each byte that
 * is not part of well-formed UTF-8 (an ANSI escape shows as \x1b[31m),
 * \uHHHH for C1 controls, line and paragraph separators and the
 * bidirectional controls (U+200E, U+200F, U+202A to U+202E, U+2066 to
 * U+2069); everything else is kept. With is_quoted, the text is put in
 * double quotes and " and \ are escaped as \" and \\. A new string, or
 * NULL when out of memory.
 */
char *textesc(const char *s, size_t len, bool is_quoted);
/* The characters (code points) of UTF-8 text; a stray byte counts as one. */
size_t textesc_chars(const char *s);
/*
 * s itself when it has at most max characters, else its first characters
 * and "..." (max in all, cut between characters; max is at least 3): a
 * new string, or NULL when out of memory.
 */
char *textesc_cut(const char *s, size_t max);

#endif
