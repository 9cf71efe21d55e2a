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
#define JSONSCHEMA_DEPTH_MAX	 512 /* schemas evaluated, one inside another */
#define JSONSCHEMA_DUMP_MAX	 72  /* bytes of a value quoted in a cause */
/* A broken schema: no anyOf, oneOf, not or if may take it for a mismatch. */
#define JSONSCHEMA_EBROKEN (-EPROTO)

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
	const char *pattern; /* the schema's string: compared by address */
	regex_t re;
};

struct jsonschema_ctx {
	char **cause; /* the one cause of the result; NULL: none wanted */
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
	const char *base;
};

enum jsonschema_sub {
	JSONSCHEMA_SUB_NONE,
	JSONSCHEMA_SUB_ONE,
	JSONSCHEMA_SUB_LIST,
	JSONSCHEMA_SUB_MAP,
};

struct jsonschema_keyword {
	const char *name;
	int (*check)(struct jsonschema_ctx *, const struct jsonschema_keyword *,
	    const struct jsonschema_at *, const json_t *);
	enum jsonschema_sub sub; /* where its subschemas are, for $id */
	int arg;		 /* +-1: maximum, at most; +-2: exclusive */
	json_type type;		 /* what a min/max count measures */
};

static int jsonschema_eval(struct jsonschema_ctx *, const json_t *,
    const json_t *, const struct jsonschema_path *, const char *);
static int jsonschema_fail(struct jsonschema_ctx *,
    const struct jsonschema_path *, const char *, ...)
    __attribute__((format(printf, 3, 4)));
static int jsonschema_error(struct jsonschema_ctx *,
    const struct jsonschema_path *, int, const char *, ...)
    __attribute__((format(printf, 4, 5)));

/* jansson's iterators take a json_t *; nothing here changes a value. */
static json_t *
jsonschema_mut(const json_t *json)
{
	return (json_t *)(uintptr_t)json;
}

/* Writes s as a JSON string, with quotes and escapes. */
static void
jsonschema_quote_write(FILE *f, const char *s, size_t n)
{
	fputc('"', f);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = s[i];

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
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
		jsonschema_quote_write(f, p->key, strlen(p->key));
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
jsonschema_fail(struct jsonschema_ctx *ctx,
    const struct jsonschema_path *path, const char *fmt, ...)
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
jsonschema_error(struct jsonschema_ctx *ctx,
    const struct jsonschema_path *path, int err, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = jsonschema_vcause(ctx, path,
	    err == JSONSCHEMA_EBROKEN ? "invalid schema: " : "", fmt, ap);
	va_end(ap);
	return r < 0 ? r : err;
}

#define jsonschema_broken(ctx, path, ...) \
	jsonschema_error((ctx), (path), JSONSCHEMA_EBROKEN, __VA_ARGS__)

struct jsonschema_dump {
	char buf[JSONSCHEMA_DUMP_MAX + 4];
	size_t len;
	bool is_full;
};

/* Collects at most JSONSCHEMA_DUMP_MAX bytes, then "...". */
static int
jsonschema_dump_add(const char *s, size_t n, void *data)
{
	struct jsonschema_dump *d = data;
	size_t room = JSONSCHEMA_DUMP_MAX - d->len;

	if (d->is_full)
		return -1;
	memcpy(d->buf + d->len, s, n < room ? n : room);
	d->len += n < room ? n : room;
	if (n <= room)
		return 0;
	strcpy(d->buf + d->len, "...");
	d->len += 3;
	d->is_full = true;
	return -1;
}

/* A mismatch whose message shows a value, cut short: before, v, after. */
static int
jsonschema_fail_value(struct jsonschema_ctx *ctx,
    const struct jsonschema_path *path, const char *before, const json_t *v,
    const char *after)
{
	struct jsonschema_dump d = { .len = 0, .is_full = false };

	if (ctx->is_quiet || ctx->cause == NULL)
		return -EINVAL;
	json_dump_callback(v, jsonschema_dump_add, &d,
	    JSON_ENCODE_ANY | JSON_COMPACT | JSON_REAL_PRECISION(15));
	d.buf[d.len] = '\0';
	return jsonschema_fail(ctx, path, "%s%s%s", before, d.buf, after);
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

/* Numbers by value: 1 equals 1.0, integers compare exactly. */
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

static bool
jsonschema_is_integer(const json_t *v)
{
	return json_is_integer(v) ||
	    (json_is_real(v) && json_real_value(v) == trunc(json_real_value(v)));
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
		json_object_foreach (jsonschema_mut(a), key, v)
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

static bool
jsonschema_type_matches(const char *name, const json_t *v)
{
	if (strcmp(name, "integer") == 0)
		return jsonschema_is_integer(v);
	if (strcmp(name, "number") == 0)
		return json_is_number(v);
	return strcmp(name, jsonschema_type_name(v)) == 0;
}

/* URIs (RFC 3986): a reference's parts, resolution, dot segments. */

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
	if (*s == '#')
		u->fragment = (struct jsonschema_span){ s + 1, (int)strlen(s + 1) };
}

/* RFC 3986 5.2.4 on a path of its own; the result is never longer. */
static void
jsonschema_uri_remove_dots(char *in)
{
	char *out = in, *start = in;

	while (*in != '\0') {
		if (strncmp(in, "../", 3) == 0 || strncmp(in, "./", 2) == 0)
			in += in[1] == '/' ? 2 : 3;
		else if (strncmp(in, "/./", 3) == 0 || strcmp(in, "/.") == 0)
			*(in += 1) = '/';
		else if (strncmp(in, "/../", 4) == 0 || strcmp(in, "/..") == 0) {
			*(in += 2) = '/';
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

/* ref resolved against base, fragment included; NULL when out of memory. */
static char *
jsonschema_uri_resolve(const char *base, const char *ref)
{
	struct jsonschema_uri b, r, *auth = &r, *qry = &r;
	char *path = NULL, *out = NULL;
	size_t len;
	FILE *f;

	jsonschema_uri_parse(base, &b);
	jsonschema_uri_parse(ref, &r);
	if ((f = open_memstream(&path, &len)) == NULL)
		return NULL;
	if (r.scheme.p == NULL && r.authority.p == NULL) {
		auth = &b;
		if (r.path.n == 0 && r.query.p == NULL)
			qry = &b;
		if (r.path.n == 0)
			fprintf(f, "%.*s", b.path.n, b.path.p);
		else if (r.path.p[0] != '/') {
			const char *slash = memrchr(b.path.p, '/', b.path.n);

			if (b.authority.p != NULL && b.path.n == 0)
				fputc('/', f);
			else if (slash != NULL)
				fprintf(f, "%.*s", (int)(slash - b.path.p + 1),
				    b.path.p);
		}
	}
	fprintf(f, "%.*s", r.path.n, r.path.p);
	if (fclose(f) != 0) {
		free(path);
		return NULL;
	}
	jsonschema_uri_remove_dots(path);
	if (asprintf(&out, "%.*s%s%s%.*s%s%s%.*s#%.*s",
		(r.scheme.p ? r : b).scheme.n, (r.scheme.p ? r : b).scheme.p,
		(r.scheme.p ? r : b).scheme.p ? ":" : "",
		auth->authority.p ? "//" : "", auth->authority.n,
		auth->authority.p, path, qry->query.p ? "?" : "", qry->query.n,
		qry->query.p, r.fragment.n, r.fragment.p) < 0)
		out = NULL;
	free(path);
	return out;
}

/* The $id index: resources and anchors, found before validating. */

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

static const struct jsonschema_target *
jsonschema_target_find(const struct jsonschema_ctx *ctx, const json_t *schema,
    const char *uri, const char *anchor)
{
	for (size_t i = 0; i < ctx->ntargets; i++) {
		const struct jsonschema_target *t = &ctx->targets[i];

		if ((schema != NULL && t->schema != schema) ||
		    (uri != NULL && strcmp(t->uri, uri) != 0) ||
		    (t->anchor == NULL) != (anchor == NULL) ||
		    (anchor != NULL && strcmp(t->anchor, anchor) != 0))
			continue;
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

/* Decodes %XX escapes in place. */
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

/* Follows a JSON pointer from a resource; *base follows the $ids passed. */
static const json_t *
jsonschema_pointer(const struct jsonschema_ctx *ctx, const json_t *node,
    char *ptr, const char **base)
{
	for (char *seg = ptr + 1, *end; node != NULL; seg = end + 1) {
		char *in = seg, *out = seg, *digits;

		if ((end = strchr(seg, '/')) != NULL)
			*end = '\0';
		for (; *in != '\0'; in++)
			*out++ = in[0] == '~' && (in[1] == '0' || in[1] == '1') ?
			    (++in)[0] == '0' ? '~' : '/' :
			    in[0];
		*out = '\0';
		if (seg != ptr + 1)
			*base = jsonschema_base_of(ctx, node, *base);
		if (json_is_array(node) && seg[strspn(seg, "0123456789")] ==
			'\0' && (seg[0] != '0' || seg[1] == '\0') && *seg)
			node = json_array_get(node, strtoul(seg, &digits, 10));
		else
			node = json_object_get(node, seg);
		if (end == NULL)
			break;
	}
	return node;
}

/* The schema a $ref names and the base URI around it. */
static int
jsonschema_resolve(struct jsonschema_ctx *ctx, const struct jsonschema_at *at,
    const char *ref, const json_t **ret, const char **ret_base)
{
	const struct jsonschema_target *res;
	char *uri = jsonschema_uri_resolve(at->base, ref), *frag;
	int r = 0;

	if (uri == NULL)
		return -ENOMEM;
	frag = uri + strcspn(uri, "#");
	if (*frag != '\0')
		*frag++ = '\0';
	jsonschema_percent_decode(frag);
	if ((res = jsonschema_target_find(ctx, NULL, uri, NULL)) == NULL)
		r = jsonschema_error(ctx, at->path, -ENOTSUP,
		    "remote $ref \"%s\" is not supported (never fetched)", ref);
	else if (*frag == '\0' || *frag == '/') {
		*ret_base = res->uri;
		*ret = *frag == '\0' ? res->schema :
		    jsonschema_pointer(ctx, res->schema, frag, ret_base);
	} else if ((res = jsonschema_target_find(ctx, NULL, uri, frag)) !=
	    NULL) {
		*ret = res->schema;
		*ret_base = res->uri;
	} else
		*ret = NULL;
	if (r == 0 && *ret == NULL)
		r = jsonschema_broken(ctx, at->path,
		    "$ref \"%s\" resolves to nothing", ref);
	free(uri);
	return r;
}

/* Patterns: ECMA-262 syntax translated to POSIX extended expressions. */

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

static int
jsonschema_hex(const char *s, int n)
{
	char buf[5] = { 0 };

	for (int i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return -1;
	memcpy(buf, s, n);
	return (int)strtol(buf, NULL, 16);
}

/* The code point of the character escape at s (after the backslash), or
 * -1; *len is how long it is. */
static long
jsonschema_regex_char(const char *s, size_t *len)
{
	static const char controls[] = "t\tn\nr\rf\fv\v";
	const char *c = s[0] != '\0' ? strchr(controls, s[0]) : NULL;
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

/* Writes code point cp as itself: escaped when special, in UTF-8. */
static void
jsonschema_regex_literal(FILE *f, long cp)
{
	if (cp < 0x80 && strchr(".[]()*+?{}|^$\\", (int)cp) != NULL)
		fputc('\\', f);
	if (cp < 0x80)
		fputc((int)cp, f);
	else if (cp < 0x800)
		fprintf(f, "%c%c", (int)(0xc0 | cp >> 6), (int)(0x80 | (cp & 0x3f)));
	else if (cp < 0x10000)
		fprintf(f, "%c%c%c", (int)(0xe0 | cp >> 12),
		    (int)(0x80 | (cp >> 6 & 0x3f)), (int)(0x80 | (cp & 0x3f)));
	else
		fprintf(f, "%c%c%c%c", (int)(0xf0 | cp >> 18),
		    (int)(0x80 | (cp >> 12 & 0x3f)),
		    (int)(0x80 | (cp >> 6 & 0x3f)), (int)(0x80 | (cp & 0x3f)));
}

/* One member of a bracket expression: a code point, -2 for a class
 * written to f, -1 (and *what) for what POSIX brackets cannot hold. */
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
	if (cp < 0 || cp >= 0x80 || cp == 0 ||
	    (cp == '[' && strchr(":.=", **sp) != NULL && **sp != '\0')) {
		*what = "this in a bracket expression";
		return -1;
	}
	return cp;
}

/* Translates "[...]" at *sp; "]" goes first, "-" last, "^" not first. */
static int
jsonschema_regex_bracket(const char **sp, FILE *out, const char **what)
{
	const char *s = *sp + 1;
	bool is_negated = *s == '^', has[128] = { false };
	char *body = NULL;
	size_t len;
	long cp, hi;
	FILE *f;

	s += is_negated;
	if (*s == ']' || (f = open_memstream(&body, &len)) == NULL) {
		*what = "an empty class";
		return *s == ']' ? -ENOTSUP : -ENOMEM;
	}
	while (*s != ']' && *s != '\0') {
		if ((cp = jsonschema_regex_member(&s, f, what)) == -1)
			break;
		if (cp >= 0 && s[0] == '-' && s[1] != ']' && s[1] != '\0') {
			s++;
			if ((hi = jsonschema_regex_member(&s, f, what)) < cp)
				break;
			fprintf(f, "%c-%c", (int)cp, (int)hi);
		} else if (cp >= 0 && strchr("]-^", (int)cp) != NULL)
			has[cp] = true;
		else if (cp >= 0)
			fputc((int)cp, f);
	}
	fclose(f);
	if (*s != ']') {
		free(body);
		*what = *what != NULL ? *what : "a bracket expression";
		return -ENOTSUP;
	}
	if (!is_negated && !has[']'] && *body == '\0' && has['^'] && !has['-'])
		fputs("\\^", out);
	else
		fprintf(out, "[%s%s%s%s%s%s]", is_negated ? "^" : "",
		    has[']'] ? "]" : "", has['-'] && *body == '\0' ? "-" : "",
		    body, has['^'] ? "^" : "",
		    has['-'] && *body != '\0' ? "-" : "");
	free(body);
	*sp = s + 1;
	return 0;
}

/* Translates the escape at *sp (a backslash) outside brackets. */
static int
jsonschema_regex_escape(const char **sp, FILE *out, const char **what)
{
	const char *s = *sp, *cls = jsonschema_regex_class(tolower(s[1]));
	size_t len;
	long cp;

	*sp += 2;
	if (cls != NULL && s[1] != '\0')
		fprintf(out, "[%s%s]", isupper(s[1]) ? "^" : "", cls);
	else if (s[1] == 'b' || s[1] == 'B')
		fprintf(out, "\\%c", s[1]); /* a GNU extension */
	else if ((cp = jsonschema_regex_char(s + 1, &len)) > 0) {
		jsonschema_regex_literal(out, cp);
		*sp = s + 1 + len;
	} else {
		*what = isdigit(s[1]) ? "a backreference" : "this escape";
		return -ENOTSUP;
	}
	return 0;
}

/* Translates an ECMA-262 pattern; -ENOTSUP with *what naming a feature. */
static int
jsonschema_regex_translate(const char *s, FILE *out, const char **what)
{
	int r = 0;
	size_t n;

	while (*s != '\0' && r == 0) {
		if (*s == '\\')
			r = jsonschema_regex_escape(&s, out, what);
		else if (*s == '[')
			r = jsonschema_regex_bracket(&s, out, what);
		else if (strncmp(s, "(?:", 3) == 0 ||
		    (strncmp(s, "(?<", 3) == 0 && isalpha(s[3]))) {
			fputc('(', out);
			s = s[2] == ':' ? s + 3 : strchrnul(s, '>') + 1;
		} else if (strncmp(s, "(?", 2) == 0) {
			*what = "lookaround";
			r = -ENOTSUP;
		} else if (*s == '{' &&
		    (n = strspn(s + 1, "0123456789")) > 0 &&
		    (n += strspn(s + 1 + n, ",")) > 0 &&
		    (n += strspn(s + 1 + n, "0123456789")) > 0 && s[1 + n] == '}') {
			fprintf(out, "%.*s", (int)n + 2, s);
			s += n + 2 + (s[n + 2] == '?');
		} else if (*s == '{' || *s == '}') {
			fprintf(out, "\\%c", *s++);
		} else {
			fputc(*s, out);
			s += 1 + (strchr("*+?", *s) != NULL && s[1] == '?');
		}
	}
	return r;
}

/* Searches s for pattern: 1 found, 0 not, or -ENOTSUP, -ENOMEM. */
static int
jsonschema_regex_search(struct jsonschema_ctx *ctx,
    const struct jsonschema_path *path, const char *pattern, const char *s,
    size_t n)
{
	struct jsonschema_regex *re;
	regmatch_t m = { .rm_so = 0, .rm_eo = (regoff_t)n };
	const char *what = NULL;
	char *posix = NULL;
	size_t len;
	FILE *f;
	int r;

	for (re = ctx->regexes; re != NULL && re->pattern != pattern;
	     re = re->next)
		;
	if (re == NULL) {
		if ((re = calloc(1, sizeof *re)) == NULL ||
		    (f = open_memstream(&posix, &len)) == NULL) {
			free(re);
			return -ENOMEM;
		}
		r = jsonschema_regex_translate(pattern, f, &what);
		if (fclose(f) == 0 && r == 0 &&
		    regcomp(&re->re, posix, REG_EXTENDED | REG_NOSUB) != 0) {
			what = "what POSIX regcomp refuses";
			r = -ENOTSUP;
		}
		free(posix);
		if (r < 0) {
			free(re);
			return r == -ENOMEM ? r :
					      jsonschema_error(ctx, path, r,
						  "pattern %s: %s is not supported",
						  pattern, what);
		}
		re->pattern = pattern;
		re->next = ctx->regexes;
		ctx->regexes = re;
	}
	return regexec(&re->re, s, 1, &m, REG_STARTEND) == 0;
}

/* The keywords. Each ignores an instance of a type it does not apply to. */

#define JSONSCHEMA_CHECK(name)                                                \
	static int name(struct jsonschema_ctx *ctx,                           \
	    const struct jsonschema_keyword *kw, const struct jsonschema_at *at, \
	    const json_t *v)

#define jsonschema_invalid_value(ctx, at, kw, what) \
	jsonschema_broken((ctx), (at)->path, "%s is not %s", (kw)->name, (what))

JSONSCHEMA_CHECK(jsonschema_check_type)
{
	bool is_list = json_is_array(v);
	size_t n = is_list ? json_array_size(v) : 1;
	char expected[128] = "";
	const json_t *t;

	for (size_t i = 0; i < n; i++) {
		t = is_list ? json_array_get(v, i) : v;
		if (!json_is_string(t) || strlen(json_string_value(t)) > 16)
			return jsonschema_invalid_value(ctx, at, kw,
			    "a type name or a list of them");
		if (jsonschema_type_matches(json_string_value(t), at->instance))
			return 0;
		snprintf(expected + strlen(expected),
		    sizeof expected - strlen(expected), "%s%s",
		    i > 0 ? " or " : "", json_string_value(t));
	}
	return jsonschema_fail(ctx, at->path, "expected %s, got %s", expected,
	    jsonschema_type_name(at->instance));
}

JSONSCHEMA_CHECK(jsonschema_check_enum)
{
	if (!json_is_array(v))
		return jsonschema_invalid_value(ctx, at, kw, "an array");
	for (size_t i = 0; i < json_array_size(v); i++)
		if (jsonschema_equal(json_array_get(v, i), at->instance))
			return 0;
	return jsonschema_fail_value(ctx, at->path, "expected one of ", v, "");
}

JSONSCHEMA_CHECK(jsonschema_check_const)
{
	(void)kw;
	if (jsonschema_equal(v, at->instance))
		return 0;
	return jsonschema_fail_value(ctx, at->path, "expected ", v, "");
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

JSONSCHEMA_CHECK(jsonschema_check_bound)
{
	static const char *const words[] = { "greater than", "at least", "",
		"at most", "less than" };
	bool is_exclusive = abs(kw->arg) == 2;
	char limit[32], got[32];
	int c;

	if (!json_is_number(v))
		return jsonschema_invalid_value(ctx, at, kw, "a number");
	if (!json_is_number(at->instance))
		return 0;
	c = jsonschema_number_cmp(at->instance, v) * (kw->arg > 0 ? 1 : -1);
	if (c < 0 || (c == 0 && !is_exclusive))
		return 0;
	jsonschema_number_format(v, limit, sizeof limit);
	jsonschema_number_format(at->instance, got, sizeof got);
	return jsonschema_fail(ctx, at->path, "expected %s %s, got %s",
	    words[kw->arg + 2], limit, got);
}

JSONSCHEMA_CHECK(jsonschema_check_multiple)
{
	char limit[32], got[32];
	double q;

	if (!json_is_number(v) || json_number_value(v) <= 0)
		return jsonschema_invalid_value(ctx, at, kw,
		    "a number greater than 0");
	if (!json_is_number(at->instance))
		return 0;
	if (json_is_integer(v) && json_is_integer(at->instance)) {
		if (json_integer_value(at->instance) % json_integer_value(v) ==
		    0)
			return 0;
	} else {
		q = json_number_value(at->instance) / json_number_value(v);
		if (isfinite(q) && fabs(q - round(q)) <= 1e-9 * fmax(1, fabs(q)))
			return 0;
	}
	jsonschema_number_format(v, limit, sizeof limit);
	jsonschema_number_format(at->instance, got, sizeof got);
	return jsonschema_fail(ctx, at->path, "expected a multiple of %s, got %s",
	    limit, got);
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

/* minLength, maxLength, minItems, maxItems, minProperties, maxProperties. */
JSONSCHEMA_CHECK(jsonschema_check_count)
{
	static const char *const units[][2] = { [JSON_OBJECT] = { "property",
							"properties" },
		[JSON_ARRAY] = { "item", "items" },
		[JSON_STRING] = { "character", "characters" } };
	size_t limit, n;

	if (!jsonschema_is_integer(v) || json_number_value(v) < 0)
		return jsonschema_invalid_value(ctx, at, kw,
		    "a non-negative integer");
	if (json_typeof(at->instance) != kw->type)
		return 0;
	limit = json_number_value(v) > (double)SIZE_MAX ?
	    SIZE_MAX :
	    (size_t)json_number_value(v);
	n = json_is_string(at->instance) ? jsonschema_utf8_length(at->instance) :
	    json_is_array(at->instance)	 ? json_array_size(at->instance) :
					   json_object_size(at->instance);
	if (kw->arg > 0 ? n <= limit : n >= limit)
		return 0;
	return jsonschema_fail(ctx, at->path, "expected at %s %zu %s, got %zu",
	    kw->arg > 0 ? "most" : "least", limit, units[kw->type][limit != 1],
	    n);
}

JSONSCHEMA_CHECK(jsonschema_check_pattern)
{
	int r;

	if (!json_is_string(v))
		return jsonschema_invalid_value(ctx, at, kw, "a string");
	if (!json_is_string(at->instance))
		return 0;
	r = jsonschema_regex_search(ctx, at->path, json_string_value(v),
	    json_string_value(at->instance), json_string_length(at->instance));
	if (r != 0)
		return r > 0 ? 0 : r;
	return jsonschema_fail_value(ctx, at->path, "does not match the pattern ",
	    v, "");
}

/* Evaluates schema on items [from, to) of the array instance. */
static int
jsonschema_check_each_item(struct jsonschema_ctx *ctx,
    const struct jsonschema_at *at, const json_t *schema, size_t from,
    size_t to)
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

JSONSCHEMA_CHECK(jsonschema_check_prefix_items)
{
	size_t n = json_array_size(at->instance);

	if (!json_is_array(v))
		return jsonschema_invalid_value(ctx, at, kw, "an array");
	if (json_array_size(v) < n)
		n = json_array_size(v);
	return json_is_array(at->instance) ?
	    jsonschema_check_each_item(ctx, at, v, 0, n) :
	    0;
}

JSONSCHEMA_CHECK(jsonschema_check_items)
{
	size_t from = json_array_size(json_object_get(at->schema, "prefixItems"));

	(void)kw;
	if (!json_is_array(at->instance))
		return 0;
	if (json_is_array(v))
		return jsonschema_error(ctx, at->path, -ENOTSUP,
		    "items as an array (before 2020-12) is not supported");
	return jsonschema_check_each_item(ctx, at, v, from,
	    json_array_size(at->instance));
}

/* The count of a keyword of the schema: def when absent. */
static int
jsonschema_get_count(struct jsonschema_ctx *ctx,
    const struct jsonschema_at *at, const char *name, double def, double *ret)
{
	const json_t *v = json_object_get(at->schema, name);

	*ret = v != NULL ? json_number_value(v) : def;
	if (v == NULL || (jsonschema_is_integer(v) && *ret >= 0))
		return 0;
	return jsonschema_broken(ctx, at->path,
	    "%s is not a non-negative integer", name);
}

JSONSCHEMA_CHECK(jsonschema_check_contains)
{
	double min, max, n = 0;
	int r;

	(void)kw;
	if (!json_is_array(at->instance))
		return 0;
	if ((r = jsonschema_get_count(ctx, at, "minContains", 1, &min)) < 0 ||
	    (r = jsonschema_get_count(ctx, at, "maxContains", INFINITY,
		 &max)) < 0)
		return r;
	for (size_t i = 0; i < json_array_size(at->instance); i++) {
		struct jsonschema_path p = { at->path, NULL, i };

		r = jsonschema_try(ctx, v, json_array_get(at->instance, i), &p,
		    at->base);
		if (r != 0 && r != -EINVAL)
			return r;
		n += r == 0;
	}
	if (n < min || n > max)
		return jsonschema_fail(ctx, at->path,
		    "expected at %s %.0f items matching contains, got %.0f",
		    n < min ? "least" : "most", n < min ? min : max, n);
	return 0;
}

JSONSCHEMA_CHECK(jsonschema_check_unique)
{
	size_t n = json_array_size(at->instance);

	if (!json_is_boolean(v))
		return jsonschema_invalid_value(ctx, at, kw, "a boolean");
	if (json_is_false(v) || !json_is_array(at->instance))
		return 0;
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			if (jsonschema_equal(json_array_get(at->instance, i),
				json_array_get(at->instance, j)))
				return jsonschema_fail(ctx, at->path,
				    "expected unique items, [%zu] and [%zu] are equal",
				    i, j);
	return 0;
}

/* Checks that names is an array of strings; the message names the keyword. */
static int
jsonschema_check_names_list(struct jsonschema_ctx *ctx,
    const struct jsonschema_at *at, const char *keyword, const json_t *names)
{
	bool is_ok = json_is_array(names);

	for (size_t i = 0; is_ok && i < json_array_size(names); i++)
		is_ok = json_is_string(json_array_get(names, i));
	if (is_ok)
		return 0;
	return jsonschema_broken(ctx, at->path, "%s is not a list of names",
	    keyword);
}

/* The first name of the list that the instance object lacks, or NULL. */
static const json_t *
jsonschema_missing(const json_t *instance, const json_t *names)
{
	for (size_t i = 0; i < json_array_size(names); i++)
		if (json_object_get(instance,
			json_string_value(json_array_get(names, i))) == NULL)
			return json_array_get(names, i);
	return NULL;
}

JSONSCHEMA_CHECK(jsonschema_check_required)
{
	const json_t *name;
	int r;

	if ((r = jsonschema_check_names_list(ctx, at, kw->name, v)) < 0)
		return r;
	if (!json_is_object(at->instance) ||
	    (name = jsonschema_missing(at->instance, v)) == NULL)
		return 0;
	return jsonschema_fail_value(ctx, at->path, "missing required property ",
	    name, "");
}

JSONSCHEMA_CHECK(jsonschema_check_dependent_required)
{
	const json_t *names, *name;
	const char *key;
	int r;

	if (!json_is_object(v))
		return jsonschema_invalid_value(ctx, at, kw, "an object");
	json_object_foreach (jsonschema_mut(v), key, names) {
		if ((r = jsonschema_check_names_list(ctx, at, kw->name, names)) <
		    0)
			return r;
		if (!json_is_object(at->instance) ||
		    json_object_get(at->instance, key) == NULL ||
		    (name = jsonschema_missing(at->instance, names)) == NULL)
			continue;
		return jsonschema_fail_value(ctx, at->path,
		    "missing property ", name, " (dependentRequired)");
	}
	return 0;
}

/* Evaluates v on the instance's property key, when there is one. */
static int
jsonschema_eval_property(struct jsonschema_ctx *ctx,
    const struct jsonschema_at *at, const char *key, const json_t *v)
{
	struct jsonschema_path p = { at->path, key, 0 };
	const json_t *value = json_object_get(at->instance, key);

	return value != NULL ? jsonschema_eval(ctx, v, value, &p, at->base) : 0;
}

JSONSCHEMA_CHECK(jsonschema_check_properties)
{
	const char *key;
	const json_t *sub;
	int r;

	if (!json_is_object(v))
		return jsonschema_invalid_value(ctx, at, kw, "an object");
	if (!json_is_object(at->instance))
		return 0;
	json_object_foreach (jsonschema_mut(v), key, sub)
		if ((r = jsonschema_eval_property(ctx, at, key, sub)) != 0)
			return r;
	return 0;
}


JSONSCHEMA_CHECK(jsonschema_check_pattern_properties)
{
	const char *key, *pattern;
	const json_t *value, *sub;
	int r;

	if (!json_is_object(v))
		return jsonschema_invalid_value(ctx, at, kw, "an object");
	if (!json_is_object(at->instance))
		return 0;
	json_object_foreach (jsonschema_mut(at->instance), key, value)
		json_object_foreach (jsonschema_mut(v), pattern, sub) {
			r = jsonschema_regex_search(ctx, at->path, pattern, key,
			    strlen(key));
			if (r > 0)
				r = jsonschema_eval_property(ctx, at, key, sub);
			if (r != 0)
				return r;
		}
	return 0;
}

/* Whether key is in properties or matches a patternProperties pattern. */
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
	json_object_foreach (jsonschema_mut(patterns), pattern, sub)
		if ((r = jsonschema_regex_search(ctx, at->path, pattern, key,
			 strlen(key))) != 0)
			break;
	return r;
}

JSONSCHEMA_CHECK(jsonschema_check_additional)
{
	const char *key;
	const json_t *value;
	int r;

	(void)kw;
	if (!json_is_object(at->instance))
		return 0;
	json_object_foreach (jsonschema_mut(at->instance), key, value) {
		if ((r = jsonschema_is_evaluated(ctx, at, key)) != 0) {
			if (r < 0)
				return r;
			continue;
		}
		if (json_is_false(v))
			return jsonschema_fail_key(ctx, at->path,
			    "unexpected property ", key, "");
		if ((r = jsonschema_eval_property(ctx, at, key, v)) != 0)
			return r;
	}
	return 0;
}

JSONSCHEMA_CHECK(jsonschema_check_property_names)
{
	const char *key;
	const json_t *value;
	json_t *name;
	int r;

	(void)kw;
	if (!json_is_object(at->instance))
		return 0;
	json_object_foreach (jsonschema_mut(at->instance), key, value) {
		if ((name = json_string(key)) == NULL)
			return -ENOMEM;
		r = jsonschema_try(ctx, v, name, at->path, at->base);
		json_decref(name);
		if (r == -EINVAL)
			return jsonschema_fail_key(ctx, at->path,
			    "property name ", key, " does not match propertyNames");
		if (r != 0)
			return r;
	}
	return 0;
}

JSONSCHEMA_CHECK(jsonschema_check_dependent_schemas)
{
	const char *key;
	const json_t *sub;
	int r;

	if (!json_is_object(v))
		return jsonschema_invalid_value(ctx, at, kw, "an object");
	if (!json_is_object(at->instance))
		return 0;
	json_object_foreach (jsonschema_mut(v), key, sub)
		if (json_object_get(at->instance, key) != NULL &&
		    (r = jsonschema_eval(ctx, sub, at->instance, at->path,
			 at->base)) != 0)
			return r;
	return 0;
}

/* Checks that v is a non-empty array of schemas, for allOf, anyOf, oneOf. */
static int
jsonschema_check_list(struct jsonschema_ctx *ctx,
    const struct jsonschema_keyword *kw, const struct jsonschema_at *at,
    const json_t *v)
{
	if (json_is_array(v) && json_array_size(v) > 0)
		return 0;
	return jsonschema_invalid_value(ctx, at, kw, "a non-empty array");
}

JSONSCHEMA_CHECK(jsonschema_check_all_of)
{
	int r = jsonschema_check_list(ctx, kw, at, v);

	for (size_t i = 0; i < json_array_size(v) && r == 0; i++)
		r = jsonschema_eval(ctx, json_array_get(v, i), at->instance,
		    at->path, at->base);
	return r;
}

/* "$.x: " for the current place: what causes inside it start with. */
static char *
jsonschema_path_prefix(const struct jsonschema_path *path)
{
	char *buf = NULL;
	size_t len;
	FILE *f = open_memstream(&buf, &len);

	if (f == NULL)
		return NULL;
	jsonschema_path_write(f, path);
	fputs(": ", f);
	if (fclose(f) == 0)
		return buf;
	free(buf);
	return NULL;
}

/* No branch matched: the cause says why each did not, in brackets. */
static int
jsonschema_fail_branches(struct jsonschema_ctx *ctx,
    const struct jsonschema_at *at, const json_t *list, const char *what)
{
	char **cause = ctx->cause, *buf = NULL, *why, *prefix;
	size_t len, plen;
	FILE *f;
	int r;

	if (ctx->is_quiet || cause == NULL)
		return -EINVAL;
	if ((prefix = jsonschema_path_prefix(at->path)) == NULL ||
	    (f = open_memstream(&buf, &len)) == NULL) {
		free(prefix);
		return -ENOMEM;
	}
	plen = strlen(prefix);
	for (size_t i = 0; i < json_array_size(list); i++) {
		why = NULL;
		ctx->cause = &why;
		jsonschema_eval(ctx, json_array_get(list, i), at->instance,
		    at->path, at->base);
		ctx->cause = cause;
		fprintf(f, "%s%s", i > 0 ? "; " : "",
		    why == NULL			      ? "?" :
			strncmp(why, prefix, plen) == 0 ? why + plen :
							  why);
		free(why);
	}
	free(prefix);
	if (fclose(f) != 0) {
		free(buf);
		return -ENOMEM;
	}
	r = jsonschema_fail(ctx, at->path, "%s (%s)", what, buf);
	free(buf);
	return r;
}

JSONSCHEMA_CHECK(jsonschema_check_any_of)
{
	int r = jsonschema_check_list(ctx, kw, at, v);

	for (size_t i = 0; i < json_array_size(v) && r == 0; i++) {
		r = jsonschema_try(ctx, json_array_get(v, i), at->instance,
		    at->path, at->base);
		if (r == 0)
			return 0;
		r = r == -EINVAL ? 0 : r;
	}
	return r < 0 ? r :
		       jsonschema_fail_branches(ctx, at, v,
			   "matches no schema of anyOf");
}

JSONSCHEMA_CHECK(jsonschema_check_one_of)
{
	int r = jsonschema_check_list(ctx, kw, at, v);
	size_t first = SIZE_MAX;

	for (size_t i = 0; i < json_array_size(v) && r == 0; i++) {
		r = jsonschema_try(ctx, json_array_get(v, i), at->instance,
		    at->path, at->base);
		if (r == 0 && first != SIZE_MAX)
			return jsonschema_fail(ctx, at->path,
			    "matches more than one schema of oneOf ([%zu] and [%zu])",
			    first, i);
		if (r == 0)
			first = i;
		r = r == -EINVAL ? 0 : r;
	}
	if (r < 0 || first != SIZE_MAX)
		return r;
	return jsonschema_fail_branches(ctx, at, v,
	    "matches no schema of oneOf");
}

JSONSCHEMA_CHECK(jsonschema_check_not)
{
	int r = jsonschema_try(ctx, v, at->instance, at->path, at->base);

	(void)kw;
	if (r == 0)
		return jsonschema_fail(ctx, at->path,
		    "matches the schema in not");
	return r == -EINVAL ? 0 : r;
}

JSONSCHEMA_CHECK(jsonschema_check_if)
{
	int r = jsonschema_try(ctx, v, at->instance, at->path, at->base);
	const json_t *branch;

	(void)kw;
	if (r != 0 && r != -EINVAL)
		return r;
	branch = json_object_get(at->schema, r == 0 ? "then" : "else");
	if (branch == NULL)
		return 0;
	return jsonschema_eval(ctx, branch, at->instance, at->path, at->base);
}

JSONSCHEMA_CHECK(jsonschema_check_ref)
{
	const json_t *target = NULL;
	const char *base = NULL;
	int r;

	if (!json_is_string(v))
		return jsonschema_invalid_value(ctx, at, kw, "a string");
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
JSONSCHEMA_CHECK(jsonschema_check_unsupported)
{
	if (kw->arg != 0 &&
	    (json_is_true(v) || json_typeof(at->instance) != kw->type))
		return 0;
	return jsonschema_error(ctx, at->path, -ENOTSUP,
	    "%s is not supported", kw->name);
}

/*
 * In the order they are checked; the first failure is the cause. The
 * keywords without a check are read by another (then, else, $defs) or
 * only hold subschemas for the $id index.
 */
static const struct jsonschema_keyword jsonschema_keywords[] = {
	{ "type", jsonschema_check_type, JSONSCHEMA_SUB_NONE, 0, JSON_NULL },
	{ "enum", jsonschema_check_enum, JSONSCHEMA_SUB_NONE, 0, JSON_NULL },
	{ "const", jsonschema_check_const, JSONSCHEMA_SUB_NONE, 0, JSON_NULL },
	{ "multipleOf", jsonschema_check_multiple, JSONSCHEMA_SUB_NONE, 0, JSON_NULL },
	{ "maximum", jsonschema_check_bound, JSONSCHEMA_SUB_NONE, 1, JSON_NULL },
	{ "exclusiveMaximum", jsonschema_check_bound, JSONSCHEMA_SUB_NONE, 2, JSON_NULL },
	{ "minimum", jsonschema_check_bound, JSONSCHEMA_SUB_NONE, -1, JSON_NULL },
	{ "exclusiveMinimum", jsonschema_check_bound, JSONSCHEMA_SUB_NONE, -2, JSON_NULL },
	{ "maxLength", jsonschema_check_count, JSONSCHEMA_SUB_NONE, 1, JSON_STRING },
	{ "minLength", jsonschema_check_count, JSONSCHEMA_SUB_NONE, -1, JSON_STRING },
	{ "pattern", jsonschema_check_pattern, JSONSCHEMA_SUB_NONE, 0, JSON_NULL },
	{ "maxItems", jsonschema_check_count, JSONSCHEMA_SUB_NONE, 1, JSON_ARRAY },
	{ "minItems", jsonschema_check_count, JSONSCHEMA_SUB_NONE, -1, JSON_ARRAY },
	{ "uniqueItems", jsonschema_check_unique, JSONSCHEMA_SUB_NONE, 0, JSON_NULL },
	{ "prefixItems", jsonschema_check_prefix_items, JSONSCHEMA_SUB_LIST, 0, JSON_NULL },
	{ "items", jsonschema_check_items, JSONSCHEMA_SUB_ONE, 0, JSON_NULL },
	{ "contains", jsonschema_check_contains, JSONSCHEMA_SUB_ONE, 0, JSON_NULL },
	{ "required", jsonschema_check_required, JSONSCHEMA_SUB_NONE, 0, JSON_NULL },
	{ "maxProperties", jsonschema_check_count, JSONSCHEMA_SUB_NONE, 1, JSON_OBJECT },
	{ "minProperties", jsonschema_check_count, JSONSCHEMA_SUB_NONE, -1, JSON_OBJECT },
	{ "dependentRequired", jsonschema_check_dependent_required, JSONSCHEMA_SUB_NONE, 0, JSON_NULL },
	{ "properties", jsonschema_check_properties, JSONSCHEMA_SUB_MAP, 0, JSON_NULL },
	{ "patternProperties", jsonschema_check_pattern_properties, JSONSCHEMA_SUB_MAP, 0, JSON_NULL },
	{ "additionalProperties", jsonschema_check_additional, JSONSCHEMA_SUB_ONE, 0, JSON_NULL },
	{ "propertyNames", jsonschema_check_property_names, JSONSCHEMA_SUB_ONE, 0, JSON_NULL },
	{ "dependentSchemas", jsonschema_check_dependent_schemas, JSONSCHEMA_SUB_MAP, 0, JSON_NULL },
	{ "$ref", jsonschema_check_ref, JSONSCHEMA_SUB_NONE, 0, JSON_NULL },
	{ "$dynamicRef", jsonschema_check_unsupported, JSONSCHEMA_SUB_NONE, 0, JSON_NULL },
	{ "allOf", jsonschema_check_all_of, JSONSCHEMA_SUB_LIST, 0, JSON_NULL },
	{ "anyOf", jsonschema_check_any_of, JSONSCHEMA_SUB_LIST, 0, JSON_NULL },
	{ "oneOf", jsonschema_check_one_of, JSONSCHEMA_SUB_LIST, 0, JSON_NULL },
	{ "not", jsonschema_check_not, JSONSCHEMA_SUB_ONE, 0, JSON_NULL },
	{ "if", jsonschema_check_if, JSONSCHEMA_SUB_ONE, 0, JSON_NULL },
	{ "then", NULL, JSONSCHEMA_SUB_ONE, 0, JSON_NULL },
	{ "else", NULL, JSONSCHEMA_SUB_ONE, 0, JSON_NULL },
	{ "unevaluatedItems", jsonschema_check_unsupported, JSONSCHEMA_SUB_ONE, 1, JSON_ARRAY },
	{ "unevaluatedProperties", jsonschema_check_unsupported, JSONSCHEMA_SUB_ONE, 1, JSON_OBJECT },
	{ "$defs", NULL, JSONSCHEMA_SUB_MAP, 0, JSON_NULL },
};

#define JSONSCHEMA_NKEYWORDS \
	(sizeof jsonschema_keywords / sizeof jsonschema_keywords[0])

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
	for (size_t i = 0; i < JSONSCHEMA_NKEYWORDS && r == 0; i++) {
		const struct jsonschema_keyword *kw = &jsonschema_keywords[i];

		if (kw->check != NULL &&
		    (v = json_object_get(schema, kw->name)) != NULL)
			r = kw->check(ctx, kw, &at, v);
	}
	ctx->depth--;
	return r;
}

/* Records the $id and $anchor of schema and of its subschemas. */
static int
jsonschema_index(struct jsonschema_ctx *ctx, const json_t *schema,
    const char *base, int depth)
{
	const json_t *id = json_object_get(schema, "$id"), *sub, *v;
	const json_t *anchor = json_object_get(schema, "$anchor");
	const char *key;
	char *uri;
	int r = 0;

	if (!json_is_object(schema))
		return 0;
	if (depth > JSONSCHEMA_DEPTH_MAX)
		return jsonschema_broken(ctx, NULL, "nested too deep");
	if (json_is_string(id)) {
		if ((uri = jsonschema_uri_resolve(base, json_string_value(id))) ==
		    NULL)
			return -ENOMEM;
		r = jsonschema_target_add(ctx, schema, uri, NULL);
		free(uri);
		if (r < 0)
			return r;
		base = ctx->targets[ctx->ntargets - 1].uri;
	}
	if (json_is_string(anchor) &&
	    (r = jsonschema_target_add(ctx, schema, base,
		 json_string_value(anchor))) < 0)
		return r;
	for (size_t i = 0; i < JSONSCHEMA_NKEYWORDS && r == 0; i++) {
		const struct jsonschema_keyword *kw = &jsonschema_keywords[i];

		if ((sub = json_object_get(schema, kw->name)) == NULL)
			continue;
		if (kw->sub == JSONSCHEMA_SUB_ONE)
			r = jsonschema_index(ctx, sub, base, depth + 1);
		else if (kw->sub == JSONSCHEMA_SUB_LIST && json_is_array(sub))
			for (size_t j = 0; j < json_array_size(sub) && r == 0;
			     j++)
				r = jsonschema_index(ctx, json_array_get(sub, j),
				    base, depth + 1);
		else if (kw->sub == JSONSCHEMA_SUB_MAP && json_is_object(sub))
			json_object_foreach (jsonschema_mut(sub), key, v)
				if ((r = jsonschema_index(ctx, v, base,
					 depth + 1)) < 0)
					break;
	}
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
jsonschema_validate(const json_t *schema, const json_t *instance,
    char **cause)
{
	char *why = NULL;
	struct jsonschema_ctx ctx = { .cause = cause != NULL ? &why : NULL };
	int r = 0;

	/* The document's root is a resource, with its $id or without. */
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
