/* SPDX-License-Identifier: ISC */
/* Policy rules: one agent's ordered allow/deny/ask rules, checked, compiled and matched. */
#ifndef MCPD_POLICYRULES_H
#define MCPD_POLICYRULES_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

/* The most rules one agent may have. */
#define POLICYRULES_MAX 10000

enum policyrules_effect {
	POLICYRULES_ALLOW,
	POLICYRULES_DENY,
	POLICYRULES_ASK,
};

struct policyrules;

/* The effect named s ("allow", "deny", "ask"), or -EINVAL. */
int policyrules_effect_parse(const char *s);
/* The name of an effect. */
const char *policyrules_effect_name(enum policyrules_effect);
/*
 * Checks one rule ({effect, server?, tool?, annotations?, profile?}):
 * 0, or -EINVAL with *cause saying what is wrong (a bad glob its column).
 */
int policyrules_check(const json_t *rule, char **cause);
/* Compiles checked rules (an array) with the default def; -EINVAL, *cause. */
int policyrules_new(const json_t *rules, enum policyrules_effect def,
    struct policyrules **ret, char **cause);
void policyrules_free(struct policyrules *);
/*
 * The bits of a tool's annotations (its "annotations" object, or NULL),
 * each hint missing or not a boolean taking the MCP spec's default.
 */
unsigned policyrules_bits(const json_t *annotations);
/*
 * The number (1-based) of the first rule that matches a call of name
 * (<server>__<tool>) in a session of profile (NULL: none), or 0.
 */
size_t policyrules_match(const struct policyrules *, const char *profile,
    const char *server, const char *name, unsigned bits);
/* The effect of rule n (1-based), or the default for 0. */
enum policyrules_effect policyrules_effect_of(const struct policyrules *,
    size_t n);
/* A rule as mcpctl policy add's words: "deny --server fs ..." (new). */
char *policyrules_text(const json_t *rule);
/*
 * Why a matching rule matches name of server with these annotations:
 * "its server is fs, fs__write_file is destructive (destructiveHint
 * missing: the spec's default true)" (new).
 */
char *policyrules_why(const json_t *rule, const char *server, const char *name,
    const json_t *annotations);

#endif
