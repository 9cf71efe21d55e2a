/* SPDX-License-Identifier: ISC */
/* Variable references: the strict $(ns.NAME) pattern and its expansion. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "names.h"
#include "vars.h"

/* One reference in a string: "$(" ns "." name ")". */
struct vars_ref {
	const char *start; /* at the "$" */
	size_t len;	   /* of the whole reference */
	const char *ns;
	size_t ns_len;
	const char *name;
	size_t name_len;
};

/* An expansion in progress: what fits goes into buf, len counts it all. */
struct vars_out {
	char *buf;
	size_t size; /* of buf, the NUL included */
	size_t len;  /* of the full expansion so far */
};

static bool
vars_is_ns_char(char c)
{
	return c >= 'a' && c <= 'z';
}

/* Whether a reference starts at p; fills *ref when it does. */
static bool
vars_match(const char *p, struct vars_ref *ref)
{
	const char *q = p + 2;

	if (p[0] != '$' || p[1] != '(')
		return false;
	ref->ns = q;
	while (vars_is_ns_char(*q))
		q++;
	ref->ns_len = q - ref->ns;
	if (ref->ns_len == 0 || *q != '.')
		return false;
	/*
	 * A name is made of what a secret name is made of, in every
	 * namespace, but not capped at its length: $(secret.NAME) with a
	 * name too long to be a secret stays a reference, whose lookup then
	 * fails, rather than text passed on as it is.
	 */
	ref->name = ++q;
	q += names_secret_span(q);
	ref->name_len = q - ref->name;
	if (ref->name_len == 0 || *q != ')')
		return false;
	ref->start = p;
	ref->len = q + 1 - p;
	return true;
}

/* The leftmost reference in s; false when there is none. */
static bool
vars_next(const char *s, struct vars_ref *ref)
{
	for (const char *p = strchr(s, '$'); p != NULL; p = strchr(p + 1, '$'))
		if (vars_match(p, ref))
			return true;
	return false;
}

/* "ns\0name\0" in one new buffer (names only, never values). */
static char *
vars_ref_split(const struct vars_ref *ref)
{
	char *buf = malloc(ref->ns_len + ref->name_len + 2);

	if (buf == NULL)
		return NULL;
	memcpy(buf, ref->ns, ref->ns_len);
	buf[ref->ns_len] = '\0';
	memcpy(buf + ref->ns_len + 1, ref->name, ref->name_len);
	buf[ref->ns_len + 1 + ref->name_len] = '\0';
	return buf;
}

int
vars_scan(const char *s, int (*fn)(void *ctx, const char *ns, const char *name),
    void *ctx)
{
	struct vars_ref ref;
	char *buf;
	int n = 0, r;

	for (; vars_next(s, &ref); s = ref.start + ref.len) {
		if ((buf = vars_ref_split(&ref)) == NULL)
			return -ENOMEM;
		r = fn(ctx, buf, buf + ref.ns_len + 1);
		free(buf);
		if (r < 0)
			return r;
		n++;
	}
	return n;
}

/* Appends n bytes of p: what fits before the NUL is copied. */
static int
vars_put(struct vars_out *o, const char *p, size_t n)
{
	size_t room = o->size > 0 ? o->size - 1 : 0, k;

	if (n > SSIZE_MAX - o->len)
		return -EOVERFLOW;
	if (o->len < room) {
		k = n < room - o->len ? n : room - o->len;
		memcpy(o->buf + o->len, p, k);
	}
	o->len += n;
	return 0;
}

/* Looks up one reference and appends its value. */
static int
vars_resolve(const struct vars_ref *ref, vars_lookup_fn fn, void *ctx,
    struct vars_out *o, char **cause)
{
	char *buf = vars_ref_split(ref);
	bool is_unknown_ns = false;
	const char *value;

	if (buf == NULL)
		return -ENOMEM;
	value = fn(ctx, buf, buf + ref->ns_len + 1, &is_unknown_ns);
	free(buf);
	if (is_unknown_ns)
		return errors_cause(cause, -EINVAL,
		    "unknown variable namespace \"%.*s\" in %.*s",
		    (int)ref->ns_len, ref->ns, (int)ref->len, ref->start);
	if (value == NULL)
		return errors_cause(cause, -ENOENT, "no value for %.*s",
		    (int)ref->len, ref->start);
	return vars_put(o, value, strlen(value));
}

ssize_t
vars_expand(const char *s, vars_lookup_fn fn, void *ctx, char *out,
    size_t outlen, char **cause)
{
	struct vars_out o = { out, outlen, 0 };
	struct vars_ref ref;
	int r = 0;

	for (; r == 0 && vars_next(s, &ref); s = ref.start + ref.len)
		if ((r = vars_put(&o, s, ref.start - s)) == 0)
			r = vars_resolve(&ref, fn, ctx, &o, cause);
	if (r == 0)
		r = vars_put(&o, s, strlen(s));
	if (r == -EOVERFLOW)
		r = errors_cause(cause, r, "the expansion is too long");
	if (r == -ENOMEM && cause != NULL)
		*cause = NULL;
	if (r < 0) {
		/* A value may have been half written: leave none of it. */
		if (outlen > 0)
			explicit_bzero(out, outlen);
		return r;
	}
	if (outlen > 0)
		out[o.len < outlen ? o.len : outlen - 1] = '\0';
	return (ssize_t)o.len;
}

bool
vars_has_refs(const char *s)
{
	struct vars_ref ref;

	return s != NULL && vars_next(s, &ref);
}
