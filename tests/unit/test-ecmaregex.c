/* SPDX-License-Identifier: ISC */
/* Unit tests of common/ecmaregex.c: translations, matches and refusals. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ecmaregex.h"
#include "tap.h"

/* What "." and negated classes become: one whole UTF-8 character. */
#define UTF8_DOT "([^\n\r\x80-\xbf][\x80-\xbf]*)"

/* An ECMA-262 pattern and the POSIX expression it becomes. */
static const struct {
	const char *pattern;
	const char *posix;
} translations[] = {
	{ "\\d", "[0-9]" },
	{ "\\w", "[A-Za-z0-9_]" },
	{ "\\s", "[[:space:]]" },
	{ "\\D", "([^0-9\x80-\xbf][\x80-\xbf]*)" },
	{ "\\W", "([^A-Za-z0-9_\x80-\xbf][\x80-\xbf]*)" },
	{ "\\S", "([^[:space:]\x80-\xbf][\x80-\xbf]*)" },
	{ "[\\d.-]", "[-0-9.]" },
	{ "[^\\]\\-]", "([^]\x80-\xbf-][\x80-\xbf]*)" },
	{ "[\\^]", "\\^" },
	{ ".", UTF8_DOT },
	{ "^.{2}$", "^" UTF8_DOT "{2}$" },
	{ "\xc3\xa9+", "(\xc3\xa9)+" },
	{ "\\u00e9", "(\xc3\xa9)" },
	{ "\\u20ac", "(\xe2\x82\xac)" },
	{ "\\ud83d\\ude00", "(\xf0\x9f\x98\x80)" },
	{ "\xf0\x9f\x98\x80", "(\xf0\x9f\x98\x80)" },
	{ "\\x41\\t\\cJ\\.", "A\t\n\\." },
	{ "(?:a|b)(?<name>c)", "(a|b)(c)" },
	{ "a+?b*?c??d{2,3}?", "a+b*c?d{2,3}" },
	{ "a{,2", "a\\{,2" },
	{ "}{", "\\}\\{" },
	/* A quantifier starts with "{": "1}" is two literals. */
	{ "^a1}?$", "^a1\\}?$" },
	{ "\\bx\\B", "\\bx\\B" },
};

static void
test_translate(void)
{
	for (size_t i = 0; i < TAP_COUNT(translations); i++) {
		const char *what = NULL;
		char *posix = NULL;
		int r = ecmaregex_translate(translations[i].pattern, &posix,
		    &what);

		TAP_CHECK(r == 0, "%s: got %d (%s)", translations[i].pattern, r,
		    tap_str_show(what));
		TAP_CHECK_STR(posix, translations[i].posix);
		free(posix);
	}
}

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
	{ "^\\s+$", " \t\n\r\f\v", true },
	{ "^\\s$", "\xc2\xa0", false }, /* U+00A0: Unicode white space */
	{ "^\\S$", "\xc2\xa0", true },
	{ "^\\S$", " ", false },
	{ "^[\\w.-]+$", "a-b.c_d", true },
	{ "^[\\w.-]+$", "a b", false },
	/* "." is one character of 1 to 4 bytes, but not a line end. */
	{ "^.$", "a", true },
	{ "^.$", "\xc3\xa9", true },
	{ "^.$", "\xe2\x82\xac", true },
	{ "^.$", "\xf0\x9f\x98\x80", true },
	{ "^.$", "\xe2\x80\xa8", true }, /* U+2028 */
	{ "^.$", "\n", false },
	{ "^.$", "\r", false },
	{ "^..$", "\xc3\xa9", false },
	{ "^.{1,3}$", "\xc3\xa9t\xc3\xa9", true },
	{ "^[^a]$", "\xc3\xa9", true },
	{ "^[^a]$", "a", false },
	/* Multibyte literals repeat as a whole. */
	{ "^\xc3\xa9+$", "\xc3\xa9\xc3\xa9", true },
	{ "^\xc3\xa9+$", "\xc3\xa9\xa9", false },
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
};

static void
test_match(void)
{
	for (size_t i = 0; i < TAP_COUNT(matches); i++) {
		const struct match_case *c = &matches[i];
		struct ecmaregex *re = NULL;
		const char *what = NULL;
		int r = ecmaregex_new(c->pattern, &re, &what);

		TAP_CHECK(r == 0, "%s: got %d (%s)", c->pattern, r,
		    tap_str_show(what));
		if (r < 0)
			continue;
		TAP_CHECK(ecmaregex_search(re, c->subject,
			      strlen(c->subject)) == c->is_found,
		    "%s on \"%s\": expected %s", c->pattern, c->subject,
		    c->is_found ? "a match" : "no match");
		ecmaregex_free(re);
	}
}

/* Only the n bytes given are searched: a NUL or what follows is not. */
static void
test_search_length(void)
{
	struct ecmaregex *re = NULL;
	const char *what = NULL;

	TAP_REQUIRE(ecmaregex_new("c$", &re, &what) == 0, "compile");
	TAP_CHECK(ecmaregex_search(re, "abc", 3), "c$ in abc");
	TAP_CHECK(ecmaregex_search(re, "abcd", 3),
	    "c$ in the first 3 bytes of abcd");
	TAP_CHECK(!ecmaregex_search(re, "abc", 2), "c$ in ab");
	TAP_CHECK(ecmaregex_search(re, "a\0c", 3), "c$ past a NUL");
	ecmaregex_free(re);
	ecmaregex_free(NULL);
}

/* A pattern and the feature the refusal names. */
static const struct {
	const char *pattern;
	const char *what;
} refusals[] = {
	{ "(?=a)", "lookaround" },
	{ "a(?!b)", "lookaround" },
	{ "(?<=a)b", "lookaround" },
	{ "(?<!a)b", "lookaround" },
	{ "(a)\\1", "a backreference" },
	{ "(?<n>a)\\k<n>", "this escape" },
	{ "\\p{L}", "this escape" },
	{ "\\P{Lu}", "this escape" },
	{ "[\xc3\xa9]", "this in a bracket expression" },
	{ "[\\u00e9]", "this in a bracket expression" },
	{ "[\\D]", "this in a bracket expression" },
	{ "[[:alpha:]]", "this in a bracket expression" },
	{ "[]", "an empty class" },
	{ "[^]", "an empty class" },
	{ "[z-a]", "a bracket expression" },
	{ "[abc", "a bracket expression" },
	{ "(a", "regcomp refuses it" },
	/* Read past the pattern's end before (tests/fuzz/fuzz-jsonschema). */
	{ "(?<n", "a group name without '>'" },
	{ "a(?<name)b", "a group name without '>'" },
	/* glibc's regcomp took 700 MB for "a" and 20 "+" (fuzz-jsonschema). */
	{ "a++++++++++++++++++++", "a quantifier after a quantifier" },
	{ "a{2}{2}", "a quantifier after a quantifier" },
	{ "a*?+", "a quantifier after a quantifier" },
	{ "a?*", "a quantifier after a quantifier" },
	/* regcomp copies a {n,m} body m times: nested ones multiply. */
	{ "((((((a{9}){9}){9}){9}){9}){9})",
	    "repeats that multiply past what a regex may cost" },
	{ "(a{1000}){1000}",
	    "repeats that multiply past what a regex may cost" },
	{ "(x{200}y){150}",
	    "repeats that multiply past what a regex may cost" },
	{ "[a-z]{30000}", "repeats that multiply past what a regex may cost" },
};

static void
test_refusals(void)
{
	for (size_t i = 0; i < TAP_COUNT(refusals); i++) {
		struct ecmaregex *re = NULL;
		const char *what = NULL;
		char *posix = NULL;
		int r = ecmaregex_new(refusals[i].pattern, &re, &what);

		TAP_CHECK(r == -ENOTSUP, "%s: expected -ENOTSUP, got %d",
		    refusals[i].pattern, r);
		TAP_CHECK(re == NULL, "%s: *ret_re written",
		    refusals[i].pattern);
		TAP_CHECK_STR(what, refusals[i].what);
		ecmaregex_free(re);
		/* The translation refuses all but what regcomp refuses. */
		what = NULL;
		r = ecmaregex_translate(refusals[i].pattern, &posix, &what);
		if (strcmp(refusals[i].what, "regcomp refuses it") == 0) {
			TAP_CHECK(r == 0 && posix != NULL, "%s: got %d",
			    refusals[i].pattern, r);
		} else {
			TAP_CHECK(r == -ENOTSUP && posix == NULL,
			    "%s: translated: %d", refusals[i].pattern, r);
			TAP_CHECK_STR(what, refusals[i].what);
		}
		free(posix);
	}
}

static const struct tap_test tests[] = {
	{ "patterns translate to these POSIX expressions", test_translate },
	{ "patterns match as ECMA-262 says", test_match },
	{ "a search sees only the bytes it is given", test_search_length },
	{ "what POSIX cannot express is refused, and named", test_refusals },
};

int
main(void)
{
	return tap_run(tests, TAP_COUNT(tests));
}
