/* SPDX-License-Identifier: ISC */
/* ECMA-262 patterns, as JSON Schema writes them, run by PCRE2. */
#define PCRE2_CODE_UNIT_WIDTH 8

#include <errno.h>
#include <pcre2.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ecmaregex.h"

/*
 * ECMA-262's WhiteSpace and LineTerminator, as the body of a class: tab,
 * LF, VT, FF, CR, space, U+00A0, U+1680, U+2000-U+200A, U+2028, U+2029,
 * U+202F, U+205F, U+3000 and U+FEFF, in UTF-8 (PCRE2 is in UTF mode).
 */
#define ECMA_SPACE                                                 \
	"\\t\\n\\x0b\\f\\r \xc2\xa0\xe1\x9a\x80\xe2\x80\x80-"      \
	"\xe2\x80\x8a\xe2\x80\xa8\xe2\x80\xa9\xe2\x80\xaf\xe2\x81" \
	"\x9f\xe3\x80\x80\xef\xbb\xbf"
/* What "." matches: any code point but the line terminators. */
#define ECMA_DOT "[^\\n\\r\xe2\x80\xa8\xe2\x80\xa9]"

struct ecmaregex {
	pcre2_code *code;
	pcre2_match_data *md;
	pcre2_match_context *mctx;
};

/* A growing string; a failed allocation sticks and is found at the end. */
struct ecma_out {
	char *s;
	size_t len, size;
	bool is_nomem;
};

static void
ecma_put(struct ecma_out *o, const char *s, size_t n)
{
	char *p;

	if (o->is_nomem)
		return;
	if (o->len + n + 1 > o->size) {
		size_t size = (o->len + n + 1) * 2;

		if ((p = realloc(o->s, size)) == NULL) {
			o->is_nomem = true;
			return;
		}
		o->s = p;
		o->size = size;
	}
	memcpy(o->s + o->len, s, n);
	o->len += n;
	o->s[o->len] = '\0';
}

static void
ecma_puts(struct ecma_out *o, const char *s)
{
	ecma_put(o, s, strlen(s));
}

/* The value of the 4 hex digits at p, or -1. */
static long
ecma_hex4(const char *p)
{
	long v = 0;

	for (int i = 0; i < 4; i++) {
		int c = p[i];

		if (c >= '0' && c <= '9')
			v = v * 16 + c - '0';
		else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
			v = v * 16 + (c | 0x20) - 'a' + 10;
		else
			return -1;
	}
	return v;
}

/*
 * "\uD83D\uDE00" at p (a surrogate pair, which PCRE2's UTF mode refuses)
 * as the code point's \u{...}: the bytes of p it used, or 0.
 */
static size_t
ecma_surrogates(struct ecma_out *o, const char *p)
{
	long hi = ecma_hex4(p + 2), lo;
	char buf[16];

	if (hi < 0xd800 || hi > 0xdbff || p[6] != '\\' || p[7] != 'u')
		return 0;
	lo = ecma_hex4(p + 8);
	if (lo < 0xdc00 || lo > 0xdfff)
		return 0;
	snprintf(buf, sizeof buf, "\\u{%lx}",
	    0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00));
	ecma_puts(o, buf);
	return 12;
}

/*
 * ECMA-262's long names of General_Category values (and the lower-case
 * aliases JSON Schema's suite uses) that PCRE2 10.42 knows only by their
 * short names.
 */
static const struct {
	const char *name, *pcre2;
} ecma_categories[] = {
	{ "Letter", "L" },
	{ "Cased_Letter", "L&" },
	{ "Uppercase_Letter", "Lu" },
	{ "Lowercase_Letter", "Ll" },
	{ "Titlecase_Letter", "Lt" },
	{ "Modifier_Letter", "Lm" },
	{ "Other_Letter", "Lo" },
	{ "Mark", "M" },
	{ "Combining_Mark", "M" },
	{ "Nonspacing_Mark", "Mn" },
	{ "Spacing_Mark", "Mc" },
	{ "Enclosing_Mark", "Me" },
	{ "Number", "N" },
	{ "Decimal_Number", "Nd" },
	{ "digit", "Nd" },
	{ "Letter_Number", "Nl" },
	{ "Other_Number", "No" },
	{ "Punctuation", "P" },
	{ "punct", "P" },
	{ "Connector_Punctuation", "Pc" },
	{ "Dash_Punctuation", "Pd" },
	{ "Open_Punctuation", "Ps" },
	{ "Close_Punctuation", "Pe" },
	{ "Initial_Punctuation", "Pi" },
	{ "Final_Punctuation", "Pf" },
	{ "Other_Punctuation", "Po" },
	{ "Symbol", "S" },
	{ "Math_Symbol", "Sm" },
	{ "Currency_Symbol", "Sc" },
	{ "Modifier_Symbol", "Sk" },
	{ "Other_Symbol", "So" },
	{ "Separator", "Z" },
	{ "Space_Separator", "Zs" },
	{ "Line_Separator", "Zl" },
	{ "Paragraph_Separator", "Zp" },
	{ "Other", "C" },
	{ "Control", "Cc" },
	{ "cntrl", "Cc" },
	{ "Format", "Cf" },
	{ "Surrogate", "Cs" },
	{ "Private_Use", "Co" },
	{ "Unassigned", "Cn" },
};

/*
 * \p{...} or \P{...} at p, with ECMA-262's spellings ("Letter",
 * "General_Category=Lu", "gc=Lu", "Script=Greek", "sc=Greek") in PCRE2's;
 * the bytes used, or 0 to copy it as it is.
 */
static size_t
ecma_property(struct ecma_out *o, const char *p)
{
	const char *name = p + 3, *end, *eq;
	size_t n;

	if (p[2] != '{' || (end = strchr(name, '}')) == NULL)
		return 0;
	eq = memchr(name, '=', (size_t)(end - name));
	if (eq != NULL) {
		n = (size_t)(eq - name);
		if ((n == 6 && strncmp(name, "Script", 6) == 0) ||
		    (n == 2 && strncmp(name, "sc", 2) == 0) ||
		    (n == 16 && strncmp(name, "General_Category", 16) == 0) ||
		    (n == 2 && strncmp(name, "gc", 2) == 0))
			name = eq + 1;
		else
			return 0;
	}
	n = (size_t)(end - name);
	for (size_t i = 0; i < sizeof ecma_categories / sizeof *ecma_categories;
	     i++)
		if (strlen(ecma_categories[i].name) == n &&
		    strncmp(ecma_categories[i].name, name, n) == 0) {
			name = ecma_categories[i].pcre2;
			n = strlen(name);
			break;
		}
	ecma_put(o, p, 3);
	ecma_put(o, name, n);
	ecma_puts(o, "}");
	return (size_t)(end - p) + 1;
}

/*
 * Rewrites the escape at p into o (in a class or not); the bytes used, or
 * 0 when ECMA-262 gives it no meaning. \S in a class sets *has_nonspace
 * and writes nothing: the caller adds it as an alternative.
 */
static size_t
ecma_escape(struct ecma_out *o, const char *p, bool in_class,
    bool *has_nonspace)
{
	size_t n;

	switch (p[1]) {
	case 's':
		ecma_puts(o, in_class ? ECMA_SPACE : "[" ECMA_SPACE "]");
		return 2;
	case 'S':
		if (in_class)
			*has_nonspace = true;
		else
			ecma_puts(o, "[^" ECMA_SPACE "]");
		return 2;
	case 'v':
		ecma_puts(o, "\\x0b");
		return 2;
	case 'u':
		if ((n = ecma_surrogates(o, p)) > 0)
			return n;
		break;
	case 'p':
	case 'P':
		if ((n = ecma_property(o, p)) > 0)
			return n;
		break;
	case '\0':
		ecma_put(o, p, 1); /* PCRE2 says what is wrong */
		return 1;
	}
	if (((p[1] | 0x20) >= 'a' && (p[1] | 0x20) <= 'z') &&
	    strchr("bBcdDfknpPrtuwWx", p[1]) == NULL)
		return 0;
	ecma_put(o, p, 2);
	return 2;
}

/*
 * The class at p ("[" on): rewritten into o; the bytes used, 0 with *what
 * for an escape ECMA-262 gives no meaning or a class never closed. A class with \S becomes "the
 * class or a non-space", and its negation "a character that is neither".
 */
static size_t
ecma_class(struct ecma_out *o, const char *p, const char **what)
{
	struct ecma_out body = { 0 };
	bool is_negated = p[1] == '^', has_nonspace = false;
	size_t i = is_negated ? 2 : 1, n;

	while (p[i] != '\0' && p[i] != ']') {
		if (p[i] == '\\') {
			n = ecma_escape(&body, p + i, true, &has_nonspace);
			if (n == 0) {
				*what = "an escape ECMA-262 gives no meaning";
				free(body.s);
				return 0;
			}
			i += n;
		} else {
			if (p[i] == '[')
				ecma_put(&body, "\\", 1);
			ecma_put(&body, p + i++, 1);
		}
	}
	if (p[i] != ']') {
		*what = "a class without its closing ']'";
		free(body.s);
		return 0;
	}
	if (!has_nonspace)
		ecma_puts(o, is_negated ? "[^" : "[");
	else
		ecma_puts(o, is_negated ? "(?:(?![" : "(?:[");
	ecma_put(o, body.s != NULL ? body.s : "", body.len);
	if (!has_nonspace)
		ecma_puts(o, "]");
	else
		ecma_puts(o,
		    is_negated ? "]|[^" ECMA_SPACE "])(?s:.))" :
				 "]|[^" ECMA_SPACE "])");
	o->is_nomem |= body.is_nomem;
	free(body.s);
	return i + 1;
}

/* The "(?" groups ECMA-262 has: (?: (?= (?! (?<= (?<! and (?<name>. */
static bool
ecma_group_is_known(const char *p)
{
	return p[2] == ':' || p[2] == '=' || p[2] == '!' ||
	    (p[2] == '<' && p[3] != '\0');
}

/*
 * Rewrites pattern into o (see ecmaregex.h); 0, or -EINVAL with *what and
 * *at, the offset in pattern of what ECMA-262 does not have.
 */
static int
ecma_rewrite(struct ecma_out *o, const char *pattern, const char **what,
    size_t *at)
{
	const char *p = pattern;
	bool unused;
	size_t n;

	ecma_puts(o, "");
	while (*p != '\0') {
		n = 1;
		if (*p == '\\') {
			n = ecma_escape(o, p, false, &unused);
			*what = "an escape ECMA-262 gives no meaning";
		} else if (*p == '[') {
			n = ecma_class(o, p, what);
		} else if (*p == '.') {
			ecma_puts(o, ECMA_DOT);
		} else if (p[0] == '(' && p[1] == '?' &&
		    !ecma_group_is_known(p)) {
			*what = "a \"(?\" group ECMA-262 does not have";
			n = 0;
		} else if (p[0] == '(' && p[1] == '*') {
			*what = "a \"(*\" verb, which ECMA-262 does not have";
			n = 0;
		} else {
			ecma_put(o, p, 1);
		}
		if (n == 0) {
			*at = (size_t)(p - pattern);
			return -EINVAL;
		}
		p += n;
	}
	return 0;
}

/*
 * "what (at offset N)" into *cause if asked, malloc'd; offset SIZE_MAX
 * (PCRE2's offset in a pattern the rewrite changed) is left out.
 */
static int
ecma_refuse(char **cause, const char *what, size_t offset)
{
	int r = 0;

	if (cause == NULL)
		return -EINVAL;
	if (offset == SIZE_MAX)
		r = asprintf(cause, "%s", what);
	else
		r = asprintf(cause, "%s (at offset %zu)", what, offset);
	if (r < 0)
		*cause = NULL;
	return -EINVAL;
}

/* Compiles the rewritten pattern; 0, -EINVAL with *cause, or -ENOMEM. */
static int
ecma_compile(struct ecmaregex *re, const struct ecma_out *o,
    const char *pattern, char **cause)
{
	uint32_t opts = PCRE2_UTF | PCRE2_DOLLAR_ENDONLY | PCRE2_ALT_BSUX |
	    PCRE2_ALLOW_EMPTY_CLASS | PCRE2_NEVER_UCP | PCRE2_NEVER_BACKSLASH_C;
	pcre2_compile_context *cctx = pcre2_compile_context_create(NULL);
	PCRE2_UCHAR msg[160];
	PCRE2_SIZE offset;
	int err;

	if (cctx == NULL)
		return -ENOMEM;
#ifdef PCRE2_EXTRA_ALT_BSUX
	pcre2_set_compile_extra_options(cctx, PCRE2_EXTRA_ALT_BSUX);
#endif
	re->code = pcre2_compile((PCRE2_SPTR)o->s, o->len, opts, &err, &offset,
	    cctx);
	pcre2_compile_context_free(cctx);
	if (re->code == NULL) {
		if (err == PCRE2_ERROR_HEAP_FAILED)
			return -ENOMEM;
		pcre2_get_error_message(err, msg, sizeof msg);
		return ecma_refuse(cause, (const char *)msg,
		    strcmp(o->s, pattern) == 0 ? offset : SIZE_MAX);
	}
	re->md = pcre2_match_data_create_from_pattern(re->code, NULL);
	re->mctx = pcre2_match_context_create(NULL);
	if (re->md == NULL || re->mctx == NULL)
		return -ENOMEM;
	pcre2_set_match_limit(re->mctx, ECMAREGEX_MATCH_LIMIT);
	pcre2_set_depth_limit(re->mctx, ECMAREGEX_DEPTH_LIMIT);
	pcre2_set_heap_limit(re->mctx, ECMAREGEX_HEAP_KIB);
	return 0;
}

int
ecmaregex_new(const char *pattern, struct ecmaregex **ret_re, char **cause)
{
	struct ecma_out o = { 0 };
	struct ecmaregex *re;
	const char *what = NULL;
	size_t at = 0;
	int r;

	*ret_re = NULL;
	if (cause != NULL)
		*cause = NULL;
	if ((r = ecma_rewrite(&o, pattern, &what, &at)) < 0) {
		free(o.s);
		return o.is_nomem ? -ENOMEM : ecma_refuse(cause, what, at);
	}
	if (o.is_nomem || (re = calloc(1, sizeof *re)) == NULL) {
		free(o.s);
		return -ENOMEM;
	}
	r = ecma_compile(re, &o, pattern, cause);
	free(o.s);
	if (r < 0) {
		ecmaregex_free(re);
		return r;
	}
	*ret_re = re;
	return 0;
}

int
ecmaregex_search(const struct ecmaregex *re, const char *s, size_t n)
{
	int r = pcre2_match(re->code, (PCRE2_SPTR)s, n, 0, 0, re->md, re->mctx);

	if (r >= 0)
		return 1;
	switch (r) {
	case PCRE2_ERROR_NOMATCH:
		return 0;
	case PCRE2_ERROR_MATCHLIMIT:
	case PCRE2_ERROR_DEPTHLIMIT:
	case PCRE2_ERROR_HEAPLIMIT:
		return -E2BIG;
	case PCRE2_ERROR_NOMEMORY:
		return -ENOMEM;
	default:
		return -EILSEQ; /* the UTF-8 checks' errors */
	}
}

void
ecmaregex_free(struct ecmaregex *re)
{
	if (re == NULL)
		return;
	pcre2_match_context_free(re->mctx);
	pcre2_match_data_free(re->md);
	pcre2_code_free(re->code);
	free(re);
}
