/* SPDX-License-Identifier: ISC */
/* The checkers of the JSON Schema keywords that jsonschema.c's table lists. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonschema-int.h"

#define JSONSCHEMA_WHOLE_MIN 4503599627370496.0 /* 2^52: no fraction */

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

/* Whether x has no fraction (beyond 2^52, a double has none). */
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

int
jsonschema_keyword_type(struct jsonschema_ctx *ctx,
    const struct jsonschema_keyword *kw, const struct jsonschema_at *at,
    const json_t *v)
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

int
jsonschema_keyword_enum(struct jsonschema_ctx *ctx,
    const struct jsonschema_keyword *kw, const struct jsonschema_at *at,
    const json_t *v)
{
	if (!json_is_array(v))
		return jsonschema_bad_value(ctx, at, kw, "an array");
	for (size_t i = 0; i < json_array_size(v); i++)
		if (jsonschema_equal(json_array_get(v, i), at->instance))
			return 0;
	return jsonschema_fail_value(ctx, at->path, "expected one of ", v, "");
}

int
jsonschema_keyword_const(struct jsonschema_ctx *ctx,
    const struct jsonschema_keyword *kw, const struct jsonschema_at *at,
    const json_t *v)
{
	(void)kw;
	if (jsonschema_equal(v, at->instance))
		return 0;
	return jsonschema_fail_value(ctx, at->path, "expected ", v, "");
}

/* maximum, exclusiveMaximum, minimum, exclusiveMinimum. */
int
jsonschema_keyword_bound(struct jsonschema_ctx *ctx,
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

int
jsonschema_keyword_multiple_of(struct jsonschema_ctx *ctx,
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
int
jsonschema_keyword_count(struct jsonschema_ctx *ctx,
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

int
jsonschema_keyword_pattern(struct jsonschema_ctx *ctx,
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

int
jsonschema_keyword_unique_items(struct jsonschema_ctx *ctx,
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
	int r, failed = 0;

	for (size_t i = from; i < to; i++) {
		struct jsonschema_path p = { at->path, NULL, i };

		r = jsonschema_eval(ctx,
		    json_is_array(schema) ? json_array_get(schema, i) : schema,
		    json_array_get(at->instance, i), &p, at->base);
		if (r != 0 && !jsonschema_goes_on(ctx, r))
			return r;
		failed = r != 0 ? r : failed;
	}
	return failed;
}

int
jsonschema_keyword_prefix_items(struct jsonschema_ctx *ctx,
    const struct jsonschema_keyword *kw, const struct jsonschema_at *at,
    const json_t *v)
{
	size_t n = json_array_size(at->instance);

	if (!json_is_array(v))
		return jsonschema_bad_value(ctx, at, kw, "an array");
	return jsonschema_each_item(ctx, at, v, 0,
	    n < json_array_size(v) ? n : json_array_size(v));
}

int
jsonschema_keyword_items(struct jsonschema_ctx *ctx,
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
int
jsonschema_keyword_contains(struct jsonschema_ctx *ctx,
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

/* The first of names from index *i on that the instance object lacks
 * (*i is its index then), or NULL. */
static const json_t *
jsonschema_missing(const json_t *instance, const json_t *names, size_t *i)
{
	for (; *i < json_array_size(names); (*i)++)
		if (json_object_get(instance,
			json_string_value(json_array_get(names, *i))) == NULL)
			return json_array_get(names, *i);
	return NULL;
}

/* A mismatch for each name the instance lacks (only the first, unless
 * jsonschema_check_each). */
static int
jsonschema_fail_missing(struct jsonschema_ctx *ctx,
    const struct jsonschema_at *at, const json_t *names, const char *before,
    const char *after)
{
	const json_t *name;
	size_t i = 0;
	int r = 0;

	while ((name = jsonschema_missing(at->instance, names, &i)) != NULL) {
		r = jsonschema_fail_value(ctx, at->path, before, name, after);
		if (!jsonschema_goes_on(ctx, r))
			return r;
		i++;
	}
	return r;
}

int
jsonschema_keyword_required(struct jsonschema_ctx *ctx,
    const struct jsonschema_keyword *kw, const struct jsonschema_at *at,
    const json_t *v)
{
	int r;

	if ((r = jsonschema_names(ctx, kw, at, v)) < 0 ||
	    !json_is_object(at->instance))
		return r;
	return jsonschema_fail_missing(ctx, at, v, "missing required property ",
	    "");
}

int
jsonschema_keyword_dependent_required(struct jsonschema_ctx *ctx,
    const struct jsonschema_keyword *kw, const struct jsonschema_at *at,
    const json_t *v)
{
	const json_t *names;
	const char *key;
	int r, failed = 0;

	if (!json_is_object(v))
		return jsonschema_bad_value(ctx, at, kw, "an object");
	json_object_foreach(jsonschema_mut(v), key, names) {
		if ((r = jsonschema_names(ctx, kw, at, names)) < 0)
			return r;
		if (json_object_get(at->instance, key) == NULL ||
		    (r = jsonschema_fail_missing(ctx, at, names,
			 "missing property ", " (dependentRequired)")) == 0)
			continue;
		if (!jsonschema_goes_on(ctx, r))
			return r;
		failed = r;
	}
	return failed;
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

int
jsonschema_keyword_properties(struct jsonschema_ctx *ctx,
    const struct jsonschema_keyword *kw, const struct jsonschema_at *at,
    const json_t *v)
{
	const char *key;
	const json_t *sub;
	int r, failed = 0;

	if (!json_is_object(v))
		return jsonschema_bad_value(ctx, at, kw, "an object");
	json_object_foreach(jsonschema_mut(v), key, sub) {
		if ((r = jsonschema_eval_property(ctx, at, key, sub)) == 0)
			continue;
		if (!jsonschema_goes_on(ctx, r))
			return r;
		failed = r;
	}
	return failed;
}

int
jsonschema_keyword_pattern_properties(struct jsonschema_ctx *ctx,
    const struct jsonschema_keyword *kw, const struct jsonschema_at *at,
    const json_t *v)
{
	const char *key, *pattern;
	const json_t *value, *sub;
	int r, failed = 0;

	if (!json_is_object(v))
		return jsonschema_bad_value(ctx, at, kw, "an object");
	json_object_foreach(jsonschema_mut(at->instance), key, value)
		json_object_foreach(jsonschema_mut(v), pattern, sub) {
			r = jsonschema_regex_search(ctx, at->path, pattern, key,
			    strlen(key));
			if (r > 0)
				r = jsonschema_eval_property(ctx, at, key, sub);
			if (r == 0)
				continue;
			if (!jsonschema_goes_on(ctx, r))
				return r;
			failed = r;
		}
	return failed;
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

int
jsonschema_keyword_additional_properties(struct jsonschema_ctx *ctx,
    const struct jsonschema_keyword *kw, const struct jsonschema_at *at,
    const json_t *v)
{
	const char *key;
	const json_t *value;
	int r, failed = 0;

	(void)kw;
	json_object_foreach(jsonschema_mut(at->instance), key, value) {
		if ((r = jsonschema_is_evaluated(ctx, at, key)) < 0)
			return r;
		if (r > 0)
			continue;
		if (json_is_false(v))
			r = jsonschema_fail_key(ctx, at->path,
			    "unexpected property ", key, "");
		else
			r = jsonschema_eval_property(ctx, at, key, v);
		if (r == 0)
			continue;
		if (!jsonschema_goes_on(ctx, r))
			return r;
		failed = r;
	}
	return failed;
}

int
jsonschema_keyword_property_names(struct jsonschema_ctx *ctx,
    const struct jsonschema_keyword *kw, const struct jsonschema_at *at,
    const json_t *v)
{
	const char *key;
	const json_t *value;
	json_t *name;
	int r, failed = 0;

	(void)kw;
	json_object_foreach(jsonschema_mut(at->instance), key, value) {
		if ((name = json_string(key)) == NULL)
			return -ENOMEM;
		r = jsonschema_try(ctx, v, name, at->path, at->base);
		json_decref(name);
		if (r == -EINVAL)
			r = jsonschema_fail_key(ctx, at->path, "property name ",
			    key, " does not match propertyNames");
		if (r == 0)
			continue;
		if (!jsonschema_goes_on(ctx, r))
			return r;
		failed = r;
	}
	return failed;
}

int
jsonschema_keyword_dependent_schemas(struct jsonschema_ctx *ctx,
    const struct jsonschema_keyword *kw, const struct jsonschema_at *at,
    const json_t *v)
{
	const char *key;
	const json_t *sub;
	int r, failed = 0;

	if (!json_is_object(v))
		return jsonschema_bad_value(ctx, at, kw, "an object");
	json_object_foreach(jsonschema_mut(v), key, sub) {
		if (json_object_get(at->instance, key) == NULL ||
		    (r = jsonschema_eval(ctx, sub, at->instance, at->path,
			 at->base)) == 0)
			continue;
		if (!jsonschema_goes_on(ctx, r))
			return r;
		failed = r;
	}
	return failed;
}

int
jsonschema_keyword_ref(struct jsonschema_ctx *ctx,
    const struct jsonschema_keyword *kw, const struct jsonschema_at *at,
    const json_t *v)
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
int
jsonschema_keyword_unsupported(struct jsonschema_ctx *ctx,
    const struct jsonschema_keyword *kw, const struct jsonschema_at *at,
    const json_t *v)
{
	if (kw->arg != 0 &&
	    (json_is_true(v) || json_typeof(at->instance) != kw->type))
		return 0;
	return jsonschema_error(ctx, at->path, -ENOTSUP, "%s is not supported",
	    kw->name);
}

int
jsonschema_keyword_all_of(struct jsonschema_ctx *ctx,
    const struct jsonschema_keyword *kw, const struct jsonschema_at *at,
    const json_t *v)
{
	int r, failed = 0;

	if (json_array_size(v) == 0)
		return jsonschema_bad_value(ctx, at, kw, "a non-empty array");
	for (size_t i = 0; i < json_array_size(v); i++) {
		r = jsonschema_eval(ctx, json_array_get(v, i), at->instance,
		    at->path, at->base);
		if (r != 0 && !jsonschema_goes_on(ctx, r))
			return r;
		failed = r != 0 ? r : failed;
	}
	return failed;
}

/* No branch matched: the cause says why each did not, in brackets. */
static int
jsonschema_fail_branches(struct jsonschema_ctx *ctx,
    const struct jsonschema_at *at, const json_t *list, const char *what)
{
	char **cause = ctx->cause, *buf = NULL, *here = NULL, *why;
	jsonschema_problem_fn *problem = ctx->problem;
	size_t len, n;
	FILE *f;
	int r;

	if (!jsonschema_wants_cause(ctx))
		return -EINVAL;
	/* Each branch again, with a cause of its own (never a problem). */
	ctx->cause = &here;
	ctx->problem = NULL;
	jsonschema_fail(ctx, at->path, "%s", "");
	if (here == NULL || (f = open_memstream(&buf, &len)) == NULL) {
		ctx->cause = cause;
		ctx->problem = problem;
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
	ctx->problem = problem;
	free(here);
	if (fclose(f) != 0) {
		free(buf);
		return -ENOMEM;
	}
	r = jsonschema_fail(ctx, at->path, "%s (%s)", what, buf);
	free(buf);
	return r;
}

int
jsonschema_keyword_any_of(struct jsonschema_ctx *ctx,
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

int
jsonschema_keyword_one_of(struct jsonschema_ctx *ctx,
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

int
jsonschema_keyword_not(struct jsonschema_ctx *ctx,
    const struct jsonschema_keyword *kw, const struct jsonschema_at *at,
    const json_t *v)
{
	int r = jsonschema_try(ctx, v, at->instance, at->path, at->base);

	(void)kw;
	if (r == 0)
		return jsonschema_fail(ctx, at->path,
		    "matches the schema in not");
	return r == -EINVAL ? 0 : r;
}

/* if, then, else. */
int
jsonschema_keyword_if(struct jsonschema_ctx *ctx,
    const struct jsonschema_keyword *kw, const struct jsonschema_at *at,
    const json_t *v)
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
