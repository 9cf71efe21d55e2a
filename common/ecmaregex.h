/* SPDX-License-Identifier: ISC */
/* ECMA-262 patterns, as JSON Schema writes them, run by PCRE2. */
#ifndef MCPD_ECMAREGEX_H
#define MCPD_ECMAREGEX_H

#include <stddef.h>

/*
 * PCRE2 (UTF mode, no UCP) runs the pattern after a short rewrite of what
 * ECMA-262 (with its "u" flag, as JSON Schema asks) means otherwise:
 *
 * - \s and \S are ECMA-262's white space and line terminators, Unicode's
 *   included (U+00A0, U+2028, U+FEFF, ...); \d \w \b stay ASCII, as both
 *   say. "." matches any code point but \n, \r, U+2028 and U+2029.
 * - \v is U+000B (PCRE2's \v is a class); \uHHHH, \u{H...}, a surrogate
 *   pair \uD83D\uDE00, \xHH, \cX and \0 are the characters they name;
 *   "[" inside a class is literal (PCRE2 reads "[:alpha:]" there).
 * - "$" matches only at the very end; "[]" matches nothing and "[^]" any
 *   character; lookaround, backreferences, named groups and \p{...} are
 *   PCRE2's, which are ECMA-262's; \p{...} also takes ECMA-262's long
 *   category names ("Letter", "Decimal_Number") and "gc=", "sc=" forms.
 * - Refused, with a cause naming it: a letter escape ECMA-262 gives no
 *   meaning (\a \e \h \K \Q \R ...), a "(?" group ECMA-262 does not have
 *   ("(?i)", "(?>", "(?|", "(?#"), "(*" verbs, and whatever PCRE2 refuses
 *   (its message and offset).
 *
 * A search stops at ECMAREGEX_MATCH_LIMIT steps of PCRE2's matcher,
 * ECMAREGEX_DEPTH_LIMIT nested backtracking points or ECMAREGEX_HEAP_KIB
 * KiB of backtracking memory: a pattern that backtracks catastrophically
 * on a long string answers -E2BIG instead of holding the caller. A
 * compiled pattern is at most 64 KiB (PCRE2's link size): repeats that
 * multiply ("((a{9}){9}){9}...") are refused as too large.
 */
#define ECMAREGEX_MATCH_LIMIT 1000000
#define ECMAREGEX_DEPTH_LIMIT 10000
#define ECMAREGEX_HEAP_KIB    4096

struct ecmaregex;

/*
 * Compiles an ECMA-262 pattern into *ret_re: 0, -EINVAL (a pattern this
 * refuses; *cause, malloc'd, says what and where), or -ENOMEM.
 */
int ecmaregex_new(const char *pattern, struct ecmaregex **ret_re, char **cause);

/*
 * Searches the n bytes at s (UTF-8) anywhere, as ECMA-262's test() does:
 * 1 found, 0 not, -E2BIG when a limit above stopped the search, -EILSEQ
 * when s is not UTF-8, -ENOMEM.
 */
int ecmaregex_search(const struct ecmaregex *re, const char *s, size_t n);

/* Frees a compiled pattern; NULL is a no-op. */
void ecmaregex_free(struct ecmaregex *re);

#endif
