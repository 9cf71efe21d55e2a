/* SPDX-License-Identifier: ISC */
/* ECMA-262 patterns, as JSON Schema writes them, run as POSIX regexes. */
#ifndef MCPD_ECMAREGEX_H
#define MCPD_ECMAREGEX_H

#include <stdbool.h>
#include <stddef.h>

/*
 * The translation gives a POSIX extended expression that runs on bytes
 * (the C locale) and searches anywhere in the string, as ECMA-262 does:
 *
 * - \d \w \s \D \W \S are ASCII classes (as ECMA-262 has for \d and \w;
 *   \s is ASCII white space only); \t \n \r \f \v \cX \xHH \uHHHH (and
 *   surrogate pairs) are the characters they name; \b and \B are glibc's.
 * - (?:...) and (?<name>...) are plain groups; lazy quantifiers match the
 *   same strings as greedy ones; "{" that starts no quantifier is literal.
 * - "." and negated classes match one whole UTF-8 character; "." matches
 *   neither "\n" nor "\r" (but does match U+2028 and U+2029). A multibyte
 *   character is a group, so "^.{2}$" and "^\u00e9+$" count characters.
 *
 * Refused with -ENOTSUP: lookaround, backreferences, \p{...} and other
 * escapes ECMA-262 gives a meaning POSIX lacks, empty classes, non-ASCII
 * characters inside brackets, \D \W \S inside brackets, and "[:" "[." "[="
 * inside brackets.
 */

struct ecmaregex;

/*
 * Translates an ECMA-262 pattern into *ret_posix (malloc'd); -ENOTSUP with
 * *what (a static string) naming the feature, or -ENOMEM.
 */
int ecmaregex_translate(const char *pattern, char **ret_posix,
    const char **what);

/*
 * Compiles an ECMA-262 pattern into *ret_re; -ENOTSUP with *what (a static
 * string) naming the feature or "regcomp refuses it", or -ENOMEM.
 */
int ecmaregex_new(const char *pattern, struct ecmaregex **ret_re,
    const char **what);

/* Whether the pattern matches anywhere in the n bytes at s. */
bool ecmaregex_search(const struct ecmaregex *re, const char *s, size_t n);

/* Frees a compiled pattern; NULL is a no-op. */
void ecmaregex_free(struct ecmaregex *re);

#endif
