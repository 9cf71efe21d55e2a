/* SPDX-License-Identifier: ISC */
/* URI reference resolution (RFC 3986) and JSON pointer token decoding. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "uriref.h"

/* A part of a URI reference: where it starts and how long it is. */
struct uriref_span {
	const char *p; /* NULL: the part is absent */
	int n;
};

struct uriref {
	struct uriref_span scheme, authority, path, query, fragment;
};

static struct uriref_span
uriref_span(const char **s, const char *stop)
{
	struct uriref_span sp = { *s, (int)strcspn(*s, stop) };

	*s += sp.n;
	return sp;
}

static void
uriref_parse(const char *s, struct uriref *u)
{
	size_t n = strspn(s,
	    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+-.");

	memset(u, 0, sizeof *u);
	if (n > 0 && isalpha((unsigned char)*s) && s[n] == ':') {
		u->scheme = (struct uriref_span){ s, (int)n };
		s += n + 1;
	}
	if (strncmp(s, "//", 2) == 0) {
		s += 2;
		u->authority = uriref_span(&s, "/?#");
	}
	u->path = uriref_span(&s, "?#");
	if (*s == '?') {
		s++;
		u->query = uriref_span(&s, "#");
	}
	if (*s == '#') {
		s++;
		u->fragment = uriref_span(&s, "");
	}
}

/* RFC 3986 5.2.4, in place: the output is never longer than the input. */
static void
uriref_remove_dots(char *in)
{
	char *out = in, *start = in;

	while (*in != '\0') {
		if (strncmp(in, "../", 3) == 0 || strncmp(in, "./", 2) == 0)
			in += in[1] == '/' ? 2 : 3;
		else if (strncmp(in, "/./", 3) == 0 || strcmp(in, "/.") == 0) {
			in += in[2] == '/' ? 2 : 1;
			*in = '/';
		} else if (strncmp(in, "/../", 4) == 0 ||
		    strcmp(in, "/..") == 0) {
			in += in[3] == '/' ? 3 : 2;
			*in = '/';
			while (out > start && *--out != '/')
				;
		} else if (strcmp(in, ".") == 0 || strcmp(in, "..") == 0)
			break;
		else
			do
				*out++ = *in++;
			while (*in != '\0' && *in != '/');
	}
	*out = '\0';
}

/* The path of ref resolved against base's (RFC 3986 5.2.2, 5.2.3). */
static void
uriref_merge(FILE *f, const struct uriref *b, const struct uriref *r)
{
	const char *slash = memrchr(b->path.p, '/', b->path.n);

	if (r->path.n == 0)
		fprintf(f, "%.*s", b->path.n, b->path.p);
	else if (r->path.p[0] == '/')
		;
	else if (b->authority.p != NULL && b->path.n == 0)
		fputc('/', f);
	else if (slash != NULL)
		fprintf(f, "%.*s", (int)(slash - b->path.p + 1), b->path.p);
	fprintf(f, "%.*s", r->path.n, r->path.p);
}

int
uriref_resolve(const char *base, const char *ref, char **ret_uri)
{
	struct uriref b, r;
	const struct uriref *s = &r, *a = &r, *q = &r;
	char *path = NULL, *out = NULL;
	size_t len;
	FILE *f;

	uriref_parse(base, &b);
	uriref_parse(ref, &r);
	if ((f = open_memstream(&path, &len)) == NULL)
		return -ENOMEM;
	if (r.scheme.p == NULL) {
		s = &b;
		a = r.authority.p == NULL ? &b : &r;
		q = a == &b && r.path.n == 0 && r.query.p == NULL ? &b : &r;
	}
	if (a == &b)
		uriref_merge(f, &b, &r);
	else
		fprintf(f, "%.*s", r.path.n, r.path.p);
	if (fclose(f) != 0) {
		free(path);
		return -ENOMEM;
	}
	uriref_remove_dots(path);
	if (asprintf(&out, "%.*s%s%s%.*s%s%s%.*s%s%.*s", s->scheme.n,
		s->scheme.p, s->scheme.p != NULL ? ":" : "",
		a->authority.p != NULL ? "//" : "", a->authority.n,
		a->authority.p, path, q->query.p != NULL ? "?" : "", q->query.n,
		q->query.p, r.fragment.p != NULL ? "#" : "", r.fragment.n,
		r.fragment.p) < 0)
		out = NULL;
	free(path);
	if (out == NULL)
		return -ENOMEM;
	*ret_uri = out;
	return 0;
}

void
uriref_percent_decode(char *s)
{
	char *out = s, hex[3] = { 0 };

	for (; *s != '\0'; s++) {
		if (s[0] == '%' && isxdigit((unsigned char)s[1]) &&
		    isxdigit((unsigned char)s[2])) {
			memcpy(hex, s + 1, 2);
			*out++ = (char)strtol(hex, NULL, 16);
			s += 2;
		} else
			*out++ = *s;
	}
	*out = '\0';
}

void
uriref_pointer_unescape(char *s)
{
	char *out = s;

	for (; *s != '\0'; s++)
		if (s[0] == '~' && (s[1] == '0' || s[1] == '1'))
			*out++ = *++s == '0' ? '~' : '/';
		else
			*out++ = *s;
	*out = '\0';
}

char *
uriref_file_path(const char *uri)
{
	const char *p;
	char *path;

	if (strncasecmp(uri, "file://", 7) != 0)
		return NULL;
	p = uri + 7;
	if (strncasecmp(p, "localhost/", 10) == 0)
		p += 9;
	/* Another host's file, or a NUL in the middle, is no local path. */
	if (*p != '/' || strcasestr(p, "%00") != NULL)
		return NULL;
	if ((path = strndup(p, strcspn(p, "?#"))) == NULL)
		return NULL;
	uriref_percent_decode(path);
	return path;
}
