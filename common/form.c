/* SPDX-License-Identifier: ISC */
/* Percent-encoded name=value pairs: building and reading them. */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "form.h"

static bool
form_is_unreserved(unsigned char c)
{
	return isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~';
}

char *
form_encode(const char *value)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t len = strlen(value), n = 0;
	char *out = malloc(3 * len + 1);

	if (out == NULL)
		return NULL;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)value[i];

		if (form_is_unreserved(c)) {
			out[n++] = (char)c;
			continue;
		}
		out[n++] = '%';
		out[n++] = hex[c >> 4];
		out[n++] = hex[c & 15];
	}
	out[n] = '\0';
	return out;
}

int
form_add(char **buf, const char *name, const char *value)
{
	char *n, *v, *joined;
	int r;

	if (value == NULL)
		return 0;
	n = form_encode(name);
	v = form_encode(value);
	if (n == NULL || v == NULL) {
		free(n);
		free(v);
		return -ENOMEM;
	}
	r = *buf != NULL && (*buf)[0] != '\0' ?
	    asprintf(&joined, "%s&%s=%s", *buf, n, v) :
	    asprintf(&joined, "%s=%s", n, v);
	free(n);
	free(v);
	if (r < 0)
		return -ENOMEM;
	free(*buf);
	*buf = joined;
	return 0;
}

static int
form_hex(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Decodes len bytes of s into a new string; NULL if malformed. */
static char *
form_decode(const char *s, size_t len)
{
	char *out = malloc(len + 1);
	size_t n = 0;

	if (out == NULL)
		return NULL;
	for (size_t i = 0; i < len; i++) {
		int hi, lo;

		if (s[i] == '+') {
			out[n++] = ' ';
			continue;
		}
		if (s[i] != '%') {
			out[n++] = s[i];
			continue;
		}
		if (i + 2 >= len)
			goto bad;
		if ((hi = form_hex((unsigned char)s[i + 1])) < 0 ||
		    (lo = form_hex((unsigned char)s[i + 2])) < 0 ||
		    (hi == 0 && lo == 0))
			goto bad;
		out[n++] = (char)(hi << 4 | lo);
		i += 2;
	}
	out[n] = '\0';
	return out;
bad:
	free(out);
	return NULL;
}

json_t *
form_parse(const char *text)
{
	json_t *pairs = json_object(), *v;
	const char *p = text, *end, *eq;
	char *name, *value;

	if (pairs == NULL)
		return NULL;
	while (*p != '\0') {
		end = p + strcspn(p, "&");
		if (end == p) {
			p++;
			continue;
		}
		eq = memchr(p, '=', end - p);
		name = form_decode(p, (eq != NULL ? eq : end) - p);
		value = eq != NULL ? form_decode(eq + 1, end - eq - 1) :
				     strdup("");
		v = value != NULL ? json_string(value) : NULL;
		if (name == NULL || v == NULL ||
		    json_object_get(pairs, name) != NULL) {
			json_decref(v);
			v = NULL;
		}
		/* json_object_set_new takes v even when it fails. */
		if (v == NULL || json_object_set_new(pairs, name, v) < 0) {
			free(name);
			free(value);
			json_decref(pairs);
			return NULL;
		}
		free(name);
		free(value);
		p = *end == '&' ? end + 1 : end;
	}
	return pairs;
}
