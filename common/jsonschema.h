/* SPDX-License-Identifier: ISC */
/* Validation of JSON values against JSON Schema draft 2020-12. */
#ifndef MCPD_JSONSCHEMA_H
#define MCPD_JSONSCHEMA_H

#include <jansson.h>

/*
 * What jsonschema_validate understands: boolean schemas and the keywords
 * type, enum, const, multipleOf, maximum, exclusiveMaximum, minimum,
 * exclusiveMinimum, maxLength, minLength, pattern, prefixItems, items,
 * contains, minContains, maxContains, maxItems, minItems, uniqueItems,
 * required, properties, patternProperties, additionalProperties,
 * propertyNames, maxProperties, minProperties, dependentRequired,
 * dependentSchemas, allOf, anyOf, oneOf, not, if, then, else, $ref, $defs,
 * $id and $anchor. Other keywords (title, description, default, format,
 * examples, $comment, ...) are annotations here and ignored.
 *
 * - Numbers compare by value: 1 and 1.0 are equal, and 1.0 is an integer.
 * - String lengths count Unicode code points.
 * - $ref resolves, with RFC 3986 rules, against the $id of the enclosing
 *   schema resources; it reaches JSON pointers ("#/$defs/x", with ~0, ~1
 *   and %XX), $anchor names and embedded $id resources of the same
 *   document. Nothing is ever fetched.
 * - pattern and patternProperties are searched for anywhere in the string
 *   (ECMA-262 semantics) by POSIX extended regular expressions after a
 *   translation: \d \w \s \D \W \S, \t \n \r \f \v \cX \xHH \uHHHH,
 *   (?:...), (?<name>...) and lazy quantifiers (matching the same strings
 *   as greedy ones) are translated. They work on bytes in the C locale:
 *   "." and bracket expressions see one byte of a multi-byte character, and
 *   "." also matches a newline. Lookaround, backreferences, \p{...} and
 *   negated escapes inside brackets ([\D]) are refused with -ENOTSUP.
 *
 * The refusals with -ENOTSUP: a $ref resolving outside the document (a
 * remote reference), $dynamicRef, unevaluatedItems and
 * unevaluatedProperties (unless true) on an array or object, items given
 * as an array (drafts before 2020-12) on an array, and patterns the
 * translation cannot express. Each happens only when the keyword is
 * reached for the instance: a remote $ref in an anyOf branch after one
 * that matched is never looked at.
 *
 * A broken schema (a keyword value of the wrong type, a local $ref that
 * resolves to nothing, more than 64 nested $refs, as a $ref cycle makes)
 * is -EINVAL, with a cause that says "invalid schema".
 */

/*
 * Validates instance against a 2020-12 schema; 0 when valid, -EINVAL when
 * not (then *cause, if cause != NULL, is malloc'd: "<json path>: <what
 * failed>", e.g. "$.limit: expected integer, got string" or "$: missing
 * required property \"name\""), -ENOTSUP when the schema uses something
 * unsupported that matters (a remote $ref: never fetched), -ENOMEM.
 * JSON paths are "$", "$.prop", "$.arr[3]" and "$[\"odd key\"]".
 */
int jsonschema_validate(const json_t *schema, const json_t *instance,
    char **cause);

#endif
