/* SPDX-License-Identifier: ISC */
/* Unit tests of common/ecmaregex.c: matches, limits and refusals. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ecmaregex.h"
#include "tap.h"

/* A pattern, a subject, and whether the pattern is found in it. */
struct match_case {
	const char *pattern;
	const char *subject;
	bool is_found;
};

static const struct match_case matches[] = {
	/* \d \w \s are ASCII; their negations take any other character. */
	{ "^\\d+$", "0123456789", true },
	{ "^\\d+$", "12a", false },
	{ "^\\d$", "\xd9\xa1", false }, /* U+0661 ARABIC-INDIC DIGIT ONE */
	{ "^\\D$", "\xd9\xa1", true },
	{ "^\\D$", "7", false },
	{ "^\\w+$", "a_Z9", true },
	{ "^\\w$", "\xc3\xa9", false },
	{ "^\\W$", "\xc3\xa9", true },
	{ "^\\W$", "-", true },
	{ "^\\W$", "a", false },
	/* \s is ECMA-262's white space and line terminators. */
	{ "^\\s+$", " \t\n\r\f\v", true },
	{ "^\\s$", "\xc2\xa0", true },	    /* U+00A0 */
	{ "^\\s$", "\xe2\x80\xa8", true },  /* U+2028 */
	{ "^\\s$", "\xef\xbb\xbf", true },  /* U+FEFF */
	{ "^\\s$", "\xe2\x80\x8b", false }, /* U+200B is not */
	{ "^\\S$", "\xc2\xa0", false },
	{ "^\\S$", " ", false },
	{ "^\\S$", "\xc3\xa9", true },
	{ "^[\\s]$", "\xe3\x80\x80", true }, /* U+3000 */
	{ "^[^\\s]$", "\xe3\x80\x80", false },
	/* \S in a class: the class, or any non-space. */
	{ "^[\\S]$", "x", true },
	{ "^[\\S]$", " ", false },
	{ "^[a\\S]+$", "a\xc3\xa9", true },
	{ "^[^a\\S]$", " ", true },
	{ "^[^a\\S]$", "a", false },
	{ "^[^a\\S]$", "b", false },
	{ "^[^a\\S]{2}$", "\t\n", true },
	/* \v is U+000B, not PCRE2's class of vertical space. */
	{ "^\\v$", "\v", true },
	{ "^\\v$", "\n", false },
	{ "^[\\w.-]+$", "a-b.c_d", true },
	{ "^[\\w.-]+$", "a b", false },
	/* "." is one character of 1 to 4 bytes, but not a line end. */
	{ "^.$", "a", true },
	{ "^.$", "\xc3\xa9", true },
	{ "^.$", "\xe2\x82\xac", true },
	{ "^.$", "\xf0\x9f\x98\x80", true },
	{ "^.$", "\xe2\x80\xa8", false }, /* U+2028 is a line terminator */
	{ "^.$", "\xe2\x80\xa9", false }, /* U+2029 too */
	{ "^.$", "\n", false },
	{ "^.$", "\r", false },
	{ "^..$", "\xc3\xa9", false },
	{ "^.{1,3}$", "\xc3\xa9t\xc3\xa9", true },
	{ "^[^a]$", "\xc3\xa9", true },
	{ "^[^a]$", "a", false },
	/* Multibyte literals repeat as a whole. */
	{ "^\xc3\xa9+$", "\xc3\xa9\xc3\xa9", true },
	{ "^\xc3\xa9+$",
	    "\xc3\xa9"
	    "e",
	    false },
	{ "^\\u00e9{2}$", "\xc3\xa9\xc3\xa9", true },
	{ "^\\ud83d\\ude00$", "\xf0\x9f\x98\x80", true },
	{ "^\xf0\x9f\x98\x80?$", "", true },
	/* A search anywhere, as ECMA-262's test() does. */
	{ "b", "abc", true },
	{ "^b", "abc", false },
	{ "\\w+@\\w+\\.(?:com|org)", "mail x@y.org now", true },
	{ "^a{2,3}?b(?<x>c)\\u00e9$", "aabc\xc3\xa9", true },
	{ "^a{2,3}?b(?<x>c)\\u00e9$", "abc\xc3\xa9", false },
	{ "a{,2}", "a{,2}", true },
	{ "^\\x41\\t\\cJ$", "A\t\n", true },
	{ "\\bfoo\\b", "a foo b", true },
	{ "\\bfoo\\b", "afoob", false },
	/* "$" is the very end, not before a last "\n". */
	{ "a$", "a\n", false },
	/* What PCRE2 brings: lookaround, backreferences, \p{...}. */
	{ "^(?=a)\\w+$", "ab", true },
	{ "^(?!a)\\w+$", "ab", false },
	{ "(?<=a)b", "ab", true },
	{ "(?<!a)b", "ab", false },
	{ "^(a+)b\\1$", "aabaa", true },
	{ "^(?<n>a)\\k<n>$", "aa", true },
	{ "^\\p{L}+$", "\xc3\xa9t\xc3\xa9", true },
	{ "^\\p{Letter}+$", "\xc3\xa9t\xc3\xa9", true },
	{ "^\\p{gc=Lu}$", "A", true },
	{ "^\\p{General_Category=Decimal_Number}$", "\xe0\xa7\xaa", true },
	{ "^\\p{sc=Greek}$", "\xce\xb1", true },
	{ "^\\p{Script=Greek}$", "a", false },
	{ "^\\P{Lu}$", "a", true },
	{ "^\\P{Lu}$", "A", false },
	{ "^[\\p{Lu}\\d]+$", "A1", true },
	/* Non-ASCII characters and escapes inside classes. */
	{ "^[\xc3\xa9]$", "\xc3\xa9", true },
	{ "^[\\u00e9-\\u00ff]$", "\xc3\xa9", true },
	{ "^[\\D]$", "\xc3\xa9", true },
	{ "^\\u{1F600}$", "\xf0\x9f\x98\x80", true },
	{ "^[\\ud83d\\ude00]$", "\xf0\x9f\x98\x80", true },
	/* "[" in a class is literal: no POSIX classes in ECMA-262. */
	{ "^[[:alpha:]]+$", "alpha:]", false },
	{ "^[[:alpha:]]$", ":]", true },
	/* "[]" matches nothing, "[^]" any character. */
	{ "a[]", "a", false },
	{ "^a[^]$", "a\n", true },
	{ "^[^]$", "\xc3\xa9", true },
};

static void
test_match(void)
{
	for (size_t i = 0; i < TAP_COUNT(matches); i++) {
		const struct match_case *c = &matches[i];
		struct ecmaregex *re = NULL;
		char *what = NULL;
		int r = ecmaregex_new(c->pattern, &re, &what);

		TAP_CHECK(r == 0, "%s: got %d (%s)", c->pattern, r,
		    tap_str_show(what));
		free(what);
		if (r < 0)
			continue;
		r = ecmaregex_search(re, c->subject, strlen(c->subject));
		TAP_CHECK(r == c->is_found, "%s on \"%s\": expected %s, got %d",
		    c->pattern, c->subject,
		    c->is_found ? "a match" : "no match", r);
		ecmaregex_free(re);
	}
}

/* Only the n bytes given are searched: a NUL or what follows is not. */
static void
test_search_length(void)
{
	struct ecmaregex *re = NULL;

	TAP_REQUIRE(ecmaregex_new("c$", &re, NULL) == 0, "compile");
	TAP_CHECK_INT(ecmaregex_search(re, "abc", 3), 1);
	TAP_CHECK_INT(ecmaregex_search(re, "abcd", 3), 1);
	TAP_CHECK_INT(ecmaregex_search(re, "abc", 2), 0);
	TAP_CHECK_INT(ecmaregex_search(re, "a\0c", 3), 1);
	/* Not UTF-8: said, not searched. */
	TAP_CHECK_INT(ecmaregex_search(re,
			  "\xc3"
			  "c",
			  2),
	    -EILSEQ);
	ecmaregex_free(re);
	ecmaregex_free(NULL);
}

/* A pattern and the cause of its refusal. */
static const struct {
	const char *pattern;
	const char *cause;
} refusals[] = {
	{ "a\\a", "an escape ECMA-262 gives no meaning (at offset 1)" },
	{ "[\\h]", "an escape ECMA-262 gives no meaning (at offset 0)" },
	{ "\\Qa", "an escape ECMA-262 gives no meaning (at offset 0)" },
	{ "(?i)a", "a \"(?\" group ECMA-262 does not have (at offset 0)" },
	{ "x(?>a)", "a \"(?\" group ECMA-262 does not have (at offset 1)" },
	{ "(?#c)", "a \"(?\" group ECMA-262 does not have (at offset 0)" },
	{ "(*UCP)\\d",
	    "a \"(*\" verb, which ECMA-262 does not have (at offset 0)" },
	/* PCRE2's own refusals, with its offset where nothing was rewritten. */
	{ "(a", "missing closing parenthesis (at offset 2)" },
	{ "[z-a]", "range out of order in character class (at offset 3)" },
	{ "[abc", "a class without its closing ']' (at offset 0)" },
	{ "a**", "quantifier does not follow a repeatable item (at offset 2)" },
	{ "\\s(", "missing closing parenthesis" },
	{ "\\ud800",
	    "disallowed Unicode code point (>= 0xd800 && <= 0xdfff) (at offset 6)" },
	/* Repeats that multiply cannot make a pattern past 64 KiB. */
	{ "((((((a{9}){9}){9}){9}){9}){9})",
	    "regular expression is too large (at offset 31)" },
};

static void
test_refusals(void)
{
	for (size_t i = 0; i < TAP_COUNT(refusals); i++) {
		struct ecmaregex *re = NULL;
		char *cause = NULL;
		int r = ecmaregex_new(refusals[i].pattern, &re, &cause);

		TAP_CHECK(r == -EINVAL, "%s: expected -EINVAL, got %d",
		    refusals[i].pattern, r);
		TAP_CHECK(re == NULL, "%s: *ret_re written",
		    refusals[i].pattern);
		TAP_CHECK_STR(cause, refusals[i].cause);
		ecmaregex_free(re);
		free(cause);
	}
}

/* A search that backtracks past the limits stops, and says so. */
static void
test_limits(void)
{
	struct ecmaregex *re = NULL;
	char subject[64];

	memset(subject, 'a', sizeof subject - 2);
	subject[sizeof subject - 2] = 'b';
	subject[sizeof subject - 1] = '\0';
	TAP_REQUIRE(ecmaregex_new("^(a+)+$", &re, NULL) == 0, "compile");
	TAP_CHECK_INT(ecmaregex_search(re, subject, strlen(subject)), -E2BIG);
	/* The same pattern on a short subject is decided. */
	TAP_CHECK_INT(ecmaregex_search(re, "aaab", 4), 0);
	TAP_CHECK_INT(ecmaregex_search(re, "aaaa", 4), 1);
	ecmaregex_free(re);
}

static const struct tap_test tests[] = {
	{ "patterns match as ECMA-262 says", test_match },
	{ "a search sees only the bytes it is given", test_search_length },
	{ "what ECMA-262 or PCRE2 refuses is refused, and named",
	    test_refusals },
	{ "a search stops at its limits", test_limits },
};

int
main(void)
{
	return tap_run(tests, TAP_COUNT(tests));
}
