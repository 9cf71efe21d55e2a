/* SPDX-License-Identifier: ISC */
/* An HTTP/1.1 request's head, parsed in place (RFC 9112). */
#include <string.h>
#include <strings.h>

#include "httphead.h"

size_t
httphead_end(const char *text, size_t len, size_t from)
{
	const char *p, *end = text + len;

	/* An end is "\n\n" or "\n\r\n": look from a little before from. */
	p = text + (from > 2 ? from - 2 : 0);
	while (p < end && (p = memchr(p, '\n', (size_t)(end - p))) != NULL) {
		if (p + 1 < end && p[1] == '\n')
			return (size_t)(p + 2 - text);
		if (p + 2 < end && p[1] == '\r' && p[2] == '\n')
			return (size_t)(p + 3 - text);
		p++;
	}
	return 0;
}

/* RFC 9110 5.6.2: a token's characters. */
static const bool httphead_tchars[256] = {
	['0' ... '9'] = true,
	['A' ... 'Z'] = true,
	['a' ... 'z'] = true,
	['!'] = true,
	['#'] = true,
	['$'] = true,
	['%'] = true,
	['&'] = true,
	['\''] = true,
	['*'] = true,
	['+'] = true,
	['-'] = true,
	['.'] = true,
	['^'] = true,
	['_'] = true,
	['`'] = true,
	['|'] = true,
	['~'] = true,
};

static bool
httphead_is_tchar(unsigned char c)
{
	return httphead_tchars[c];
}

/* Bytes a line's scan stops at: every control character but HT, and DEL. */
static const unsigned char httphead_stops[256] = {
	[0x00 ... 0x08] = 1,
	[0x0a ... 0x1f] = 1,
	[0x7f] = 1,
};

/*
 * The next line of s, ended by "\n" or "\r\n" and NUL-terminated in place;
 * *s moves past it. NULL when a CR is not followed by LF, or a control
 * character other than HT is in it.
 */
static char *
httphead_line(char **s)
{
	char *line = *s, *p = line;

	while (!httphead_stops[(unsigned char)*p])
		p++;
	if (*p == '\r' && p[1] == '\n')
		*p++ = '\0';
	else if (*p != '\n')
		return NULL;
	*p = '\0';
	*s = p + 1;
	return line;
}

static enum httphead_method
httphead_method(const char *m, size_t len)
{
	if (len == 3 && memcmp(m, "GET", 3) == 0)
		return HTTPHEAD_GET;
	if (len == 4 && memcmp(m, "POST", 4) == 0)
		return HTTPHEAD_POST;
	if (len == 6 && memcmp(m, "DELETE", 6) == 0)
		return HTTPHEAD_DELETE;
	return HTTPHEAD_OTHER;
}

/* origin-form "/path?query", or absolute-form "scheme://host/path". */
static const char *
httphead_path(char *target)
{
	char *p = target, *q;

	if (*p != '/') {
		if ((q = strstr(p, "://")) == NULL || q == p)
			return NULL;
		for (char *s = p; s < q; s++)
			if (!httphead_is_tchar((unsigned char)*s))
				return NULL;
		p = q + 3 + strcspn(q + 3, "/?#");
		if (*p != '/')
			return "/"; /* "http://host", "http://host?q" are "/" */
	}
	p[strcspn(p, "?#")] = '\0';
	return p;
}

/* "METHOD SP target SP HTTP/1.x", nothing looser. */
static int
httphead_request_line(char *line, struct httphead *h)
{
	char *sp1, *sp2, *v;

	if ((sp1 = strchr(line, ' ')) == NULL || sp1 == line ||
	    (sp2 = strchr(sp1 + 1, ' ')) == NULL || sp2 == sp1 + 1)
		return 400;
	for (char *s = line; s < sp1; s++)
		if (!httphead_is_tchar((unsigned char)*s))
			return 400;
	v = sp2 + 1;
	if (strncmp(v, "HTTP/", 5) != 0 || v[5] < '0' || v[5] > '9' ||
	    v[6] != '.' || v[7] < '0' || v[7] > '9' || v[8] != '\0')
		return 400;
	if (v[5] != '1')
		return 505;
	h->method = httphead_method(line, (size_t)(sp1 - line));
	h->minor = v[7] == '0' ? 0 : 1;
	*sp2 = '\0';
	if (strpbrk(sp1 + 1, " \t") != NULL ||
	    (h->path = httphead_path(sp1 + 1)) == NULL)
		return 400;
	return 0;
}

/* "name: value" with optional white space around the value. */
static int
httphead_field_line(char *line, struct httphead *h)
{
	char *colon = strchr(line, ':'), *v, *end;

	if (colon == NULL || colon == line)
		return 400; /* and a continuation line (obs-fold) too */
	for (char *s = line; s < colon; s++)
		if (!httphead_is_tchar((unsigned char)*s))
			return 400;
	if (h->nfields >= HTTPHEAD_HEADERS_MAX)
		return 431;
	*colon = '\0';
	for (v = colon + 1; *v == ' ' || *v == '\t'; v++)
		;
	end = v + strlen(v);
	while (end > v && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	*end = '\0';
	h->fields[h->nfields++] = (struct httphead_field){ line, v,
		(size_t)(colon - line) };
	return 0;
}

int
httphead_parse(char *text, size_t len, struct httphead *h)
{
	char *s = text, *line;
	int r;

	memset(h, 0, offsetof(struct httphead, fields));
	if (len < 2 || text[len - 1] != '\n')
		return 400;
	/* RFC 9112 2.2: empty lines before the request line are ignored. */
	while (s < text + len && (*s == '\n' || (*s == '\r' && s[1] == '\n')))
		s += *s == '\n' ? 1 : 2;
	if (s >= text + len || (line = httphead_line(&s)) == NULL)
		return 400;
	if ((r = httphead_request_line(line, h)) != 0)
		return r;
	for (;;) {
		if (s >= text + len || (line = httphead_line(&s)) == NULL)
			return 400;
		if (*line == '\0')
			return s == text + len ? 0 : 400;
		if ((r = httphead_field_line(line, h)) != 0)
			return r;
	}
}

const char *
httphead_field(const struct httphead *h, const char *name)
{
	size_t len = strlen(name);

	for (size_t i = 0; i < h->nfields; i++)
		if (h->fields[i].name_len == len &&
		    strncasecmp(h->fields[i].name, name, len) == 0)
			return h->fields[i].value;
	return NULL;
}

/* Whether the comma-separated list value has token (any case). */
static bool
httphead_list_has(const char *value, const char *token)
{
	size_t n = strlen(token), len;

	while (value != NULL && *value != '\0') {
		value += strspn(value, " \t,");
		len = strcspn(value, ",");
		while (len > 0 &&
		    (value[len - 1] == ' ' || value[len - 1] == '\t'))
			len--;
		if (len == n && strncasecmp(value, token, n) == 0)
			return true;
		value += strcspn(value, ",");
	}
	return false;
}

/*
 * Whether any field named name (any case) lists token: a list may come
 * in several fields, as one joined with commas (RFC 9110 5.3).
 */
static bool
httphead_fields_list(const struct httphead *h, const char *name,
    const char *token)
{
	size_t len = strlen(name);

	for (size_t i = 0; i < h->nfields; i++)
		if (h->fields[i].name_len == len &&
		    strncasecmp(h->fields[i].name, name, len) == 0 &&
		    httphead_list_has(h->fields[i].value, token))
			return true;
	return false;
}

/* A Content-Length: digits only, at most max. */
static int
httphead_length(const char *v, size_t max, size_t *ret)
{
	size_t n = 0;

	if (*v == '\0')
		return 400;
	for (; *v != '\0'; v++) {
		if (*v < '0' || *v > '9')
			return 400;
		if (n > max / 10 ||
		    (n == max / 10 && (size_t)(*v - '0') > max % 10))
			return 413; /* over, and no overflow on the way */
		n = n * 10 + (size_t)(*v - '0');
	}
	*ret = n;
	return 0;
}

int
httphead_body(const struct httphead *h, size_t max, size_t *ret_len,
    bool *ret_chunked)
{
	const char *te = NULL, *cl = NULL;
	size_t len = 0;
	int r;

	for (size_t i = 0; i < h->nfields; i++) {
		const struct httphead_field *f = &h->fields[i];

		if (f->name_len == 17 &&
		    strcasecmp(f->name, "Transfer-Encoding") == 0) {
			if (te != NULL)
				return 501;
			te = f->value;
		} else if (f->name_len == 14 &&
		    strcasecmp(f->name, "Content-Length") == 0) {
			/* Two lengths, or one with chunked: smuggling's way. */
			if (cl != NULL)
				return 400;
			cl = f->value;
		}
	}
	if (te != NULL && (cl != NULL || h->minor == 0))
		return 400;
	if (te != NULL) {
		if (strcasecmp(te, "chunked") != 0)
			return 501;
	} else if (cl != NULL && (r = httphead_length(cl, max, &len)) != 0)
		return r;
	*ret_len = len;
	*ret_chunked = te != NULL;
	return 0;
}

bool
httphead_keeps_alive(const struct httphead *h)
{
	if (h->minor == 0)
		return httphead_fields_list(h, "Connection", "keep-alive");
	return !httphead_fields_list(h, "Connection", "close");
}

bool
httphead_expects_continue(const struct httphead *h)
{
	return h->minor >= 1 &&
	    httphead_fields_list(h, "Expect", "100-continue");
}

int
httphead_chunk_size(const char *line, size_t len, size_t max, size_t *ret)
{
	size_t n = 0, i;
	int d;

	for (i = 0; i < len; i++) {
		char c = line[i];

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			break;
		if (n > max / 16 || (n == max / 16 && (size_t)d > max % 16))
			return -1;
		n = n * 16 + (size_t)d;
	}
	/* Digits, then optional white space, then extensions after ';'. */
	while (i > 0 && i < len && (line[i] == ' ' || line[i] == '\t'))
		i++;
	if (i == 0 || (i < len && line[i] != ';'))
		return -1;
	*ret = n;
	return 0;
}
