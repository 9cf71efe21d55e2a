/* SPDX-License-Identifier: ISC */
/* JSON Schema 2020-12 validation: a keyword table, $ref lookup, patterns. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <regex.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonschema.h"

#define JSONSCHEMA_REF_DEPTH_MAX 64  /* $refs followed, one inside another */
#define JSONSCHEMA_DEPTH_MAX	 512 /* schemas evaluated, one in another */
#define JSONSCHEMA_DUMP_MAX	 72  /* bytes of a value quoted in a cause */
#define JSONSCHEMA_WHOLE_MIN	 4503599627370496.0 /* 2^52: no fraction */
/* A broken schema: no anyOf, oneOf, not or if may take it for a mismatch. */
#define JSONSCHEMA_EBROKEN	 (-EPROTO)

/* One step of the instance path, on the stack: a key or an index. */
struct jsonschema_path {
	const struct jsonschema_path *up;
	const char *key; /* NULL for an array index */
	size_t index;
};

/* A schema resource ($id) or a named location ($anchor) of the document. */
struct jsonschema_target {
	const json_t *schema;
	char *uri;    /* the base URI there, without a fragment */
	char *anchor; /* NULL for a resource */
};

/* A compiled pattern, kept for the rest of one validation. */
struct jsonschema_regex {
	struct jsonschema_regex *next;
	const char *pattern; /* the schema's string, compared by address */
	regex_t re;
};

struct jsonschema_ctx {
	char **cause;  /* the one cause of the result; NULL: none wanted */
	bool is_quiet; /* inside anyOf, oneOf, not, if, contains */
	int depth, ref_depth;
	struct jsonschema_target *targets;
	size_t ntargets;
	struct jsonschema_regex *regexes;
};

/* Where a keyword applies: its schema object, the instance, their place. */
struct jsonschema_at {
	const json_t *schema;
	const json_t *instance;
	const struct jsonschema_path *path;
	const char *base; /* the base URI of schema */
};

struct jsonschema_keyword {
	const char *name;
	int (*check)(struct jsonschema_ctx *, const struct jsonschema_keyword *,
	    const struct jsonschema_at *, const json_t *);
	int arg;	/* +-1: maximum, at most; +-2: exclusive */
	json_type type; /* what a min/max count measures */
};

static int jsonschema_eval(struct jsonschema_ctx *, const json_t *,
    const json_t *, const struct jsonschema_path *, const char *);
static int jsonschema_index(struct jsonschema_ctx *, const json_t *,
    const char *, int);
static int jsonschema_fail(struct jsonschema_ctx *,
    const struct jsonschema_path *, const char *, ...)
    __attribute__((format(printf, 3, 4)));
static int jsonschema_error(struct jsonschema_ctx *,
    const struct jsonschema_path *, int, const char *, ...)
    __attribute__((format(printf, 4, 5)));

#define jsonschema_broken(ctx, path, ...) \
	jsonschema_error((ctx), (path), JSONSCHEMA_EBROKEN, __VA_ARGS__)
#define jsonschema_bad_value(ctx, at, kw, what) \
	jsonschema_broken((ctx), (at)->path, "%s is not %s", (kw)->name, (what))

/* jansson's iterators take a json_t *; nothing here changes a value. */
static json_t *
jsonschema_mut(const json_t *json)
{
	return (json_t *)(uintptr_t)json;
}

/* Causes: "<path>: <what failed>", one per validation. */

static void
jsonschema_quote_write(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s != '\0'; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

/* s as a JSON string, in quotes; NULL when out of memory. */
static char *
jsonschema_quote(const char *s)
{
	char *buf = NULL;
	size_t len;
	FILE *f = open_memstream(&buf, &len);

	if (f == NULL)
		return NULL;
	jsonschema_quote_write(f, s);
	if (fclose(f) == 0)
		return buf;
	free(buf);
	return NULL;
}

static bool
jsonschema_is_identifier(const char *s)
{
	if (!isalpha((unsigned char)*s) && *s != '_')
		return false;
	while (isalnum((unsigned char)*s) || *s == '_')
		s++;
	return *s == '\0';
}

/* "$", "$.prop", "$.arr[3]", "$[\"odd key\"]". */
static void
jsonschema_path_write(FILE *f, const struct jsonschema_path *p)
{
	if (p == NULL) {
		fputc('$', f);
		return;
	}
	jsonschema_path_write(f, p->up);
	if (p->key == NULL)
		fprintf(f, "[%zu]", p->index);
	else if (jsonschema_is_identifier(p->key))
		fprintf(f, ".%s", p->key);
	else {
		fputc('[', f);
		jsonschema_quote_write(f, p->key);
		fputc(']', f);
	}
}

/* Sets the cause, unless one is set: "<path>: <prefix><message>". */
static int
jsonschema_vcause(struct jsonschema_ctx *ctx,
    const struct jsonschema_path *path, const char *prefix, const char *fmt,
    va_list ap)
{
	char *buf = NULL;
	size_t len;
	FILE *f;

	if (ctx->cause == NULL || *ctx->cause != NULL)
		return 0;
	if ((f = open_memstream(&buf, &len)) == NULL)
		return -ENOMEM;
	jsonschema_path_write(f, path);
	fprintf(f, ": %s", prefix);
	vfprintf(f, fmt, ap);
	if (fclose(f) != 0) {
		free(buf);
		return -ENOMEM;
	}
	*ctx->cause = buf;
	return 0;
}

/* A mismatch of the instance; quiet inside anyOf, oneOf, not and if. */
static int
jsonschema_fail(struct jsonschema_ctx *ctx, const struct jsonschema_path *path,
    const char *fmt, ...)
{
	va_list ap;
	int r = 0;

	if (!ctx->is_quiet) {
		va_start(ap, fmt);
		r = jsonschema_vcause(ctx, path, "", fmt, ap);
		va_end(ap);
	}
	return r < 0 ? r : -EINVAL;
}

/* -ENOTSUP or a broken schema: always said, and never taken back. */
static int
jsonschema_error(struct jsonschema_ctx *ctx, const struct jsonschema_path *path,
    int err, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = jsonschema_vcause(ctx, path,
	    err == JSONSCHEMA_EBROKEN ? "invalid schema: " : "", fmt, ap);
	va_end(ap);
	return r < 0 ? r : err;
}

/* A mismatch whose message shows a value, cut short: before, v, after. */
static int
jsonschema_fail_value(struct jsonschema_ctx *ctx,
    const struct jsonschema_path *path, const char *before, const json_t *v,
    const char *after)
{
	char *dump;
	size_t n;
	int r;

	if (ctx->is_quiet || ctx->cause == NULL)
		return -EINVAL;
	dump = json_dumps(v,
	    JSON_ENCODE_ANY | JSON_COMPACT | JSON_REAL_PRECISION(15));
	if (dump == NULL)
		return -ENOMEM;
	/* Cut between characters: a cause stays UTF-8. */
	if ((n = strlen(dump)) > JSONSCHEMA_DUMP_MAX)
		for (n = JSONSCHEMA_DUMP_MAX; (dump[n] & 0xc0) == 0x80; n--)
			;
	r = jsonschema_fail(ctx, path, "%s%.*s%s%s", before, (int)n, dump,
	    dump[n] != '\0' ? "..." : "", after);
	free(dump);
	return r;
}

/* As jsonschema_fail_value for an object key. */
static int
jsonschema_fail_key(struct jsonschema_ctx *ctx,
    const struct jsonschema_path *path, const char *before, const char *key,
    const char *after)
{
	json_t *s;
	int r;

	if (ctx->is_quiet || ctx->cause == NULL)
		return -EINVAL;
	if ((s = json_string(key)) == NULL)
		return -ENOMEM;
	r = jsonschema_fail_value(ctx, path, before, s, after);
	json_decref(s);
	return r;
}

/* Evaluates without leaving a cause for a mismatch: 0, -EINVAL or hard. */
static int
jsonschema_try(struct jsonschema_ctx *ctx, const json_t *schema,
    const json_t *instance, const struct jsonschema_path *path,
    const char *base)
{
	bool was_quiet = ctx->is_quiet;
	int r;

	ctx->is_quiet = true;
	r = jsonschema_eval(ctx, schema, instance, path, base);
	ctx->is_quiet = was_quiet;
	return r;
}

/* Values: numbers by value (1 equals 1.0), deep equality, type names. */

static int
jsonschema_number_cmp(const json_t *a, const json_t *b)
{
	double x, y;

	if (json_is_integer(a) && json_is_integer(b)) {
		json_int_t i = json_integer_value(a), j = json_integer_value(b);

		return (i > j) - (i < j);
	}
	x = json_number_value(a);
	y = json_number_value(b);
	return (x > y) - (x < y);
}

/* Whether x has no fraction, without libm (which mcpd does not link). */
static bool
jsonschema_is_whole(double x)
{
	return x >= JSONSCHEMA_WHOLE_MIN || x <= -JSONSCHEMA_WHOLE_MIN ||
	    x == (double)(long long)x;
}

static bool
jsonschema_is_integer(const json_t *v)
{
	return json_is_integer(v) ||
	    (json_is_real(v) && jsonschema_is_whole(json_real_value(v)));
}

static bool
jsonschema_equal(const json_t *a, const json_t *b)
{
	const char *key;
	const json_t *v;

	if (json_is_number(a) && json_is_number(b))
		return jsonschema_number_cmp(a, b) == 0;
	if (json_typeof(a) != json_typeof(b))
		return false;
	switch (json_typeof(a)) {
	case JSON_STRING:
		return json_string_length(a) == json_string_length(b) &&
		    memcmp(json_string_value(a), json_string_value(b),
			json_string_length(a)) == 0;
	case JSON_ARRAY:
		if (json_array_size(a) != json_array_size(b))
			return false;
		for (size_t i = 0; i < json_array_size(a); i++)
			if (!jsonschema_equal(json_array_get(a, i),
				json_array_get(b, i)))
				return false;
		return true;
	case JSON_OBJECT:
		if (json_object_size(a) != json_object_size(b))
			return false;
		json_object_foreach(jsonschema_mut(a), key, v)
			if (json_object_get(b, key) == NULL ||
			    !jsonschema_equal(v, json_object_get(b, key)))
				return false;
		return true;
	default:
		return true;
	}
}

/* The JSON type name of an instance; a real is a "number". */
static const char *
jsonschema_type_name(const json_t *v)
{
	static const char *const names[] = { "object", "array", "string",
		"integer", "number", "boolean", "boolean", "null" };

	return names[json_typeof(v)];
}

static void
jsonschema_number_format(const json_t *v, char *buf, size_t size)
{
	if (json_is_integer(v))
		snprintf(buf, size, "%" JSON_INTEGER_FORMAT,
		    json_integer_value(v));
	else
		snprintf(buf, size, "%.15g", json_number_value(v));
}

/* URI references (RFC 3986): parts, resolution, dot segments. */

struct jsonschema_span {
	const char *p; /* NULL: the part is absent */
	int n;
};

struct jsonschema_uri {
	struct jsonschema_span scheme, authority, path, query, fragment;
};

static struct jsonschema_span
jsonschema_span(const char **s, const char *stop)
{
	struct jsonschema_span sp = { *s, (int)strcspn(*s, stop) };

	*s += sp.n;
	return sp;
}

static void
jsonschema_uri_parse(const char *s, struct jsonschema_uri *u)
{
	size_t n = strspn(s,
	    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+-.");

	memset(u, 0, sizeof *u);
	if (n > 0 && isalpha((unsigned char)*s) && s[n] == ':') {
		u->scheme = (struct jsonschema_span){ s, (int)n };
		s += n + 1;
	}
	if (strncmp(s, "//", 2) == 0) {
		s += 2;
		u->authority = jsonschema_span(&s, "/?#");
	}
	u->path = jsonschema_span(&s, "?#");
	if (*s == '?') {
		s++;
		u->query = jsonschema_span(&s, "#");
	}
	if (*s == '#') {
		s++;
		u->fragment = jsonschema_span(&s, "");
	}
}

/* RFC 3986 5.2.4, in place: the output is never longer than the input. */
static void
jsonschema_uri_remove_dots(char *in)
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
jsonschema_uri_merge(FILE *f, const struct jsonschema_uri *b,
    const struct jsonschema_uri *r)
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

/* ref resolved against base, always with a "#" and the fragment after it;
 * NULL when out of memory. */
static char *
jsonschema_uri_resolve(const char *base, const char *ref)
{
	struct jsonschema_uri b, r;
	const struct jsonschema_uri *s = &r, *a = &r, *q = &r;
	char *path = NULL, *out = NULL;
	size_t len;
	FILE *f;

	jsonschema_uri_parse(base, &b);
	jsonschema_uri_parse(ref, &r);
	if ((f = open_memstream(&path, &len)) == NULL)
		return NULL;
	if (r.scheme.p == NULL) {
		s = &b;
		a = r.authority.p == NULL ? &b : &r;
		q = a == &b && r.path.n == 0 && r.query.p == NULL ? &b : &r;
	}
	if (a == &b)
		jsonschema_uri_merge(f, &b, &r);
	else
		fprintf(f, "%.*s", r.path.n, r.path.p);
	if (fclose(f) != 0) {
		free(path);
		return NULL;
	}
	jsonschema_uri_remove_dots(path);
	if (asprintf(&out, "%.*s%s%s%.*s%s%s%.*s#%.*s", s->scheme.n,
		s->scheme.p, s->scheme.p != NULL ? ":" : "",
		a->authority.p != NULL ? "//" : "", a->authority.n,
		a->authority.p, path, q->query.p != NULL ? "?" : "", q->query.n,
		q->query.p, r.fragment.n, r.fragment.p) < 0)
		out = NULL;
	free(path);
	return out;
}

/* Targets of $ref: the document's resources and anchors. */

static int
jsonschema_target_add(struct jsonschema_ctx *ctx, const json_t *schema,
    const char *uri, const char *anchor)
{
	struct jsonschema_target *t;

	t = reallocarray(ctx->targets, ctx->ntargets + 1, sizeof *t);
	if (t == NULL)
		return -ENOMEM;
	ctx->targets = t;
	t += ctx->ntargets;
	t->schema = schema;
	t->uri = strndup(uri, strcspn(uri, "#"));
	t->anchor = anchor != NULL ? strdup(anchor) : NULL;
	if (t->uri == NULL || (anchor != NULL && t->anchor == NULL)) {
		free(t->uri);
		free(t->anchor);
		return -ENOMEM;
	}
	ctx->ntargets++;
	return 0;
}

/* The first target with these schema, uri and anchor (NULL: any). */
static const struct jsonschema_target *
jsonschema_target_find(const struct jsonschema_ctx *ctx, const json_t *schema,
    const char *uri, const char *anchor)
{
	for (size_t i = 0; i < ctx->ntargets; i++) {
		const struct jsonschema_target *t = &ctx->targets[i];

		if ((schema == NULL || t->schema == schema) &&
		    (uri == NULL || strcmp(t->uri, uri) == 0) &&
		    (t->anchor == NULL) == (anchor == NULL) &&
		    (anchor == NULL || strcmp(t->anchor, anchor) == 0))
			return t;
	}
	return NULL;
}

/* The base URI inside schema: its own $id's, or the one around it. */
static const char *
jsonschema_base_of(const struct jsonschema_ctx *ctx, const json_t *schema,
    const char *base)
{
	const struct jsonschema_target *t;

	if (!json_is_string(json_object_get(schema, "$id")))
		return base;
	t = jsonschema_target_find(ctx, schema, NULL, NULL);
	return t != NULL ? t->uri : base;
}

static void
jsonschema_percent_decode(char *s)
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

/* A JSON pointer token: "~1" is "/", "~0" is "~". */
static void
jsonschema_pointer_unescape(char *s)
{
	char *out = s;

	for (; *s != '\0'; s++)
		if (s[0] == '~' && (s[1] == '0' || s[1] == '1'))
			*out++ = *++s == '0' ? '~' : '/';
		else
			*out++ = *s;
	*out = '\0';
}

/* Follows a JSON pointer from a resource; *base follows the $ids passed. */
static const json_t *
jsonschema_pointer(const struct jsonschema_ctx *ctx, const json_t *node,
    char *ptr, const char **base)
{
	char *seg = ptr + 1, *end;

	for (;;) {
		if ((end = strchr(seg, '/')) != NULL)
			*end = '\0';
		jsonschema_pointer_unescape(seg);
		if (seg != ptr + 1)
			*base = jsonschema_base_of(ctx, node, *base);
		if (json_is_array(node) && *seg != '\0' &&
		    seg[strspn(seg, "0123456789")] == '\0' &&
		    (seg[0] != '0' || seg[1] == '\0'))
			node = json_array_get(node, strtoul(seg, NULL, 10));
		else
			node = json_object_get(node, seg);
		if (node == NULL || end == NULL)
			return node;
		seg = end + 1;
	}
}

/* The schema a $ref names, and the base URI around it. */
static int
jsonschema_resolve(struct jsonschema_ctx *ctx, const struct jsonschema_at *at,
    const char *ref, const json_t **ret, const char **ret_base)
{
	const struct jsonschema_target *t;
	char *uri = jsonschema_uri_resolve(at->base, ref), *frag;
	char *quoted = jsonschema_quote(ref);
	int r = 0;

	if (uri == NULL || quoted == NULL) {
		free(uri);
		free(quoted);
		return -ENOMEM;
	}
	frag = strchr(uri, '#');
	*frag++ = '\0';
	jsonschema_percent_decode(frag);
	*ret = NULL;
	if ((t = jsonschema_target_find(ctx, NULL, uri, NULL)) == NULL)
		r = jsonschema_error(ctx, at->path, -ENOTSUP,
		    "remote $ref %s is not supported (never fetched)", quoted);
	else if (*frag == '\0' || *frag == '/') {
		*ret_base = t->uri;
		*ret = *frag == '\0' ?
		    t->schema :
		    jsonschema_pointer(ctx, t->schema, frag, ret_base);
	} else if ((t = jsonschema_target_find(ctx, NULL, uri, frag)) != NULL) {
		*ret = t->schema;
		*ret_base = t->uri;
	}
	if (r == 0 && *ret == NULL)
		r = jsonschema_broken(ctx, at->path,
		    "$ref %s resolves to nothing", quoted);
	free(quoted);
	free(uri);
	return r;
}

/*
 * Patterns: ECMA-262 syntax translated to POSIX extended expressions that
 * run on bytes (the C locale). What matches "any character but" matches a
 * whole UTF-8 sequence, and a multi-byte character is a group, so that
 * "^.{2}$" and "^\\u00e9+$" count characters, not bytes.
 */
#define JSONSCHEMA_UTF8_TAIL "\x80-\xbf"
#define JSONSCHEMA_UTF8_REST "[" JSONSCHEMA_UTF8_TAIL "]*)"
#define JSONSCHEMA_UTF8_DOT \
	"([^\n\r" JSONSCHEMA_UTF8_TAIL "]" JSONSCHEMA_UTF8_REST

/* Bracket-expression contents for the class escapes \d \w \s. */
static const char *
jsonschema_regex_class(char c)
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
jsonschema_hex(const char *s, int n)
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
jsonschema_regex_char(const char *s, size_t *len)
{
	static const char controls[] = "t\tn\nr\rf\fv\v";
	const char *c = *s != '\0' ? strchr(controls, *s) : NULL;
	long cp, lo;

	*len = 1;
	if (c != NULL && (c - controls) % 2 == 0)
		return c[1];
	if (s[0] == 'c' && isalpha((unsigned char)s[1]))
		return *len = 2, s[1] % 32;
	if (s[0] == 'x' && (cp = jsonschema_hex(s + 1, 2)) >= 0)
		return *len = 3, cp;
	if (s[0] != 'u' || (cp = jsonschema_hex(s + 1, 4)) < 0)
		return ispunct((unsigned char)s[0]) ? s[0] : -1;
	*len = 5;
	if (cp >= 0xd800 && cp < 0xdc00 && strncmp(s + 5, "\\u", 2) == 0 &&
	    (lo = jsonschema_hex(s + 7, 4)) >= 0xdc00 && lo < 0xe000) {
		*len = 11;
		cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
	}
	return cp;
}

/* Writes code point cp to match itself: escaped when special, a group of
 * its UTF-8 bytes when it has more than one. */
static void
jsonschema_regex_literal(FILE *f, long cp)
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
jsonschema_regex_member(const char **sp, FILE *f, const char **what)
{
	const char *s = *sp, *cls;
	size_t len = 0;
	long cp = (unsigned char)*s;

	if (*s == '\\' && (cls = jsonschema_regex_class(s[1])) != NULL) {
		fputs(cls, f);
		*sp += 2;
		return -2;
	}
	if (*s == '\\')
		cp = s[1] == 'b' ? '\b' : jsonschema_regex_char(s + 1, &len);
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
jsonschema_regex_bracket_write(FILE *out, bool is_negated, const char *body,
    const bool has[128])
{
	bool is_dash_first = has['-'] && !has[']'];

	if (!is_negated && !has[']'] && !has['-'] && *body == '\0') {
		fputs("\\^", out); /* only "^" */
		return;
	}
	fprintf(out, "%s[%s%s%s%s%s%s%s]%s", is_negated ? "(" : "",
	    is_negated ? "^" : "", has[']'] ? "]" : "",
	    is_dash_first ? "-" : "", is_negated ? JSONSCHEMA_UTF8_TAIL : "",
	    body, has['^'] ? "^" : "", has['-'] && !is_dash_first ? "-" : "",
	    is_negated ? JSONSCHEMA_UTF8_REST : "");
}

/* Translates the bracket expression at *sp. */
static int
jsonschema_regex_bracket(const char **sp, FILE *out, const char **what)
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
		if ((cp = jsonschema_regex_member(&s, f, what)) < 0)
			continue;
		if (s[0] == '-' && s[1] != ']' && s[1] != '\0') {
			s++;
			if ((hi = jsonschema_regex_member(&s, f, what)) < cp)
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
	jsonschema_regex_bracket_write(out, is_negated, body, has);
	free(body);
	*sp = s + 1;
	return 0;
}

/* Translates the escape at *sp (a backslash) outside brackets. */
static int
jsonschema_regex_escape(const char **sp, FILE *out, const char **what)
{
	const char *s = *sp;
	const char *cls = jsonschema_regex_class(tolower((unsigned char)s[1]));
	size_t len = 1;
	long cp;

	if (cls != NULL && islower((unsigned char)s[1]))
		fprintf(out, "[%s]", cls);
	else if (cls != NULL)
		fprintf(out,
		    "([^%s" JSONSCHEMA_UTF8_TAIL "]" JSONSCHEMA_UTF8_REST, cls);
	else if (s[1] == 'b' || s[1] == 'B')
		fprintf(out, "\\%c", s[1]); /* a GNU extension */
	else if ((cp = jsonschema_regex_char(s + 1, &len)) > 0)
		jsonschema_regex_literal(out, cp);
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
jsonschema_regex_braces(const char *s)
{
	size_t n = strspn(s + 1, "0123456789");

	if (n == 0)
		return 0;
	if (s[1 + n] == ',')
		n += 1 + strspn(s + 2 + n, "0123456789");
	return s[1 + n] == '}' ? n + 2 : 0;
}

/* Translates an ECMA-262 pattern; -ENOTSUP with *what naming a feature. */
static int
jsonschema_regex_translate(const char *s, FILE *out, const char **what)
{
	size_t n;
	int r = 0;

	while (*s != '\0' && r == 0) {
		if (*s == '\\')
			r = jsonschema_regex_escape(&s, out, what);
		else if (*s == '[')
			r = jsonschema_regex_bracket(&s, out, what);
		else if (strncmp(s, "(?:", 3) == 0 ||
		    (strncmp(s, "(?<", 3) == 0 &&
			isalpha((unsigned char)s[3]))) {
			fputc('(', out); /* a group without a name */
			s = s[2] == ':' ? s + 3 : strchrnul(s, '>') + 1;
		} else if (strncmp(s, "(?", 2) == 0) {
			*what = "lookaround";
			r = -ENOTSUP;
		} else if ((n = jsonschema_regex_braces(s)) > 0) {
			fprintf(out, "%.*s", (int)n, s);
			s += n + (s[n] == '?'); /* lazy matches the same */
		} else if (*s == '{' || *s == '}')
			fprintf(out, "\\%c", *s++);
		else if (*s == '.') {
			fputs(JSONSCHEMA_UTF8_DOT, out);
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

/* Compiles pattern, -ENOTSUP with a cause when it cannot be done. */
static int
jsonschema_regex_compile(struct jsonschema_ctx *ctx,
    const struct jsonschema_path *path, const char *pattern, regex_t *re)
{
	const char *what = "regcomp refuses it";
	char *posix = NULL, *quoted;
	size_t len;
	FILE *f;
	int r;

	if ((f = open_memstream(&posix, &len)) == NULL)
		return -ENOMEM;
	r = jsonschema_regex_translate(pattern, f, &what);
	if (fclose(f) != 0)
		r = -ENOMEM;
	else if (r == 0 && regcomp(re, posix, REG_EXTENDED | REG_NOSUB) != 0)
		r = -ENOTSUP;
	free(posix);
	if (r != -ENOTSUP)
		return r;
	if ((quoted = jsonschema_quote(pattern)) == NULL)
		return -ENOMEM;
	r = jsonschema_error(ctx, path, r, "pattern %s is not supported: %s",
	    quoted, what);
	free(quoted);
	return r;
}

/* Searches n bytes of s for pattern: 1 found, 0 not, or an error. */
static int
jsonschema_regex_search(struct jsonschema_ctx *ctx,
    const struct jsonschema_path *path, const char *pattern, const char *s,
    size_t n)
{
	struct jsonschema_regex *re = ctx->regexes;
	regmatch_t m = { .rm_so = 0, .rm_eo = (regoff_t)n };
	int r;

	while (re != NULL && re->pattern != pattern)
		re = re->next;
	if (re == NULL) {
		if ((re = calloc(1, sizeof *re)) == NULL)
			return -ENOMEM;
		if ((r = jsonschema_regex_compile(ctx, path, pattern,
			 &re->re)) < 0) {
			free(re);
			return r;
		}
		re->pattern = pattern;
		re->next = ctx->regexes;
		ctx->regexes = re;
	}
	return regexec(&re->re, s, 1, &m, REG_STARTEND) == 0;
}

/*
 * The keywords: check(ctx, its entry, where, its value). Each ignores an
 * instance of a type it does not apply to.
 */

/* Whether v is of the type name says; false for a name of no type. */
static bool
jsonschema_type_is(const char *name, const json_t *v)
{
	if (strcmp(name, "integer") == 0)
		return jsonschema_is_integer(v);
	if (strcmp(name, "number") == 0)
		return json_is_number(v);
	return strcmp(name, jsonschema_type_name(v)) == 0;
}

/* Whether name is one of the seven type names. */
static bool
jsonschema_is_type_name(const char *name)
{
	static const char *const names[] = { "null", "boolean", "object",
		"array", "number", "string", "integer" };

	for (size_t i = 0; name != NULL && i < 7; i++)
		if (strcmp(name, names[i]) == 0)
			return true;
	return false;
}

static int
jsonschema_type(struct jsonschema_ctx *ctx, const struct jsonschema_keyword *kw,
    const struct jsonschema_at *at, const json_t *v)
{
	size_t n = json_is_array(v) ? json_array_size(v) : 1;
	char expected[128] = "";
	const json_t *t;
	const char *name;

	for (size_t i = 0; i < n; i++) {
		t = json_is_array(v) ? json_array_get(v, i) : v;
		name = json_string_value(t);
		if (!jsonschema_is_type_name(name))
			return jsonschema_bad_value(ctx, at, kw,
			    "a type name or a list of them");
		if (jsonschema_type_is(name, at->instance))
			return 0;
		snprintf(expected + strlen(expected),
		    sizeof expected - strlen(expected), "%s%s",
		    i > 0 ? " or " : "", name);
	}
	return jsonschema_fail(ctx, at->path, "expected %s, got %s", expected,
	    jsonschema_type_name(at->instance));
}

static int
jsonschema_enum(struct jsonschema_ctx *ctx, const struct jsonschema_keyword *kw,
    const struct jsonschema_at *at, const json_t *v)
{
	if (!json_is_array(v))
		return jsonschema_bad_value(ctx, at, kw, "an array");
	for (size_t i = 0; i < json_array_size(v); i++)
		if (jsonschema_equal(json_array_get(v, i), at->instance))
			return 0;
	return jsonschema_fail_value(ctx, at->path, "expected one of ", v, "");
}

static int
jsonschema_const(struct jsonschema_ctx *ctx,
    const struct jsonschema_keyword *kw, const struct jsonschema_at *at,
    const json_t *v)
{
	(void)kw;
	if (jsonschema_equal(v, at->instance))
		return 0;
	return jsonschema_fail_value(ctx, at->path, "expected ", v, "");
}

/* maximum, exclusiveMaximum, minimum, exclusiveMinimum. */
static int
jsonschema_bound(struct jsonschema_ctx *ctx,
    const struct jsonschema_keyword *kw, const struct jsonschema_at *at,
    const json_t *v)
{
	static const char *const words[] = { "greater than", "at least", "",
		"at most", "less than" };
	char limit[32], got[32];
	int c;

	if (!json_is_number(v))
		return jsonschema_bad_value(ctx, at, kw, "a number");
	if (!json_is_number(at->instance))
		return 0;
	c = jsonschema_number_cmp(at->instance, v) * (kw->arg > 0 ? 1 : -1);
	if (c < 0 || (c == 0 && abs(kw->arg) == 1))
		return 0;
	jsonschema_number_format(v, limit, sizeof limit);
	jsonschema_number_format(at->instance, got, sizeof got);
	return jsonschema_fail(ctx, at->path, "expected %s %s, got %s",
	    words[kw->arg + 2], limit, got);
}

/* Near enough: 0.0075 / 0.0001 is not quite 75 in binary. */
static bool
jsonschema_is_multiple(double x, double of)
{
	double q = x / of, a = q < 0 ? -q : q, d;

	/* 1e308 / 0.5 overflows; a whole x is still a multiple of 1/n. */
	if (!isfinite(q))
		return jsonschema_is_whole(x) && jsonschema_is_whole(1 / of);
	if (a >= JSONSCHEMA_WHOLE_MIN)
		return true;
	d = q - (double)(long long)(q + (q < 0 ? -0.5 : 0.5));
	return (d < 0 ? -d : d) <= 1e-9 * (a > 1 ? a : 1);
}

static int
jsonschema_multiple_of(struct jsonschema_ctx *ctx,
    const struct jsonschema_keyword *kw, const struct jsonschema_at *at,
    const json_t *v)
{
	char limit[32], got[32];

	if (!json_is_number(v) || json_number_value(v) <= 0)
		return jsonschema_bad_value(ctx, at, kw, "a positive number");
	if (!json_is_number(at->instance))
		return 0;
	if (json_is_integer(v) && json_is_integer(at->instance) ?
		json_integer_value(at->instance) % json_integer_value(v) == 0 :
		jsonschema_is_multiple(json_number_value(at->instance),
		    json_number_value(v)))
		return 0;
	jsonschema_number_format(v, limit, sizeof limit);
	jsonschema_number_format(at->instance, got, sizeof got);
	return jsonschema_fail(ctx, at->path,
	    "expected a multiple of %s, got %s", limit, got);
}

/* Code points of a UTF-8 string (which jansson has checked). */
static size_t
jsonschema_utf8_length(const json_t *s)
{
	const char *p = json_string_value(s);
	size_t n = 0;

	for (size_t i = 0; i < json_string_length(s); i++)
		n += ((unsigned char)p[i] & 0xc0) != 0x80;
	return n;
}

/* Checks that a keyword's value is a count: 0, 1, 2 ... (2.0 is 2). */
static int
jsonschema_get_count(struct jsonschema_ctx *ctx, const struct jsonschema_at *at,
    const char *name, const json_t *v, double *ret)
{
	*ret = json_number_value(v);
	if (jsonschema_is_integer(v) && *ret >= 0)
		return 0;
	return jsonschema_broken(ctx, at->path,
	    "%s is not a non-negative integer", name);
}

/* minLength, maxLength, minItems, maxItems, minProperties, maxProperties. */
static int
jsonschema_count(struct jsonschema_ctx *ctx,
    const struct jsonschema_keyword *kw, const struct jsonschema_at *at,
    const json_t *v)
{
	static const char *const units[][2] = {
		[JSON_OBJECT] = { "property", "properties" },
		[JSON_ARRAY] = { "item", "items" },
		[JSON_STRING] = { "character", "characters" },
	};
	const json_t *inst = at->instance;
	double limit, n;
	int r;

	if ((r = jsonschema_get_count(ctx, at, kw->name, v, &limit)) < 0 ||
	    json_typeof(inst) != kw->type)
		return r;
	n = json_is_string(inst) ? jsonschema_utf8_length(inst) :
	    json_is_array(inst)	 ? json_array_size(inst) :
				   json_object_size(inst);
	if (kw->arg > 0 ? n <= limit : n >= limit)
		return 0;
	return jsonschema_fail(ctx, at->path,
	    "expected at %s %.0f %s, got %.0f", kw->arg > 0 ? "most" : "least",
	    limit, units[kw->type][limit != 1], n);
}

static int
jsonschema_pattern(struct jsonschema_ctx *ctx,
    const struct jsonschema_keyword *kw, const struct jsonschema_at *at,
    const json_t *v)
{
	int r;

	if (!json_is_string(v))
		return jsonschema_bad_value(ctx, at, kw, "a string");
	if (!json_is_string(at->instance))
		return 0;
	r = jsonschema_regex_search(ctx, at->path, json_string_value(v),
	    json_string_value(at->instance), json_string_length(at->instance));
	if (r != 0)
		return r > 0 ? 0 : r;
	return jsonschema_fail_value(ctx, at->path,
	    "does not match the pattern ", v, "");
}

static int
jsonschema_unique_items(struct jsonschema_ctx *ctx,
    const struct jsonschema_keyword *kw, const struct jsonschema_at *at,
    const json_t *v)
{
	size_t n = json_array_size(at->instance);

	if (!json_is_boolean(v))
		return jsonschema_bad_value(ctx, at, kw, "a boolean");
	for (size_t i = 0; json_is_true(v) && i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			if (jsonschema_equal(json_array_get(at->instance, i),
				json_array_get(at->instance, j)))
				return jsonschema_fail(ctx, at->path,
				    "expected unique items, [%zu] and [%zu] are equal",
				    i, j);
	return 0;
}

/* Evaluates a schema, or a list's i-th, on items [from, to). */
static int
jsonschema_each_item(struct jsonschema_ctx *ctx, const struct jsonschema_at *at,
    const json_t *schema, size_t from, size_t to)
{
	int r = 0;

	for (size_t i = from; i < to && r == 0; i++) {
		struct jsonschema_path p = { at->path, NULL, i };

		r = jsonschema_eval(ctx,
		    json_is_array(schema) ? json_array_get(schema, i) : schema,
		    json_array_get(at->instance, i), &p, at->base);
	}
	return r;
}

static int
jsonschema_prefix_items(struct jsonschema_ctx *ctx,
    const struct jsonschema_keyword *kw, const struct jsonschema_at *at,
    const json_t *v)
{
	size_t n = json_array_size(at->instance);

	if (!json_is_array(v))
		return jsonschema_bad_value(ctx, at, kw, "an array");
	return jsonschema_each_item(ctx, at, v, 0,
	    n < json_array_size(v) ? n : json_array_size(v));
}

static int
jsonschema_items(struct jsonschema_ctx *ctx,
    const struct jsonschema_keyword *kw, const struct jsonschema_at *at,
    const json_t *v)
{
	const json_t *prefix = json_object_get(at->schema, "prefixItems");

	(void)kw;
	if (!json_is_array(at->instance))
		return 0;
	if (json_is_array(v))
		return jsonschema_error(ctx, at->path, -ENOTSUP,
		    "items as an array (before 2020-12) is not supported");
	return jsonschema_each_item(ctx, at, v, json_array_size(prefix),
	    json_array_size(at->instance));
}

/* contains, with minContains (default 1) and maxContains. */
static int
jsonschema_contains(struct jsonschema_ctx *ctx,
    const struct jsonschema_keyword *kw, const struct jsonschema_at *at,
    const json_t *v)
{
	const json_t *lo = json_object_get(at->schema, "minContains");
	const json_t *hi = json_object_get(at->schema, "maxContains");
	double min = 1, max = INFINITY, n = 0;
	int r;

	(void)kw;
	if (!json_is_array(at->instance))
		return 0;
	if ((lo != NULL &&
		(r = jsonschema_get_count(ctx, at, "minContains", lo, &min)) <
		    0) ||
	    (hi != NULL &&
		(r = jsonschema_get_count(ctx, at, "maxContains", hi, &max)) <
		    0))
		return r;
	for (size_t i = 0; i < json_array_size(at->instance); i++) {
		struct jsonschema_path p = { at->path, NULL, i };

		r = jsonschema_try(ctx, v, json_array_get(at->instance, i), &p,
		    at->base);
		if (r != 0 && r != -EINVAL)
			return r;
		n += r == 0;
	}
	if (n >= min && n <= max)
		return 0;
	return jsonschema_fail(ctx, at->path,
	    "expected at %s %.0f items matching contains, got %.0f",
	    n < min ? "least" : "most", n < min ? min : max, n);
}

/* Checks that names is an array of strings. */
static int
jsonschema_names(struct jsonschema_ctx *ctx,
    const struct jsonschema_keyword *kw, const struct jsonschema_at *at,
    const json_t *names)
{
	bool is_ok = json_is_array(names);

	for (size_t i = 0; is_ok && i < json_array_size(names); i++)
		is_ok = json_is_string(json_array_get(names, i));
	return is_ok ? 0 : jsonschema_bad_value(ctx, at, kw, "a list of names");
}

/* The first of names that the instance object lacks, or NULL. */
static const json_t *
jsonschema_missing(const json_t *instance, const json_t *names)
{
	for (size_t i = 0; i < json_array_size(names); i++)
		if (json_object_get(instance,
			json_string_value(json_array_get(names, i))) == NULL)
			return json_array_get(names, i);
	return NULL;
}

static int
jsonschema_required(struct jsonschema_ctx *ctx,
    const struct jsonschema_keyword *kw, const struct jsonschema_at *at,
    const json_t *v)
{
	const json_t *name;
	int r;

	if ((r = jsonschema_names(ctx, kw, at, v)) < 0 ||
	    !json_is_object(at->instance) ||
	    (name = jsonschema_missing(at->instance, v)) == NULL)
		return r;
	return jsonschema_fail_value(ctx, at->path,
	    "missing required property ", name, "");
}

static int
jsonschema_dependent_required(struct jsonschema_ctx *ctx,
    const struct jsonschema_keyword *kw, const struct jsonschema_at *at,
    const json_t *v)
{
	const json_t *names, *name;
	const char *key;
	int r;

	if (!json_is_object(v))
		return jsonschema_bad_value(ctx, at, kw, "an object");
	json_object_foreach(jsonschema_mut(v), key, names) {
		if ((r = jsonschema_names(ctx, kw, at, names)) < 0)
			return r;
		if (json_object_get(at->instance, key) != NULL &&
		    (name = jsonschema_missing(at->instance, names)) != NULL)
			return jsonschema_fail_value(ctx, at->path,
			    "missing property ", name, " (dependentRequired)");
	}
	return 0;
}

/* Evaluates schema on the instance's property key, when there is one. */
static int
jsonschema_eval_property(struct jsonschema_ctx *ctx,
    const struct jsonschema_at *at, const char *key, const json_t *schema)
{
	struct jsonschema_path p = { at->path, key, 0 };
	const json_t *value = json_object_get(at->instance, key);

	if (value == NULL)
		return 0;
	return jsonschema_eval(ctx, schema, value, &p, at->base);
}

static int
jsonschema_properties(struct jsonschema_ctx *ctx,
    const struct jsonschema_keyword *kw, const struct jsonschema_at *at,
    const json_t *v)
{
	const char *key;
	const json_t *sub;
	int r;

	if (!json_is_object(v))
		return jsonschema_bad_value(ctx, at, kw, "an object");
	json_object_foreach(jsonschema_mut(v), key, sub)
		if ((r = jsonschema_eval_property(ctx, at, key, sub)) != 0)
			return r;
	return 0;
}

static int
jsonschema_pattern_properties(struct jsonschema_ctx *ctx,
    const struct jsonschema_keyword *kw, const struct jsonschema_at *at,
    const json_t *v)
{
	const char *key, *pattern;
	const json_t *value, *sub;
	int r;

	if (!json_is_object(v))
		return jsonschema_bad_value(ctx, at, kw, "an object");
	json_object_foreach(jsonschema_mut(at->instance), key, value)
		json_object_foreach(jsonschema_mut(v), pattern, sub) {
			r = jsonschema_regex_search(ctx, at->path, pattern, key,
			    strlen(key));
			if (r > 0)
				r = jsonschema_eval_property(ctx, at, key, sub);
			if (r != 0)
				return r;
		}
	return 0;
}

/* 1 when key is in properties or matches a patternProperties pattern. */
static int
jsonschema_is_evaluated(struct jsonschema_ctx *ctx,
    const struct jsonschema_at *at, const char *key)
{
	const json_t *patterns = json_object_get(at->schema,
	    "patternProperties");
	const char *pattern;
	const json_t *sub;
	int r = 0;

	if (json_object_get(json_object_get(at->schema, "properties"), key))
		return 1;
	if (!json_is_object(patterns))
		return 0;
	json_object_foreach(jsonschema_mut(patterns), pattern, sub)
		if ((r = jsonschema_regex_search(ctx, at->path, pattern, key,
			 strlen(key))) != 0)
			break;
	return r;
}

static int
jsonschema_additional_properties(struct jsonschema_ctx *ctx,
    const struct jsonschema_keyword *kw, const struct jsonschema_at *at,
    const json_t *v)
{
	const char *key;
	const json_t *value;
	int r;

	(void)kw;
	json_object_foreach(jsonschema_mut(at->instance), key, value) {
		if ((r = jsonschema_is_evaluated(ctx, at, key)) < 0)
			return r;
		if (r > 0)
			continue;
		if (json_is_false(v))
			return jsonschema_fail_key(ctx, at->path,
			    "unexpected property ", key, "");
		if ((r = jsonschema_eval_property(ctx, at, key, v)) != 0)
			return r;
	}
	return 0;
}

static int
jsonschema_property_names(struct jsonschema_ctx *ctx,
    const struct jsonschema_keyword *kw, const struct jsonschema_at *at,
    const json_t *v)
{
	const char *key;
	const json_t *value;
	json_t *name;
	int r;

	(void)kw;
	json_object_foreach(jsonschema_mut(at->instance), key, value) {
		if ((name = json_string(key)) == NULL)
			return -ENOMEM;
		r = jsonschema_try(ctx, v, name, at->path, at->base);
		json_decref(name);
		if (r == -EINVAL)
			return jsonschema_fail_key(ctx, at->path,
			    "property name ", key,
			    " does not match propertyNames");
		if (r != 0)
			return r;
	}
	return 0;
}

static int
jsonschema_dependent_schemas(struct jsonschema_ctx *ctx,
    const struct jsonschema_keyword *kw, const struct jsonschema_at *at,
    const json_t *v)
{
	const char *key;
	const json_t *sub;
	int r;

	if (!json_is_object(v))
		return jsonschema_bad_value(ctx, at, kw, "an object");
	json_object_foreach(jsonschema_mut(v), key, sub)
		if (json_object_get(at->instance, key) != NULL &&
		    (r = jsonschema_eval(ctx, sub, at->instance, at->path,
			 at->base)) != 0)
			return r;
	return 0;
}

static int
jsonschema_ref(struct jsonschema_ctx *ctx, const struct jsonschema_keyword *kw,
    const struct jsonschema_at *at, const json_t *v)
{
	const json_t *target;
	const char *base = NULL;
	int r;

	if (!json_is_string(v))
		return jsonschema_bad_value(ctx, at, kw, "a string");
	if ((r = jsonschema_resolve(ctx, at, json_string_value(v), &target,
		 &base)) < 0)
		return r;
	if (ctx->ref_depth >= JSONSCHEMA_REF_DEPTH_MAX)
		return jsonschema_broken(ctx, at->path,
		    "more than %d nested $refs (a $ref cycle?)",
		    JSONSCHEMA_REF_DEPTH_MAX);
	ctx->ref_depth++;
	r = jsonschema_eval(ctx, target, at->instance, at->path, base);
	ctx->ref_depth--;
	return r;
}

/* $dynamicRef; unevaluated* unless true, on the instance type they see. */
static int
jsonschema_unsupported(struct jsonschema_ctx *ctx,
    const struct jsonschema_keyword *kw, const struct jsonschema_at *at,
    const json_t *v)
{
	if (kw->arg != 0 &&
	    (json_is_true(v) || json_typeof(at->instance) != kw->type))
		return 0;
	return jsonschema_error(ctx, at->path, -ENOTSUP, "%s is not supported",
	    kw->name);
}

static int
jsonschema_all_of(struct jsonschema_ctx *ctx,
    const struct jsonschema_keyword *kw, const struct jsonschema_at *at,
    const json_t *v)
{
	int r = 0;

	if (json_array_size(v) == 0)
		return jsonschema_bad_value(ctx, at, kw, "a non-empty array");
	for (size_t i = 0; i < json_array_size(v) && r == 0; i++)
		r = jsonschema_eval(ctx, json_array_get(v, i), at->instance,
		    at->path, at->base);
	return r;
}

/* No branch matched: the cause says why each did not, in brackets. */
static int
jsonschema_fail_branches(struct jsonschema_ctx *ctx,
    const struct jsonschema_at *at, const json_t *list, const char *what)
{
	char **cause = ctx->cause, *buf = NULL, *here = NULL, *why;
	size_t len, n;
	FILE *f;
	int r;

	if (ctx->is_quiet || cause == NULL)
		return -EINVAL;
	/* Each branch again, with a cause of its own. */
	ctx->cause = &here;
	jsonschema_fail(ctx, at->path, "%s", "");
	if (here == NULL || (f = open_memstream(&buf, &len)) == NULL) {
		ctx->cause = cause;
		free(here);
		return -ENOMEM;
	}
	for (size_t i = 0; i < json_array_size(list); i++) {
		why = NULL;
		ctx->cause = &why;
		jsonschema_eval(ctx, json_array_get(list, i), at->instance,
		    at->path, at->base);
		n = why != NULL && strncmp(why, here, strlen(here)) == 0 ?
		    strlen(here) :
		    0;
		fprintf(f, "%s%s", i > 0 ? "; " : "", why ? why + n : "?");
		free(why);
	}
	ctx->cause = cause;
	free(here);
	if (fclose(f) != 0) {
		free(buf);
		return -ENOMEM;
	}
	r = jsonschema_fail(ctx, at->path, "%s (%s)", what, buf);
	free(buf);
	return r;
}

static int
jsonschema_any_of(struct jsonschema_ctx *ctx,
    const struct jsonschema_keyword *kw, const struct jsonschema_at *at,
    const json_t *v)
{
	int r = -EINVAL;

	if (json_array_size(v) == 0)
		return jsonschema_bad_value(ctx, at, kw, "a non-empty array");
	for (size_t i = 0; i < json_array_size(v) && r == -EINVAL; i++)
		r = jsonschema_try(ctx, json_array_get(v, i), at->instance,
		    at->path, at->base);
	if (r != -EINVAL)
		return r;
	return jsonschema_fail_branches(ctx, at, v,
	    "matches no schema of anyOf");
}

static int
jsonschema_one_of(struct jsonschema_ctx *ctx,
    const struct jsonschema_keyword *kw, const struct jsonschema_at *at,
    const json_t *v)
{
	size_t first = SIZE_MAX;
	int r;

	if (json_array_size(v) == 0)
		return jsonschema_bad_value(ctx, at, kw, "a non-empty array");
	for (size_t i = 0; i < json_array_size(v); i++) {
		r = jsonschema_try(ctx, json_array_get(v, i), at->instance,
		    at->path, at->base);
		if (r != 0 && r != -EINVAL)
			return r;
		if (r == 0 && first != SIZE_MAX)
			return jsonschema_fail(ctx, at->path,
			    "matches more than one schema of oneOf ([%zu] and [%zu])",
			    first, i);
		if (r == 0)
			first = i;
	}
	if (first != SIZE_MAX)
		return 0;
	return jsonschema_fail_branches(ctx, at, v,
	    "matches no schema of oneOf");
}

static int
jsonschema_not(struct jsonschema_ctx *ctx, const struct jsonschema_keyword *kw,
    const struct jsonschema_at *at, const json_t *v)
{
	int r = jsonschema_try(ctx, v, at->instance, at->path, at->base);

	(void)kw;
	if (r == 0)
		return jsonschema_fail(ctx, at->path,
		    "matches the schema in not");
	return r == -EINVAL ? 0 : r;
}

/* if, then, else. */
static int
jsonschema_if(struct jsonschema_ctx *ctx, const struct jsonschema_keyword *kw,
    const struct jsonschema_at *at, const json_t *v)
{
	const json_t *then = json_object_get(at->schema, "then");
	const json_t *otherwise = json_object_get(at->schema, "else");
	int r;

	(void)kw;
	if (then == NULL && otherwise == NULL)
		return 0;
	r = jsonschema_try(ctx, v, at->instance, at->path, at->base);
	if (r != 0 && r != -EINVAL)
		return r;
	if ((r == 0 ? then : otherwise) == NULL)
		return 0;
	return jsonschema_eval(ctx, r == 0 ? then : otherwise, at->instance,
	    at->path, at->base);
}

/* In the order they are checked: the first failure is the cause. */
static const struct jsonschema_keyword jsonschema_keywords[] = {
	{ "type", jsonschema_type, 0, JSON_NULL },
	{ "enum", jsonschema_enum, 0, JSON_NULL },
	{ "const", jsonschema_const, 0, JSON_NULL },
	{ "multipleOf", jsonschema_multiple_of, 0, JSON_NULL },
	{ "maximum", jsonschema_bound, 1, JSON_NULL },
	{ "exclusiveMaximum", jsonschema_bound, 2, JSON_NULL },
	{ "minimum", jsonschema_bound, -1, JSON_NULL },
	{ "exclusiveMinimum", jsonschema_bound, -2, JSON_NULL },
	{ "maxLength", jsonschema_count, 1, JSON_STRING },
	{ "minLength", jsonschema_count, -1, JSON_STRING },
	{ "pattern", jsonschema_pattern, 0, JSON_NULL },
	{ "maxItems", jsonschema_count, 1, JSON_ARRAY },
	{ "minItems", jsonschema_count, -1, JSON_ARRAY },
	{ "uniqueItems", jsonschema_unique_items, 0, JSON_NULL },
	{ "prefixItems", jsonschema_prefix_items, 0, JSON_NULL },
	{ "items", jsonschema_items, 0, JSON_NULL },
	{ "contains", jsonschema_contains, 0, JSON_NULL },
	{ "required", jsonschema_required, 0, JSON_NULL },
	{ "maxProperties", jsonschema_count, 1, JSON_OBJECT },
	{ "minProperties", jsonschema_count, -1, JSON_OBJECT },
	{ "dependentRequired", jsonschema_dependent_required, 0, JSON_NULL },
	{ "properties", jsonschema_properties, 0, JSON_NULL },
	{ "patternProperties", jsonschema_pattern_properties, 0, JSON_NULL },
	{ "additionalProperties", jsonschema_additional_properties, 0,
	    JSON_NULL },
	{ "propertyNames", jsonschema_property_names, 0, JSON_NULL },
	{ "dependentSchemas", jsonschema_dependent_schemas, 0, JSON_NULL },
	{ "$ref", jsonschema_ref, 0, JSON_NULL },
	{ "$dynamicRef", jsonschema_unsupported, 0, JSON_NULL },
	{ "allOf", jsonschema_all_of, 0, JSON_NULL },
	{ "anyOf", jsonschema_any_of, 0, JSON_NULL },
	{ "oneOf", jsonschema_one_of, 0, JSON_NULL },
	{ "not", jsonschema_not, 0, JSON_NULL },
	{ "if", jsonschema_if, 0, JSON_NULL },
	{ "unevaluatedItems", jsonschema_unsupported, 1, JSON_ARRAY },
	{ "unevaluatedProperties", jsonschema_unsupported, 1, JSON_OBJECT },
};

/* Where subschemas are, for the $id and $anchor index. */
static const struct {
	const char *name;
	enum {
		JSONSCHEMA_ONE,
		JSONSCHEMA_LIST,
		JSONSCHEMA_MAP
	} holds;
} jsonschema_subschemas[] = {
	{ "$defs", JSONSCHEMA_MAP },
	{ "prefixItems", JSONSCHEMA_LIST },
	{ "items", JSONSCHEMA_ONE },
	{ "contains", JSONSCHEMA_ONE },
	{ "properties", JSONSCHEMA_MAP },
	{ "patternProperties", JSONSCHEMA_MAP },
	{ "additionalProperties", JSONSCHEMA_ONE },
	{ "propertyNames", JSONSCHEMA_ONE },
	{ "dependentSchemas", JSONSCHEMA_MAP },
	{ "allOf", JSONSCHEMA_LIST },
	{ "anyOf", JSONSCHEMA_LIST },
	{ "oneOf", JSONSCHEMA_LIST },
	{ "not", JSONSCHEMA_ONE },
	{ "if", JSONSCHEMA_ONE },
	{ "then", JSONSCHEMA_ONE },
	{ "else", JSONSCHEMA_ONE },
	{ "unevaluatedItems", JSONSCHEMA_ONE },
	{ "unevaluatedProperties", JSONSCHEMA_ONE },
};

#define JSONSCHEMA_COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* Evaluates schema on instance at path; base is the base URI around it. */
static int
jsonschema_eval(struct jsonschema_ctx *ctx, const json_t *schema,
    const json_t *instance, const struct jsonschema_path *path,
    const char *base)
{
	struct jsonschema_at at = { schema, instance, path, NULL };
	const json_t *v;
	int r = 0;

	if (json_is_true(schema))
		return 0;
	if (json_is_false(schema))
		return jsonschema_fail(ctx, path, "no value is allowed here");
	if (!json_is_object(schema))
		return jsonschema_broken(ctx, path,
		    "a schema is not an object or a boolean");
	if (ctx->depth >= JSONSCHEMA_DEPTH_MAX)
		return jsonschema_broken(ctx, path,
		    "schemas nested deeper than %d levels",
		    JSONSCHEMA_DEPTH_MAX);
	ctx->depth++;
	at.base = jsonschema_base_of(ctx, schema, base);
	for (size_t i = 0; i < JSONSCHEMA_COUNT(jsonschema_keywords); i++) {
		const struct jsonschema_keyword *kw = &jsonschema_keywords[i];

		if ((v = json_object_get(schema, kw->name)) != NULL &&
		    (r = kw->check(ctx, kw, &at, v)) != 0)
			break;
	}
	ctx->depth--;
	return r;
}

/* Indexes the subschemas a keyword's value v holds. */
static int
jsonschema_index_sub(struct jsonschema_ctx *ctx, int holds, const json_t *v,
    const char *base, int depth)
{
	const char *key;
	const json_t *sub;
	size_t i;
	int r = 0;

	if (holds == JSONSCHEMA_ONE)
		return jsonschema_index(ctx, v, base, depth);
	if (holds == JSONSCHEMA_LIST)
		json_array_foreach(jsonschema_mut(v), i, sub)
			if ((r = jsonschema_index(ctx, sub, base, depth)) < 0)
				break;
	if (holds == JSONSCHEMA_MAP)
		json_object_foreach(jsonschema_mut(v), key, sub)
			if ((r = jsonschema_index(ctx, sub, base, depth)) < 0)
				break;
	return r;
}

/* Records the $id and $anchor of schema and of its subschemas. */
static int
jsonschema_index(struct jsonschema_ctx *ctx, const json_t *schema,
    const char *base, int depth)
{
	const json_t *id = json_object_get(schema, "$id"), *v;
	const json_t *anchor = json_object_get(schema, "$anchor");
	char *uri;
	int r = 0;

	if (depth > JSONSCHEMA_DEPTH_MAX)
		return jsonschema_broken(ctx, NULL,
		    "schemas nested deeper than %d levels",
		    JSONSCHEMA_DEPTH_MAX);
	if (json_is_string(id)) {
		uri = jsonschema_uri_resolve(base, json_string_value(id));
		if (uri == NULL)
			return -ENOMEM;
		r = jsonschema_target_add(ctx, schema, uri, NULL);
		free(uri);
		base = ctx->targets[ctx->ntargets - 1].uri;
	}
	if (r == 0 && json_is_string(anchor))
		r = jsonschema_target_add(ctx, schema, base,
		    json_string_value(anchor));
	for (size_t i = 0; i < JSONSCHEMA_COUNT(jsonschema_subschemas); i++)
		if (r == 0 &&
		    (v = json_object_get(schema,
			 jsonschema_subschemas[i].name)) != NULL)
			r = jsonschema_index_sub(ctx,
			    jsonschema_subschemas[i].holds, v, base, depth + 1);
	return r;
}

static void
jsonschema_ctx_free(struct jsonschema_ctx *ctx)
{
	struct jsonschema_regex *re;

	for (size_t i = 0; i < ctx->ntargets; i++) {
		free(ctx->targets[i].uri);
		free(ctx->targets[i].anchor);
	}
	free(ctx->targets);
	while ((re = ctx->regexes) != NULL) {
		ctx->regexes = re->next;
		regfree(&re->re);
		free(re);
	}
}

int
jsonschema_validate(const json_t *schema, const json_t *instance, char **cause)
{
	char *why = NULL;
	struct jsonschema_ctx ctx = { .cause = cause != NULL ? &why : NULL };
	int r = 0;

	/* The document is a resource, with an $id or without. */
	if (!json_is_string(json_object_get(schema, "$id")))
		r = jsonschema_target_add(&ctx, schema, "", NULL);
	if (r == 0)
		r = jsonschema_index(&ctx, schema, "", 0);
	if (r == 0)
		r = jsonschema_eval(&ctx, schema, instance, NULL,
		    jsonschema_base_of(&ctx, schema, ""));
	jsonschema_ctx_free(&ctx);
	if (r == JSONSCHEMA_EBROKEN)
		r = -EINVAL;
	if (r < 0 && r != -ENOMEM && cause != NULL)
		*cause = why;
	else
		free(why);
	return r;
}
