/* SPDX-License-Identifier: ISC */
/* ECMA-262 patterns translated to POSIX extended expressions, and run. */
#include <ctype.h>
#include <errno.h>
#include <regex.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ecmaregex.h"

#define ECMAREGEX_MAX_SIZE  20000 /* atoms once {n,m} are expanded */
#define ECMAREGEX_MAX_DEPTH 64	  /* groups within groups */

struct ecmaregex {
	regex_t re;
};

/*
 * The expressions run on bytes: what matches "any character but" matches
 * a whole UTF-8 sequence (a lead byte, then continuation bytes).
 */
#define ECMAREGEX_UTF8_TAIL "\x80-\xbf"
#define ECMAREGEX_UTF8_REST "[" ECMAREGEX_UTF8_TAIL "]*)"
#define ECMAREGEX_UTF8_DOT  "([^\n\r" ECMAREGEX_UTF8_TAIL "]" ECMAREGEX_UTF8_REST

/* Bracket-expression contents for the class escapes \d \w \s. */
static const char *
ecmaregex_class(char c)
{
	switch (c) {
	case 'd':
		return "0-9";
	case 'w':
		return "A-Za-z0-9_";
	case 's':
		return "[:space:]";
	}
	return NULL;
}

static long
ecmaregex_hex(const char *s, int n)
{
	char buf[5] = { 0 };

	for (int i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return -1;
	memcpy(buf, s, n);
	return strtol(buf, NULL, 16);
}

/* The code point of the character escape after a backslash (\t, \cC, \x41,
 * \u00e9, \. ...), or -1; *len is how long it is. */
static long
ecmaregex_char(const char *s, size_t *len)
{
	static const char controls[] = "t\tn\nr\rf\fv\v";
	const char *c = *s != '\0' ? strchr(controls, *s) : NULL;
	long cp, lo;

	*len = 1;
	if (c != NULL && (c - controls) % 2 == 0)
		return c[1];
	if (s[0] == 'c' && isalpha((unsigned char)s[1]))
		return *len = 2, s[1] % 32;
	if (s[0] == 'x' && (cp = ecmaregex_hex(s + 1, 2)) >= 0)
		return *len = 3, cp;
	if (s[0] != 'u' || (cp = ecmaregex_hex(s + 1, 4)) < 0)
		return ispunct((unsigned char)s[0]) ? s[0] : -1;
	*len = 5;
	if (cp >= 0xd800 && cp < 0xdc00 && strncmp(s + 5, "\\u", 2) == 0 &&
	    (lo = ecmaregex_hex(s + 7, 4)) >= 0xdc00 && lo < 0xe000) {
		*len = 11;
		cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
	}
	return cp;
}

/* Writes code point cp to match itself: escaped when special, a group of
 * its UTF-8 bytes when it has more than one. */
static void
ecmaregex_literal(FILE *f, long cp)
{
	if (cp < 0x80) {
		if (strchr(".[]()*+?{}|^$\\", (int)cp) != NULL)
			fputc('\\', f);
		fputc((int)cp, f);
	} else if (cp < 0x800)
		fprintf(f, "(%c%c)", (int)(0xc0 | cp >> 6),
		    (int)(0x80 | (cp & 0x3f)));
	else if (cp < 0x10000)
		fprintf(f, "(%c%c%c)", (int)(0xe0 | cp >> 12),
		    (int)(0x80 | (cp >> 6 & 0x3f)), (int)(0x80 | (cp & 0x3f)));
	else
		fprintf(f, "(%c%c%c%c)", (int)(0xf0 | cp >> 18),
		    (int)(0x80 | (cp >> 12 & 0x3f)),
		    (int)(0x80 | (cp >> 6 & 0x3f)), (int)(0x80 | (cp & 0x3f)));
}

/* One member of a bracket expression: its code point, -2 for a class
 * written to f, or -1 (and *what) for what POSIX brackets cannot hold. */
static long
ecmaregex_member(const char **sp, FILE *f, const char **what)
{
	const char *s = *sp, *cls;
	size_t len = 0;
	long cp = (unsigned char)*s;

	if (*s == '\\' && (cls = ecmaregex_class(s[1])) != NULL) {
		fputs(cls, f);
		*sp += 2;
		return -2;
	}
	if (*s == '\\')
		cp = s[1] == 'b' ? '\b' : ecmaregex_char(s + 1, &len);
	*sp += 1 + len;
	if (cp <= 0 || cp >= 0x80 ||
	    (cp == '[' && **sp != '\0' && strchr(":.=", **sp) != NULL)) {
		*what = "this in a bracket expression";
		return -1;
	}
	return cp;
}

/* Writes a bracket expression: "]" first, "-" first or last, "^" not
 * first; a negated one takes a whole UTF-8 sequence. */
static void
ecmaregex_bracket_write(FILE *out, bool is_negated, const char *body,
    const bool has[128])
{
	bool is_dash_first = has['-'] && !has[']'];

	if (!is_negated && !has[']'] && !has['-'] && *body == '\0') {
		fputs("\\^", out); /* only "^" */
		return;
	}
	fprintf(out, "%s[%s%s%s%s%s%s%s]%s", is_negated ? "(" : "",
	    is_negated ? "^" : "", has[']'] ? "]" : "",
	    is_dash_first ? "-" : "", is_negated ? ECMAREGEX_UTF8_TAIL : "",
	    body, has['^'] ? "^" : "", has['-'] && !is_dash_first ? "-" : "",
	    is_negated ? ECMAREGEX_UTF8_REST : "");
}

/* Translates the bracket expression at *sp. */
static int
ecmaregex_bracket(const char **sp, FILE *out, const char **what)
{
	const char *s = *sp + 1;
	bool is_negated = *s == '^', has[128] = { false };
	char *body = NULL;
	size_t len;
	long cp = 0, hi;
	FILE *f;

	s += is_negated;
	*what = *s == ']' ? "an empty class" : "a bracket expression";
	if (*s == ']')
		return -ENOTSUP;
	if ((f = open_memstream(&body, &len)) == NULL)
		return -ENOMEM;
	while (*s != ']' && *s != '\0' && cp != -1) {
		if ((cp = ecmaregex_member(&s, f, what)) < 0)
			continue;
		if (s[0] == '-' && s[1] != ']' && s[1] != '\0') {
			s++;
			if ((hi = ecmaregex_member(&s, f, what)) < cp)
				cp = -1;
			else
				fprintf(f, "%c-%c", (int)cp, (int)hi);
		} else if (strchr("]-^", (int)cp) != NULL)
			has[cp] = true;
		else
			fputc((int)cp, f);
	}
	if (fclose(f) != 0) {
		free(body);
		return -ENOMEM;
	}
	if (*s != ']' || cp == -1) {
		free(body);
		return -ENOTSUP;
	}
	ecmaregex_bracket_write(out, is_negated, body, has);
	free(body);
	*sp = s + 1;
	return 0;
}

/* Translates the escape at *sp (a backslash) outside brackets. */
static int
ecmaregex_escape(const char **sp, FILE *out, const char **what)
{
	const char *s = *sp;
	const char *cls = ecmaregex_class(tolower((unsigned char)s[1]));
	size_t len = 1;
	long cp;

	if (cls != NULL && islower((unsigned char)s[1]))
		fprintf(out, "[%s]", cls);
	else if (cls != NULL)
		fprintf(out,
		    "([^%s" ECMAREGEX_UTF8_TAIL "]" ECMAREGEX_UTF8_REST, cls);
	else if (s[1] == 'b' || s[1] == 'B')
		fprintf(out, "\\%c", s[1]); /* a GNU extension */
	else if ((cp = ecmaregex_char(s + 1, &len)) > 0)
		ecmaregex_literal(out, cp);
	else {
		*what = s[1] >= '1' && s[1] <= '9' ? "a backreference" :
						     "this escape";
		return -ENOTSUP;
	}
	*sp = s + 1 + len;
	return 0;
}

/* The length of a {n}, {n,} or {n,m} quantifier at s, or 0. */
static size_t
ecmaregex_braces(const char *s)
{
	size_t n;

	if (s[0] != '{')
		return 0;
	if ((n = strspn(s + 1, "0123456789")) == 0)
		return 0;
	if (s[1 + n] == ',')
		n += 1 + strspn(s + 2 + n, "0123456789");
	return s[1 + n] == '}' ? n + 2 : 0;
}

/*
 * Whether regcomp would build more than ECMAREGEX_MAX_SIZE atoms: it copies
 * the body of {n,m} m times, so nested repeats multiply ("(a{1000}){1000}"
 * took 205 MB). Counted roughly: an atom is 1, a group the sum of its
 * atoms, a quantifier multiplies what it follows by its largest count (2
 * for *, + and ?).
 */
static bool
ecmaregex_is_too_big(const char *s)
{
	double sum[ECMAREGEX_MAX_DEPTH + 1] = { 0 },
					 last[ECMAREGEX_MAX_DEPTH + 1] = { 0 };
	double k, g;
	unsigned long lo, hi;
	char *end;
	size_t n;
	int d = 0;

	while (*s != '\0') {
		if ((n = ecmaregex_braces(s)) > 0) {
			lo = strtoul(s + 1, &end, 10);
			hi = *end == ',' && end[1] != '}' ?
			    strtoul(end + 1, NULL, 10) :
			    lo + (*end == ',');
			k = (double)(hi > lo ? hi : lo);
			sum[d] += last[d] * (k - 1);
			last[d] *= k;
			s += n;
		} else if (strchr("*+?", *s) != NULL) {
			sum[d] += last[d];
			last[d] *= 2;
			s++;
		} else if (*s == '(') {
			if (d == ECMAREGEX_MAX_DEPTH)
				return true;
			d++;
			sum[d] = last[d] = 0;
			s++;
		} else if (*s == ')' && d > 0) {
			g = sum[d--];
			sum[d] += g;
			last[d] = g;
			s++;
		} else {
			/* An atom: a character, an escape, a bracket class. */
			if (*s == '\\' && s[1] != '\0')
				s++;
			else if (*s == '[')
				while (s[1] != '\0' && s[1] != ']')
					s += 1 + (s[1] == '\\' && s[2] != '\0');
			sum[d] += 1;
			last[d] = 1;
			s++;
		}
		if (sum[d] > ECMAREGEX_MAX_SIZE)
			return true;
	}
	while (d > 0) {
		g = sum[d--];
		sum[d] += g;
	}
	return sum[0] > ECMAREGEX_MAX_SIZE;
}

/* Translates pattern s to out; -ENOTSUP with *what naming a feature. */
static int
ecmaregex_translate_to(const char *s, FILE *out, const char **what)
{
	bool was_quantifier = false, is_quantifier;
	size_t n;
	int r = 0;

	while (*s != '\0' && r == 0) {
		/*
		 * "a++" and "a{2}{2}" are syntax errors in ECMA-262, and glibc's
		 * regcomp takes memory exponential in such a stack (20 "+" take
		 * 700 MB): refused.
		 */
		is_quantifier = strchr("*+?", *s) != NULL ||
		    ecmaregex_braces(s) > 0;
		if (is_quantifier && was_quantifier) {
			*what = "a quantifier after a quantifier";
			return -ENOTSUP;
		}
		was_quantifier = is_quantifier;
		if (*s == '\\')
			r = ecmaregex_escape(&s, out, what);
		else if (*s == '[')
			r = ecmaregex_bracket(&s, out, what);
		else if (strncmp(s, "(?<", 3) == 0 &&
		    isalpha((unsigned char)s[3]) && strchr(s, '>') == NULL) {
			*what = "a group name without '>'";
			r = -ENOTSUP;
		} else if (strncmp(s, "(?:", 3) == 0 ||
		    (strncmp(s, "(?<", 3) == 0 &&
			isalpha((unsigned char)s[3]))) {
			fputc('(', out); /* a group without a name */
			s = s[2] == ':' ? s + 3 : strchr(s, '>') + 1;
		} else if (strncmp(s, "(?", 2) == 0) {
			*what = "lookaround";
			r = -ENOTSUP;
		} else if ((n = ecmaregex_braces(s)) > 0) {
			fprintf(out, "%.*s", (int)n, s);
			s += n + (s[n] == '?'); /* lazy matches the same */
		} else if (*s == '{' || *s == '}')
			fprintf(out, "\\%c", *s++);
		else if (*s == '.') {
			fputs(ECMAREGEX_UTF8_DOT, out);
			s++;
		} else if ((unsigned char)*s >= 0xc0) {
			n = 2 + ((unsigned char)*s >= 0xe0) +
			    ((unsigned char)*s >= 0xf0);
			fprintf(out, "(%.*s)", (int)n, s);
			s += n;
		} else {
			fputc(*s, out);
			s += 1 + (strchr("*+?", *s) != NULL && s[1] == '?');
		}
	}
	return r;
}

int
ecmaregex_translate(const char *pattern, char **ret_posix, const char **what)
{
	char *posix = NULL;
	size_t len;
	FILE *f;
	int r;

	if ((f = open_memstream(&posix, &len)) == NULL)
		return -ENOMEM;
	r = ecmaregex_translate_to(pattern, f, what);
	if (fclose(f) != 0)
		r = -ENOMEM;
	if (r == 0 && ecmaregex_is_too_big(pattern)) {
		*what = "repeats that multiply past what a regex may cost";
		r = -ENOTSUP;
	}
	if (r < 0) {
		free(posix);
		return r;
	}
	*ret_posix = posix;
	return 0;
}

int
ecmaregex_new(const char *pattern, struct ecmaregex **ret_re, const char **what)
{
	const char *why = "regcomp refuses it";
	struct ecmaregex *re;
	char *posix;
	int r;

	if ((r = ecmaregex_translate(pattern, &posix, &why)) == 0) {
		if ((re = calloc(1, sizeof *re)) == NULL)
			r = -ENOMEM;
		else if (regcomp(&re->re, posix, REG_EXTENDED | REG_NOSUB) !=
		    0) {
			free(re);
			r = -ENOTSUP;
		} else
			*ret_re = re;
		free(posix);
	}
	if (r == -ENOTSUP)
		*what = why;
	return r;
}

#ifdef REG_STARTEND
bool
ecmaregex_search(const struct ecmaregex *re, const char *s, size_t n)
{
	regmatch_t m = { .rm_so = 0, .rm_eo = (regoff_t)n };

	return regexec(&re->re, s, 1, &m, REG_STARTEND) == 0;
}
#else
/*
 * A C library without REG_STARTEND (musl, for mcpctl with MUSL=1)
 * matches a copy ending in a NUL: a string with a NUL in it is matched up
 * to its first one.
 */
bool
ecmaregex_search(const struct ecmaregex *re, const char *s, size_t n)
{
	char *copy = strndup(s, n);
	bool is_found = copy != NULL && regexec(&re->re, copy, 0, NULL, 0) == 0;

	free(copy);
	return is_found;
}
#endif

void
ecmaregex_free(struct ecmaregex *re)
{
	if (re == NULL)
		return;
	regfree(&re->re);
	free(re);
}
