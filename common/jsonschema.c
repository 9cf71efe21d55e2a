/* SPDX-License-Identifier: ISC */
/* JSON Schema 2020-12: compiling a schema, the keyword table, evaluation,
 * causes, $ref lookup and the patterns compiled once. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ecmaregex.h"
#include "jsonschema-int.h"
#include "uriref.h"

#define JSONSCHEMA_DUMP_MAX 72 /* bytes of a value quoted in a cause */

/* A schema resource ($id) or a named location ($anchor) of the document. */
struct jsonschema_target {
	const json_t *schema;
	char *uri;    /* the base URI there, without a fragment */
	char *anchor; /* NULL for a resource */
};

/* A compiled pattern, or why it cannot be compiled. */
struct jsonschema_regex {
	struct jsonschema_regex *next;
	const char *pattern;  /* the schema's string, compared by address */
	struct ecmaregex *re; /* NULL: refused, for what */
	char *what;	      /* malloc'd, or NULL (no memory to say why) */
};

/* A schema with its $ref targets indexed and its patterns compiled. */
struct jsonschema {
	json_t *schema; /* a reference of our own */
	struct jsonschema_target *targets;
	size_t ntargets;
	struct jsonschema_regex *regexes;
};

static int jsonschema_index(struct jsonschema_ctx *, struct jsonschema *,
    const json_t *, const char *, int);

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

/* Hands one mismatch to the problem function: its path, its words. */
static int
jsonschema_vproblem(struct jsonschema_ctx *ctx,
    const struct jsonschema_path *path, const char *fmt, va_list ap)
{
	char *where = NULL, *what = NULL;
	size_t len;
	FILE *f;
	int r = -ENOMEM;

	if ((f = open_memstream(&where, &len)) == NULL)
		return -ENOMEM;
	jsonschema_path_write(f, path);
	if (fclose(f) == 0 && vasprintf(&what, fmt, ap) >= 0) {
		ctx->problem(ctx->problem_arg, where, what);
		free(what);
		r = 0;
	}
	free(where);
	return r;
}

int
jsonschema_fail(struct jsonschema_ctx *ctx, const struct jsonschema_path *path,
    const char *fmt, ...)
{
	va_list ap;
	int r = 0;

	if (!ctx->is_quiet) {
		va_start(ap, fmt);
		r = ctx->problem != NULL ?
		    jsonschema_vproblem(ctx, path, fmt, ap) :
		    jsonschema_vcause(ctx, path, "", fmt, ap);
		va_end(ap);
	}
	return r < 0 ? r : -EINVAL;
}

int
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

int
jsonschema_fail_value(struct jsonschema_ctx *ctx,
    const struct jsonschema_path *path, const char *before, const json_t *v,
    const char *after)
{
	char *dump;
	size_t n;
	int r;

	if (!jsonschema_wants_cause(ctx))
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

int
jsonschema_fail_key(struct jsonschema_ctx *ctx,
    const struct jsonschema_path *path, const char *before, const char *key,
    const char *after)
{
	json_t *s;
	int r;

	if (!jsonschema_wants_cause(ctx))
		return -EINVAL;
	if ((s = json_string(key)) == NULL)
		return -ENOMEM;
	r = jsonschema_fail_value(ctx, path, before, s, after);
	json_decref(s);
	return r;
}

int
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

/* Targets of $ref: the document's resources and anchors. */

static int
jsonschema_target_add(struct jsonschema *js, const json_t *schema,
    const char *uri, const char *anchor)
{
	struct jsonschema_target *t;

	t = reallocarray(js->targets, js->ntargets + 1, sizeof *t);
	if (t == NULL)
		return -ENOMEM;
	js->targets = t;
	t += js->ntargets;
	t->schema = schema;
	t->uri = strndup(uri, strcspn(uri, "#"));
	t->anchor = anchor != NULL ? strdup(anchor) : NULL;
	if (t->uri == NULL || (anchor != NULL && t->anchor == NULL)) {
		free(t->uri);
		free(t->anchor);
		return -ENOMEM;
	}
	js->ntargets++;
	return 0;
}

/* The first target with these schema, uri and anchor (NULL: any). */
static const struct jsonschema_target *
jsonschema_target_find(const struct jsonschema *js, const json_t *schema,
    const char *uri, const char *anchor)
{
	for (size_t i = 0; i < js->ntargets; i++) {
		const struct jsonschema_target *t = &js->targets[i];

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
jsonschema_base_of(const struct jsonschema *js, const json_t *schema,
    const char *base)
{
	const struct jsonschema_target *t;

	if (!json_is_string(json_object_get(schema, "$id")))
		return base;
	t = jsonschema_target_find(js, schema, NULL, NULL);
	return t != NULL ? t->uri : base;
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
		uriref_pointer_unescape(seg);
		if (seg != ptr + 1)
			*base = jsonschema_base_of(ctx->js, node, *base);
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

int
jsonschema_resolve(struct jsonschema_ctx *ctx, const struct jsonschema_at *at,
    const char *ref, const json_t **ret, const char **ret_base)
{
	const struct jsonschema_target *t;
	char *uri = NULL, *frag;
	char *quoted = jsonschema_quote(ref);
	int r = 0;

	if (quoted == NULL || uriref_resolve(at->base, ref, &uri) < 0) {
		free(quoted);
		return -ENOMEM;
	}
	/* No fragment is an empty one. */
	frag = uri + strcspn(uri, "#");
	if (*frag != '\0')
		*frag++ = '\0';
	uriref_percent_decode(frag);
	*ret = NULL;
	if ((t = jsonschema_target_find(ctx->js, NULL, uri, NULL)) == NULL)
		r = jsonschema_error(ctx, at->path, -ENOTSUP,
		    "remote $ref %s is not supported (never fetched)", quoted);
	else if (*frag == '\0' || *frag == '/') {
		*ret_base = t->uri;
		*ret = *frag == '\0' ?
		    t->schema :
		    jsonschema_pointer(ctx, t->schema, frag, ret_base);
	} else if ((t = jsonschema_target_find(ctx->js, NULL, uri, frag)) !=
	    NULL) {
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

/* Patterns: compiled by jsonschema_new where it finds them, else when
 * first searched (then for one evaluation only). */

/* The compiled pattern of this address in list, or NULL. */
static struct jsonschema_regex *
jsonschema_regex_find(struct jsonschema_regex *list, const char *pattern)
{
	while (list != NULL && list->pattern != pattern)
		list = list->next;
	return list;
}

/* Compiles pattern onto *list, or records why it cannot be done. */
static int
jsonschema_regex_add(struct jsonschema_regex **list, const char *pattern)
{
	struct jsonschema_regex *re;

	if (jsonschema_regex_find(*list, pattern) != NULL)
		return 0;
	if ((re = calloc(1, sizeof *re)) == NULL)
		return -ENOMEM;
	if (ecmaregex_new(pattern, &re->re, &re->what) == -ENOMEM) {
		free(re);
		return -ENOMEM;
	}
	re->pattern = pattern;
	re->next = *list;
	*list = re;
	return 0;
}

static void
jsonschema_regex_free(struct jsonschema_regex *list)
{
	struct jsonschema_regex *re;

	while ((re = list) != NULL) {
		list = re->next;
		ecmaregex_free(re->re);
		free(re->what);
		free(re);
	}
}

/* Compiles the patterns of schema: pattern, and patternProperties' keys. */
static int
jsonschema_regex_add_all(struct jsonschema *js, const json_t *schema)
{
	const json_t *pattern = json_object_get(schema, "pattern");
	const json_t *patterns = json_object_get(schema, "patternProperties");
	const json_t *sub;
	const char *key;
	int r = 0;

	if (json_is_string(pattern))
		r = jsonschema_regex_add(&js->regexes,
		    json_string_value(pattern));
	if (r == 0 && json_is_object(patterns))
		json_object_foreach(jsonschema_mut(patterns), key, sub)
			if ((r = jsonschema_regex_add(&js->regexes, key)) < 0)
				break;
	return r;
}

int
jsonschema_regex_search(struct jsonschema_ctx *ctx,
    const struct jsonschema_path *path, const char *pattern, const char *s,
    size_t n)
{
	struct jsonschema_regex *re;
	char *quoted;
	int r;

	re = jsonschema_regex_find(ctx->js->regexes, pattern);
	if (re == NULL) {
		if ((r = jsonschema_regex_add(&ctx->regexes, pattern)) < 0)
			return r;
		re = jsonschema_regex_find(ctx->regexes, pattern);
	}
	r = re->re != NULL ? ecmaregex_search(re->re, s, n) : -EINVAL;
	if (r >= 0)
		return r;
	if ((quoted = jsonschema_quote(pattern)) == NULL)
		return -ENOMEM;
	if (re->re == NULL)
		r = jsonschema_broken(ctx, path, "pattern %s: %s", quoted,
		    re->what != NULL ? re->what : "refused");
	else if (r == -E2BIG)
		r = jsonschema_error(ctx, path, -ENOTSUP,
		    "pattern %s stopped at its match limit on this value, which it backtracks on too much",
		    quoted);
	else if (r == -EILSEQ)
		r = jsonschema_error(ctx, path, -ENOTSUP,
		    "pattern %s: the value is not UTF-8", quoted);
	free(quoted);
	return r;
}

/* In the order they are checked: the first failure is the cause. */
static const struct jsonschema_keyword jsonschema_keywords[] = {
	{ "type", jsonschema_keyword_type, 0, JSON_NULL },
	{ "enum", jsonschema_keyword_enum, 0, JSON_NULL },
	{ "const", jsonschema_keyword_const, 0, JSON_NULL },
	{ "multipleOf", jsonschema_keyword_multiple_of, 0, JSON_NULL },
	{ "maximum", jsonschema_keyword_bound, 1, JSON_NULL },
	{ "exclusiveMaximum", jsonschema_keyword_bound, 2, JSON_NULL },
	{ "minimum", jsonschema_keyword_bound, -1, JSON_NULL },
	{ "exclusiveMinimum", jsonschema_keyword_bound, -2, JSON_NULL },
	{ "maxLength", jsonschema_keyword_count, 1, JSON_STRING },
	{ "minLength", jsonschema_keyword_count, -1, JSON_STRING },
	{ "pattern", jsonschema_keyword_pattern, 0, JSON_NULL },
	{ "maxItems", jsonschema_keyword_count, 1, JSON_ARRAY },
	{ "minItems", jsonschema_keyword_count, -1, JSON_ARRAY },
	{ "uniqueItems", jsonschema_keyword_unique_items, 0, JSON_NULL },
	{ "prefixItems", jsonschema_keyword_prefix_items, 0, JSON_NULL },
	{ "items", jsonschema_keyword_items, 0, JSON_NULL },
	{ "contains", jsonschema_keyword_contains, 0, JSON_NULL },
	{ "required", jsonschema_keyword_required, 0, JSON_NULL },
	{ "maxProperties", jsonschema_keyword_count, 1, JSON_OBJECT },
	{ "minProperties", jsonschema_keyword_count, -1, JSON_OBJECT },
	{ "dependentRequired", jsonschema_keyword_dependent_required, 0,
	    JSON_NULL },
	{ "properties", jsonschema_keyword_properties, 0, JSON_NULL },
	{ "patternProperties", jsonschema_keyword_pattern_properties, 0,
	    JSON_NULL },
	{ "additionalProperties", jsonschema_keyword_additional_properties, 0,
	    JSON_NULL },
	{ "propertyNames", jsonschema_keyword_property_names, 0, JSON_NULL },
	{ "dependentSchemas", jsonschema_keyword_dependent_schemas, 0,
	    JSON_NULL },
	{ "$ref", jsonschema_keyword_ref, 0, JSON_NULL },
	{ "$dynamicRef", jsonschema_keyword_unsupported, 0, JSON_NULL },
	{ "allOf", jsonschema_keyword_all_of, 0, JSON_NULL },
	{ "anyOf", jsonschema_keyword_any_of, 0, JSON_NULL },
	{ "oneOf", jsonschema_keyword_one_of, 0, JSON_NULL },
	{ "not", jsonschema_keyword_not, 0, JSON_NULL },
	{ "if", jsonschema_keyword_if, 0, JSON_NULL },
	{ "unevaluatedItems", jsonschema_keyword_unsupported, 1, JSON_ARRAY },
	{ "unevaluatedProperties", jsonschema_keyword_unsupported, 1,
	    JSON_OBJECT },
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

int
jsonschema_eval(struct jsonschema_ctx *ctx, const json_t *schema,
    const json_t *instance, const struct jsonschema_path *path,
    const char *base)
{
	struct jsonschema_at at = { schema, instance, path, NULL };
	const json_t *v;
	int r = 0, failed = 0;

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
	at.base = jsonschema_base_of(ctx->js, schema, base);
	for (size_t i = 0; i < JSONSCHEMA_COUNT(jsonschema_keywords); i++) {
		const struct jsonschema_keyword *kw = &jsonschema_keywords[i];

		if ((v = json_object_get(schema, kw->name)) == NULL ||
		    (r = kw->check(ctx, kw, &at, v)) == 0)
			continue;
		if (!jsonschema_goes_on(ctx, r))
			break;
		failed = r;
		r = 0;
	}
	ctx->depth--;
	return r != 0 ? r : failed;
}

/* Indexes the subschemas a keyword's value v holds. */
static int
jsonschema_index_sub(struct jsonschema_ctx *ctx, struct jsonschema *js,
    int holds, const json_t *v, const char *base, int depth)
{
	const char *key;
	const json_t *sub;
	size_t i;
	int r = 0;

	if (holds == JSONSCHEMA_ONE)
		return jsonschema_index(ctx, js, v, base, depth);
	if (holds == JSONSCHEMA_LIST)
		json_array_foreach(jsonschema_mut(v), i, sub)
			if ((r = jsonschema_index(ctx, js, sub, base, depth)) <
			    0)
				break;
	if (holds == JSONSCHEMA_MAP)
		json_object_foreach(jsonschema_mut(v), key, sub)
			if ((r = jsonschema_index(ctx, js, sub, base, depth)) <
			    0)
				break;
	return r;
}

/* Records the $id and $anchor of schema and of its subschemas, and
 * compiles their patterns. */
static int
jsonschema_index(struct jsonschema_ctx *ctx, struct jsonschema *js,
    const json_t *schema, const char *base, int depth)
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
		if (uriref_resolve(base, json_string_value(id), &uri) < 0)
			return -ENOMEM;
		r = jsonschema_target_add(js, schema, uri, NULL);
		free(uri);
		if (r < 0)
			return r;
		base = js->targets[js->ntargets - 1].uri;
	}
	if (json_is_string(anchor))
		r = jsonschema_target_add(js, schema, base,
		    json_string_value(anchor));
	if (r == 0)
		r = jsonschema_regex_add_all(js, schema);
	for (size_t i = 0; i < JSONSCHEMA_COUNT(jsonschema_subschemas); i++)
		if (r == 0 &&
		    (v = json_object_get(schema,
			 jsonschema_subschemas[i].name)) != NULL)
			r = jsonschema_index_sub(ctx, js,
			    jsonschema_subschemas[i].holds, v, base, depth + 1);
	return r;
}

/* The result of an evaluation: its error, and its cause handed over. */
static int
jsonschema_result(int r, char *why, char **cause)
{
	if (r == JSONSCHEMA_EBROKEN)
		r = -EINVAL;
	if (r < 0 && r != -ENOMEM && cause != NULL)
		*cause = why;
	else
		free(why);
	return r;
}

/* As jsonschema_new, with the error returned. */
static int
jsonschema_compile(const json_t *schema, struct jsonschema **ret_js,
    char **cause)
{
	struct jsonschema *js = calloc(1, sizeof *js);
	char *why = NULL;
	struct jsonschema_ctx ctx = { .js = js,
		.cause = cause != NULL ? &why : NULL };
	int r = 0;

	if (js == NULL)
		return -ENOMEM;
	js->schema = json_incref(jsonschema_mut(schema));
	/* The document is a resource, with an $id or without. */
	if (!json_is_string(json_object_get(schema, "$id")))
		r = jsonschema_target_add(js, schema, "", NULL);
	if (r == 0)
		r = jsonschema_index(&ctx, js, schema, "", 0);
	if (r < 0) {
		jsonschema_free(js);
		return jsonschema_result(r, why, cause);
	}
	free(why);
	*ret_js = js;
	return 0;
}

struct jsonschema *
jsonschema_new(const json_t *schema, char **cause)
{
	struct jsonschema *js;
	int r;

	if ((r = jsonschema_compile(schema, &js, cause)) < 0) {
		errno = -r;
		return NULL;
	}
	return js;
}

int
jsonschema_check(const struct jsonschema *js, const json_t *instance,
    char **cause)
{
	char *why = NULL;
	struct jsonschema_ctx ctx = { .js = js,
		.cause = cause != NULL ? &why : NULL };
	int r;

	r = jsonschema_eval(&ctx, js->schema, instance, NULL,
	    jsonschema_base_of(js, js->schema, ""));
	jsonschema_regex_free(ctx.regexes);
	return jsonschema_result(r, why, cause);
}

int
jsonschema_check_each(const struct jsonschema *js, const json_t *instance,
    jsonschema_problem_fn *fn, void *arg, char **cause)
{
	char *why = NULL;
	struct jsonschema_ctx ctx = { .js = js,
		.cause = &why,
		.problem = fn,
		.problem_arg = arg };
	int r;

	r = jsonschema_eval(&ctx, js->schema, instance, NULL,
	    jsonschema_base_of(js, js->schema, ""));
	jsonschema_regex_free(ctx.regexes);
	/* Mismatches only went to fn; anything else has a cause. */
	if (r < 0 && r != -EINVAL && r != -ENOMEM && cause != NULL)
		*cause = why;
	else
		free(why);
	return r;
}

void
jsonschema_free(struct jsonschema *js)
{
	if (js == NULL)
		return;
	for (size_t i = 0; i < js->ntargets; i++) {
		free(js->targets[i].uri);
		free(js->targets[i].anchor);
	}
	free(js->targets);
	jsonschema_regex_free(js->regexes);
	json_decref(js->schema);
	free(js);
}

int
jsonschema_validate(const json_t *schema, const json_t *instance, char **cause)
{
	struct jsonschema *js;
	int r;

	if ((r = jsonschema_compile(schema, &js, cause)) < 0)
		return r;
	r = jsonschema_check(js, instance, cause);
	jsonschema_free(js);
	return r;
}
