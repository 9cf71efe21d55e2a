/* SPDX-License-Identifier: ISC */
/* Validation of JSON values against JSON Schema draft 2020-12. */
#ifndef MCPD_JSONSCHEMA_H
#define MCPD_JSONSCHEMA_H

#include <jansson.h>

/*
 * What jsonschema_check understands: boolean schemas and the keywords
 * type, enum, const, multipleOf, maximum, exclusiveMaximum, minimum,
 * exclusiveMinimum, maxLength, minLength, pattern, prefixItems, items,
 * contains, minContains, maxContains, maxItems, minItems, uniqueItems,
 * required, properties, patternProperties, additionalProperties,
 * propertyNames, maxProperties, minProperties, dependentRequired,
 * dependentSchemas, allOf, anyOf, oneOf, not, if, then, else, $ref, $defs,
 * $id and $anchor. Other keywords (title, description, default, format,
 * examples, $comment, $schema, ...) are annotations here and ignored.
 *
 * - Numbers compare by value: 1 and 1.0 are equal, and 1.0 is an integer.
 * - String lengths count Unicode code points.
 * - $ref resolves with RFC 3986 rules against the $id of the schema
 *   resources around it, to a JSON pointer ("#/$defs/x", with ~0, ~1 and
 *   %XX), an $anchor or an embedded $id of the same document. Nothing is
 *   ever fetched.
 * - pattern and patternProperties search anywhere in the string, as in
 *   ECMA-262, run by PCRE2 as ecmaregex.h says; a pattern it refuses is a
 *   broken schema, and a value that reaches its match limits is -ENOTSUP.
 *
 * Refused with -ENOTSUP, when reached for the instance (a remote $ref in
 * an anyOf branch after one that matched is never looked at): a $ref that
 * resolves outside the document (a remote reference), $dynamicRef,
 * unevaluatedItems on an array and unevaluatedProperties on an object
 * (unless true), items given as an array (drafts before 2020-12), and a
 * pattern's search that reached its limits.
 *
 * A broken schema (a keyword value of the wrong type, a local $ref that
 * resolves to nothing, more than 64 $refs one inside another as a $ref
 * cycle makes) is -EINVAL, with a cause that says "invalid schema".
 */

struct jsonschema;

/*
 * Compiles a 2020-12 schema for jsonschema_check: indexes its $id and
 * $anchor and compiles its patterns, keeping a reference to schema, which
 * must not change while it is held. NULL on failure, with errno EINVAL (a
 * schema nested too deep; *cause, if cause != NULL, is malloc'd and says
 * so) or ENOMEM. Everything else a schema can get wrong (a keyword value
 * of the wrong type, a pattern PCRE2 refuses, a remote $ref) is
 * found by jsonschema_check when the instance reaches it.
 */
struct jsonschema *jsonschema_new(const json_t *schema, char **cause);

/*
 * Validates instance against a compiled schema; 0 when valid, -EINVAL when
 * not (then *cause, if cause != NULL, is malloc'd: "<json path>: <what
 * failed>", e.g. "$.limit: expected integer, got string" or "$: missing
 * required property \"name\""), -ENOTSUP when the schema uses something
 * unsupported that matters (a remote $ref: never fetched; *cause names
 * it), -ENOMEM. JSON paths are "$", "$.prop", "$.arr[3]" and
 * "$[\"odd key\"]". *cause is written on failure only. js is not changed.
 */
int jsonschema_check(const struct jsonschema *js, const json_t *instance,
    char **cause);

/*
 * One mismatch that jsonschema_check_each found: where (a JSON path, as in
 * causes) and what failed ("missing required property \"url\"").
 */
typedef void jsonschema_problem_fn(void *arg, const char *path,
    const char *detail);

/*
 * Validates as jsonschema_check, but goes on after a mismatch and calls
 * fn once for each one, in the order jsonschema_check would meet them:
 * every keyword of a schema, every item, every property, every missing
 * required property. A subschema that is judged as a whole (a branch of
 * anyOf or oneOf, not, if, contains, propertyNames) gives one problem, as
 * in a cause. Returns 0 when valid, -EINVAL after at least one fn call
 * (*cause untouched), or with *cause (if cause != NULL) -ENOTSUP as
 * jsonschema_check does or -EPROTO for a broken schema ("invalid schema:
 * ..."); problems reported before stand. -ENOMEM.
 */
int jsonschema_check_each(const struct jsonschema *js, const json_t *instance,
    jsonschema_problem_fn *fn, void *arg, char **cause);

/* Frees a compiled schema and drops its reference; NULL is a no-op. */
void jsonschema_free(struct jsonschema *js);

/*
 * Validates instance against a 2020-12 schema compiled for this call only,
 * with the results and causes of jsonschema_new and jsonschema_check.
 */
int jsonschema_validate(const json_t *schema, const json_t *instance,
    char **cause);

#endif
