/* SPDX-License-Identifier: ISC */
/* What jsonschema.c and jsonschema-keywords.c share; no one else sees it. */
#ifndef MCPD_JSONSCHEMA_INT_H
#define MCPD_JSONSCHEMA_INT_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "jsonschema.h"

#define JSONSCHEMA_REF_DEPTH_MAX 64  /* $refs followed, one inside another */
#define JSONSCHEMA_DEPTH_MAX	 512 /* schemas evaluated, one in another */
/* A broken schema: no anyOf, oneOf, not or if may take it for a mismatch. */
#define JSONSCHEMA_EBROKEN	 (-EPROTO)

/* One step of the instance path, on the stack: a key or an index. */
struct jsonschema_path {
	const struct jsonschema_path *up;
	const char *key; /* NULL for an array index */
	size_t index;
};

/* One evaluation of an instance against a compiled schema. */
struct jsonschema_ctx {
	const struct jsonschema *js;
	char **cause;  /* the one cause of the result; NULL: none wanted */
	bool is_quiet; /* inside anyOf, oneOf, not, if, contains */
	/* jsonschema_check_each: each mismatch goes here, and on. */
	jsonschema_problem_fn *problem;
	void *problem_arg;
	int depth, ref_depth;
	/* Patterns the schema reaches only through a $ref into a place
	 * jsonschema_new did not look, compiled for this evaluation. */
	struct jsonschema_regex *regexes;
};

/* Where a keyword applies: its schema object, the instance, their place. */
struct jsonschema_at {
	const json_t *schema;
	const json_t *instance;
	const struct jsonschema_path *path;
	const char *base; /* the base URI of schema */
};

/* An entry of the keyword table: check(ctx, its entry, where, its value),
 * which ignores an instance of a type the keyword does not apply to. */
struct jsonschema_keyword {
	const char *name;
	int (*check)(struct jsonschema_ctx *, const struct jsonschema_keyword *,
	    const struct jsonschema_at *, const json_t *);
	int arg;	/* +-1: maximum, at most; +-2: exclusive */
	json_type type; /* what a min/max count measures */
};

/* jansson's iterators take a json_t *; nothing here changes a value. */
static inline json_t *
jsonschema_mut(const json_t *json)
{
	return (json_t *)(uintptr_t)json;
}

/* Whether a mismatch of the instance is to be put in words. */
static inline bool
jsonschema_wants_cause(const struct jsonschema_ctx *ctx)
{
	return !ctx->is_quiet && (ctx->cause != NULL || ctx->problem != NULL);
}

/*
 * Whether the evaluation goes on after r: a mismatch reported as a problem
 * (jsonschema_check_each, outside anyOf, oneOf, not, if and contains).
 */
static inline bool
jsonschema_goes_on(const struct jsonschema_ctx *ctx, int r)
{
	return r == -EINVAL && ctx->problem != NULL && !ctx->is_quiet;
}

/* jsonschema.c: evaluation, causes, $ref and patterns. */

/* Evaluates schema on instance at path; base is the base URI around it. */
int jsonschema_eval(struct jsonschema_ctx *ctx, const json_t *schema,
    const json_t *instance, const struct jsonschema_path *path,
    const char *base);

/* Evaluates without leaving a cause for a mismatch: 0, -EINVAL or hard. */
int jsonschema_try(struct jsonschema_ctx *ctx, const json_t *schema,
    const json_t *instance, const struct jsonschema_path *path,
    const char *base);

/* A mismatch of the instance (-EINVAL); quiet inside anyOf, oneOf, not. */
int jsonschema_fail(struct jsonschema_ctx *ctx,
    const struct jsonschema_path *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* -ENOTSUP or a broken schema (err): always said, never taken back. */
int jsonschema_error(struct jsonschema_ctx *ctx,
    const struct jsonschema_path *path, int err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#define jsonschema_broken(ctx, path, ...) \
	jsonschema_error((ctx), (path), JSONSCHEMA_EBROKEN, __VA_ARGS__)
#define jsonschema_bad_value(ctx, at, kw, what) \
	jsonschema_broken((ctx), (at)->path, "%s is not %s", (kw)->name, (what))

/* A mismatch whose message shows a value, cut short: before, v, after. */
int jsonschema_fail_value(struct jsonschema_ctx *ctx,
    const struct jsonschema_path *path, const char *before, const json_t *v,
    const char *after);

/* As jsonschema_fail_value for an object key. */
int jsonschema_fail_key(struct jsonschema_ctx *ctx,
    const struct jsonschema_path *path, const char *before, const char *key,
    const char *after);

/* The schema a $ref names, and the base URI around it. */
int jsonschema_resolve(struct jsonschema_ctx *ctx,
    const struct jsonschema_at *at, const char *ref, const json_t **ret,
    const char **ret_base);

/* Searches n bytes of s for pattern (a string of the schema, known by its
 * address): 1 found, 0 not, or an error. */
int jsonschema_regex_search(struct jsonschema_ctx *ctx,
    const struct jsonschema_path *path, const char *pattern, const char *s,
    size_t n);

/* jsonschema-keywords.c: the checkers that jsonschema.c's table lists. */

#define JSONSCHEMA_KEYWORD(fn)                                             \
	int fn(struct jsonschema_ctx *, const struct jsonschema_keyword *, \
	    const struct jsonschema_at *, const json_t *)

JSONSCHEMA_KEYWORD(jsonschema_keyword_type);
JSONSCHEMA_KEYWORD(jsonschema_keyword_enum);
JSONSCHEMA_KEYWORD(jsonschema_keyword_const);
JSONSCHEMA_KEYWORD(jsonschema_keyword_bound);
JSONSCHEMA_KEYWORD(jsonschema_keyword_multiple_of);
JSONSCHEMA_KEYWORD(jsonschema_keyword_count);
JSONSCHEMA_KEYWORD(jsonschema_keyword_pattern);
JSONSCHEMA_KEYWORD(jsonschema_keyword_unique_items);
JSONSCHEMA_KEYWORD(jsonschema_keyword_prefix_items);
JSONSCHEMA_KEYWORD(jsonschema_keyword_items);
JSONSCHEMA_KEYWORD(jsonschema_keyword_contains);
JSONSCHEMA_KEYWORD(jsonschema_keyword_required);
JSONSCHEMA_KEYWORD(jsonschema_keyword_dependent_required);
JSONSCHEMA_KEYWORD(jsonschema_keyword_properties);
JSONSCHEMA_KEYWORD(jsonschema_keyword_pattern_properties);
JSONSCHEMA_KEYWORD(jsonschema_keyword_additional_properties);
JSONSCHEMA_KEYWORD(jsonschema_keyword_property_names);
JSONSCHEMA_KEYWORD(jsonschema_keyword_dependent_schemas);
JSONSCHEMA_KEYWORD(jsonschema_keyword_ref);
JSONSCHEMA_KEYWORD(jsonschema_keyword_unsupported);
JSONSCHEMA_KEYWORD(jsonschema_keyword_all_of);
JSONSCHEMA_KEYWORD(jsonschema_keyword_any_of);
JSONSCHEMA_KEYWORD(jsonschema_keyword_one_of);
JSONSCHEMA_KEYWORD(jsonschema_keyword_not);
JSONSCHEMA_KEYWORD(jsonschema_keyword_if);

#endif
