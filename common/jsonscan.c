/* SPDX-License-Identifier: ISC */
/* A validating JSON scanner: one pass, no allocation, spans of members. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "jsonscan.h"

#define JSONSCAN_DIGITS_MAX 18 /* before the point: below 2^63 */

struct jsonscan {
	const unsigned char *p;
	const unsigned char *end;
	int depth;
	bool is_closed; /* a noted object's key not among its members fails */
	size_t in;	/* the top-level member whose object's are noted too */
	struct jsonscan_member *sub; /* NULL: none */
	size_t nsub;
};

static int jsonscan_value(struct jsonscan *);

/* Bytes a string holds as they are: printable ASCII but " and \. */
static const bool jsonscan_plain[256] = { [' '] = true,
	['!'] = true,
	['#' ... '['] = true,
	[']' ... 0x7f] = true };

static void
jsonscan_space(struct jsonscan *s)
{
	while (s->p < s->end &&
	    (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
		s->p++;
}

static bool
jsonscan_is_hex(unsigned char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
	    (c >= 'A' && c <= 'F');
}

/* One UTF-8 sequence of 2 to 4 bytes: no overlong form, no surrogate. */
static int
jsonscan_utf8(struct jsonscan *s)
{
	const unsigned char *p = s->p;
	unsigned char c = *p;
	size_t n = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
	unsigned char lo = 0x80, hi = 0xbf;

	if (c < 0xc2 || c > 0xf4 || (size_t)(s->end - p) < n)
		return -EINVAL;
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (p[1] < lo || p[1] > hi)
		return -EINVAL;
	for (size_t i = 2; i < n; i++)
		if (p[i] < 0x80 || p[i] > 0xbf)
			return -EINVAL;
	s->p += n;
	return 0;
}

/* The code unit of "\\uXXXX" at p (p[0] is the "u"), or -1. */
static long
jsonscan_unit(const unsigned char *p, const unsigned char *end)
{
	char hex[5];

	if (end - p < 5 || p[0] != 'u' || !jsonscan_is_hex(p[1]) ||
	    !jsonscan_is_hex(p[2]) || !jsonscan_is_hex(p[3]) ||
	    !jsonscan_is_hex(p[4]))
		return -1;
	memcpy(hex, p + 1, 4);
	hex[4] = '\0';
	return strtol(hex, NULL, 16);
}

/*
 * An escape. \u0000 and a surrogate that is not half of a pair are valid
 * JSON text, but jansson refuses them: they are left to the parser.
 */
static int
jsonscan_escape(struct jsonscan *s, bool *has_escape)
{
	long unit, low;

	*has_escape = true;
	if (++s->p >= s->end)
		return -EINVAL;
	if (*s->p == 'u') {
		if ((unit = jsonscan_unit(s->p, s->end)) <= 0 ||
		    (unit >= 0xdc00 && unit <= 0xdfff))
			return -EINVAL;
		s->p += 5;
		if (unit >= 0xd800 && unit <= 0xdbff) {
			if (s->end - s->p < 2 || s->p[0] != '\\' ||
			    (low = jsonscan_unit(s->p + 1, s->end)) < 0xdc00 ||
			    low > 0xdfff)
				return -EINVAL;
			s->p += 6;
		}
		return 0;
	}
	if (strchr("\"\\/bfnrt", *s->p) == NULL || *s->p == '\0')
		return -EINVAL;
	s->p++;
	return 0;
}

/* A string; *has_escape says whether its raw bytes are its value. */
static int
jsonscan_string(struct jsonscan *s, bool *has_escape)
{
	const unsigned char *p;

	*has_escape = false;
	s->p++; /* the opening quote */
	while (s->p < s->end) {
		unsigned char c;

		/* The common bytes first, in a tight loop: a load a byte. */
		for (p = s->p; p < s->end && jsonscan_plain[*p]; p++)
			;
		if ((s->p = p) == s->end)
			break;
		c = *p;

		if (c == '"') {
			s->p++;
			return 0;
		}
		if (c < 0x20)
			return -EINVAL;
		if (c == '\\') {
			if (jsonscan_escape(s, has_escape) < 0)
				return -EINVAL;
		} else if (c >= 0x80) {
			if (jsonscan_utf8(s) < 0)
				return -EINVAL;
		} else
			s->p++;
	}
	return -EINVAL;
}

static size_t
jsonscan_digits(struct jsonscan *s)
{
	const unsigned char *start = s->p;

	while (s->p < s->end && *s->p >= '0' && *s->p <= '9')
		s->p++;
	return s->p - start;
}

/*
 * A number. jansson refuses integers beyond 64 bits and reals beyond the
 * range of a double: numbers that might be either (more than 18 digits
 * before the point, an exponent of more than 2 digits) are left to it.
 */
static int
jsonscan_number(struct jsonscan *s)
{
	const unsigned char *exp;
	size_t n;

	if (*s->p == '-')
		s->p++;
	if (s->p < s->end && *s->p == '0')
		s->p++;
	else if ((n = jsonscan_digits(s)) == 0 || n > JSONSCAN_DIGITS_MAX)
		return -EINVAL;
	if (s->p < s->end && *s->p == '.') {
		s->p++;
		if (jsonscan_digits(s) == 0)
			return -EINVAL;
	}
	if (s->p < s->end && (*s->p == 'e' || *s->p == 'E')) {
		s->p++;
		if (s->p < s->end && (*s->p == '+' || *s->p == '-'))
			s->p++;
		exp = s->p;
		if ((n = jsonscan_digits(s)) == 0)
			return -EINVAL;
		while (n > 0 && *exp == '0')
			exp++, n--;
		if (n > 2)
			return -EINVAL;
	}
	return 0;
}

static int
jsonscan_literal(struct jsonscan *s, const char *word)
{
	size_t n = strlen(word);

	if ((size_t)(s->end - s->p) < n || memcmp(s->p, word, n) != 0)
		return -EINVAL;
	s->p += n;
	return 0;
}

static int
jsonscan_array(struct jsonscan *s)
{
	s->p++;
	jsonscan_space(s);
	if (s->p < s->end && *s->p == ']') {
		s->p++;
		return 0;
	}
	for (;;) {
		if (jsonscan_value(s) < 0)
			return -EINVAL;
		jsonscan_space(s);
		if (s->p >= s->end)
			return -EINVAL;
		if (*s->p++ == ']')
			return 0;
		if (s->p[-1] != ',')
			return -EINVAL;
	}
}

/* The index in m of the member named key, or n when none is. */
static size_t
jsonscan_find(const unsigned char *key, size_t keylen,
    const struct jsonscan_member *m, size_t n)
{
	size_t i;

	/* A key holds no NUL: strncmp stops at the end of a shorter one. */
	for (i = 0; i < n; i++)
		if (m[i].key[0] == (keylen > 0 ? (char)key[0] : '\0') &&
		    strncmp(m[i].key, (const char *)key, keylen) == 0 &&
		    m[i].key[keylen] == '\0')
			break;
	return i;
}

static int jsonscan_members(struct jsonscan *, const unsigned char *,
    struct jsonscan_member *, size_t);

/*
 * The value of a noted member: the object of member s->in has its own
 * members noted in s->sub, in the same pass (a repeated key: the last).
 */
static int
jsonscan_noted_value(struct jsonscan *s, const unsigned char *base, size_t i)
{
	struct jsonscan_member *sub = s->sub;
	size_t nsub = s->nsub;
	int r;

	if (sub == NULL || i != s->in)
		return jsonscan_value(s);
	for (size_t j = 0; j < nsub; j++) /* an earlier one's go */
		sub[j].is_found = false;
	if (*s->p != '{')
		return jsonscan_value(s);
	if (++s->depth > JSONSCAN_DEPTH)
		return -EINVAL;
	s->sub = NULL; /* one level down only */
	r = jsonscan_members(s, base, sub, nsub);
	s->sub = sub;
	s->depth--;
	return r;
}

/* An object; members are noted only for one that has them (m != NULL). */
static int
jsonscan_members(struct jsonscan *s, const unsigned char *base,
    struct jsonscan_member *m, size_t n)
{
	const unsigned char *key, *value;
	size_t keylen, i = 0;
	bool has_escape;

	s->p++;
	jsonscan_space(s);
	if (s->p < s->end && *s->p == '}') {
		s->p++;
		return 0;
	}
	for (;;) {
		jsonscan_space(s);
		if (s->p >= s->end || *s->p != '"')
			return -EINVAL;
		key = s->p + 1;
		if (jsonscan_string(s, &has_escape) < 0)
			return -EINVAL;
		keylen = s->p - 1 - key;
		if (has_escape && m != NULL)
			return -EINVAL; /* leave odd keys to the parser */
		jsonscan_space(s);
		if (s->p >= s->end || *s->p++ != ':')
			return -EINVAL;
		jsonscan_space(s);
		value = s->p;
		if (m != NULL) {
			i = jsonscan_find(key, keylen, m, n);
			if (i == n && s->is_closed)
				return -EINVAL;
		}
		if (s->p >= s->end ||
		    (m != NULL && i < n ? jsonscan_noted_value(s, base, i) :
					  jsonscan_value(s)) < 0)
			return -EINVAL;
		if (m != NULL && i < n) {
			m[i].is_found = true;
			m[i].off = value - base;
			m[i].len = s->p - value;
		}
		jsonscan_space(s);
		if (s->p >= s->end)
			return -EINVAL;
		if (*s->p++ == '}')
			return 0;
		if (s->p[-1] != ',')
			return -EINVAL;
	}
}

static int
jsonscan_value(struct jsonscan *s)
{
	bool has_escape;
	int r;

	jsonscan_space(s);
	if (s->p >= s->end)
		return -EINVAL;
	switch (*s->p) {
	case '{':
	case '[':
		if (++s->depth > JSONSCAN_DEPTH)
			return -EINVAL;
		r = *s->p == '{' ? jsonscan_members(s, NULL, NULL, 0) :
				   jsonscan_array(s);
		s->depth--;
		return r;
	case '"':
		return jsonscan_string(s, &has_escape);
	case 't':
		return jsonscan_literal(s, "true");
	case 'f':
		return jsonscan_literal(s, "false");
	case 'n':
		return jsonscan_literal(s, "null");
	default:
		if (*s->p == '-' || (*s->p >= '0' && *s->p <= '9'))
			return jsonscan_number(s);
		return -EINVAL;
	}
}

static int
jsonscan_top(const char *text, size_t len, struct jsonscan_member *members,
    size_t nmembers, bool is_closed)
{
	return jsonscan_object_in(text, len, members, nmembers, is_closed,
	    nmembers, NULL, 0);
}

int
jsonscan_object(const char *text, size_t len, struct jsonscan_member *members,
    size_t nmembers)
{
	return jsonscan_top(text, len, members, nmembers, false);
}

int
jsonscan_object_of(const char *text, size_t len,
    struct jsonscan_member *members, size_t nmembers)
{
	return jsonscan_top(text, len, members, nmembers, true);
}

int
jsonscan_object_in(const char *text, size_t len,
    struct jsonscan_member *members, size_t nmembers, bool is_closed, size_t in,
    struct jsonscan_member *sub, size_t nsub)
{
	struct jsonscan s = { (const unsigned char *)text,
		(const unsigned char *)text + len, 1, is_closed, in, sub,
		nsub };

	for (size_t i = 0; i < nmembers; i++)
		members[i].is_found = false;
	for (size_t i = 0; i < nsub; i++)
		sub[i].is_found = false;
	jsonscan_space(&s);
	if (s.p >= s.end || *s.p != '{' ||
	    jsonscan_members(&s, (const unsigned char *)text, members,
		nmembers) < 0)
		return -EINVAL;
	jsonscan_space(&s);
	return s.p == s.end ? 0 : -EINVAL;
}
