/* SPDX-License-Identifier: ISC */
/* Policy rules: the checker, the compiled form that a call is matched against, and the texts that explain a match. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "fnv.h"
#include "names.h"
#include "policyrules.h"
#include "toolglob.h"
#include "xalloc.h"

/* The annotations a rule can test, with the MCP spec's defaults. */
static const struct {
	const char *name;
	bool missing;	 /* what a tool without it is taken to say */
	const char *yes; /* how a tool that says true is described */
	const char *no;
} policyrules_hints[] = {
	{ "readOnlyHint", false, "read-only", "not read-only" },
	{ "destructiveHint", true, "destructive", "not destructive" },
	{ "idempotentHint", false, "idempotent", "not idempotent" },
	{ "openWorldHint", true, "open-world", "closed-world" },
};
#define POLICYRULES_HINTS \
	(sizeof policyrules_hints / sizeof policyrules_hints[0])

static const char *const policyrules_effects[] = { "allow", "deny", "ask" };

struct policyrules_rule {
	enum policyrules_effect effect;
	const char *profile; /* NULL: any session */
	const char *server;  /* NULL: any server */
	uint32_t server_hash;
	const char *glob; /* NULL: any tool */
	size_t glob_lit;  /* its bytes before the first special character */
	unsigned mask;	  /* the annotations tested ... */
	unsigned bits;	  /* ... and the values they must have */
};

struct policyrules {
	json_t *rules; /* kept: the strings above point into it */
	struct policyrules_rule *v;
	size_t n;
	enum policyrules_effect def;
};

int
policyrules_effect_parse(const char *s)
{
	for (size_t i = 0; i < 3; i++)
		if (s != NULL && strcmp(s, policyrules_effects[i]) == 0)
			return (int)i;
	return -EINVAL;
}

const char *
policyrules_effect_name(enum policyrules_effect e)
{
	return policyrules_effects[e];
}

/* The index of the annotation named name, or -1. */
static int
policyrules_hint(const char *name)
{
	for (size_t i = 0; i < POLICYRULES_HINTS; i++)
		if (strcmp(name, policyrules_hints[i].name) == 0)
			return (int)i;
	return -1;
}

int
policyrules_check(const json_t *rule, char **cause)
{
	const json_t *ann = json_object_get(rule, "annotations"), *v;
	const char *key, *s, *why;
	size_t col;

	if (!json_is_object(rule))
		return errors_cause(cause, -EINVAL, "a rule must be an object");
	json_object_foreach((json_t *)(uintptr_t)rule, key, v)
		if (strcmp(key, "effect") != 0 && strcmp(key, "server") != 0 &&
		    strcmp(key, "tool") != 0 &&
		    strcmp(key, "annotations") != 0 &&
		    strcmp(key, "profile") != 0)
			return errors_cause(cause, -EINVAL,
			    "a rule has no member %s: effect, server, tool, annotations and profile",
			    key);
	if (policyrules_effect_parse(json_string_value(json_object_get(rule,
		"effect"))) < 0)
		return errors_cause(cause, -EINVAL,
		    "a rule's effect is allow, deny or ask");
	if ((v = json_object_get(rule, "server")) != NULL &&
	    (!json_is_string(v) || !names_valid(json_string_value(v))))
		return errors_cause(cause, -EINVAL,
		    "a rule's server must match [A-Za-z0-9][A-Za-z0-9_-]{0,62}");
	if ((v = json_object_get(rule, "profile")) != NULL &&
	    (!json_is_string(v) || !names_valid(json_string_value(v))))
		return errors_cause(cause, -EINVAL,
		    "a rule's profile must match [A-Za-z0-9][A-Za-z0-9_-]{0,62}");
	if ((v = json_object_get(rule, "tool")) != NULL) {
		if ((s = json_string_value(v)) == NULL)
			return errors_cause(cause, -EINVAL,
			    "a rule's tool is a glob (a string)");
		if (toolglob_check(s, &col, &why) < 0)
			return errors_cause(cause, -EINVAL,
			    "bad glob '%s' at column %zu: %s", s, col, why);
	}
	if (ann == NULL)
		return 0;
	if (!json_is_object(ann))
		return errors_cause(cause, -EINVAL,
		    "a rule's annotations are an object of booleans");
	json_object_foreach((json_t *)(uintptr_t)ann, key, v) {
		if (policyrules_hint(key) < 0)
			return errors_cause(cause, -EINVAL,
			    "unknown annotation %s: readOnlyHint, destructiveHint, idempotentHint or openWorldHint",
			    key);
		if (!json_is_boolean(v))
			return errors_cause(cause, -EINVAL,
			    "annotation %s takes true or false", key);
	}
	return 0;
}

/* The bytes of glob before its first *, ?, [ or \. */
static size_t
policyrules_literal(const char *glob)
{
	return strcspn(glob, "*?[\\");
}

int
policyrules_new(const json_t *rules, enum policyrules_effect def,
    struct policyrules **ret, char **cause)
{
	struct policyrules *pr;
	struct policyrules_rule *r;
	const json_t *rule, *v;
	const char *key;
	size_t i;
	int err, h;

	if (!json_is_array(rules))
		return errors_cause(cause, -EINVAL, "rules must be an array");
	if (json_array_size(rules) > POLICYRULES_MAX)
		return errors_cause(cause, -EINVAL,
		    "%zu rules: an agent has at most %d",
		    json_array_size(rules), POLICYRULES_MAX);
	json_array_foreach(rules, i, rule)
		if ((err = policyrules_check(rule, cause)) < 0)
			return err;
	pr = xcalloc(1, sizeof *pr);
	pr->rules = json_incref((json_t *)(uintptr_t)rules);
	pr->def = def;
	pr->n = json_array_size(rules);
	pr->v = xcalloc(pr->n + 1, sizeof *pr->v);
	json_array_foreach(rules, i, rule) {
		r = &pr->v[i];
		r->effect = (enum policyrules_effect)policyrules_effect_parse(
		    json_string_value(json_object_get(rule, "effect")));
		r->profile = json_string_value(json_object_get(rule,
		    "profile"));
		r->server = json_string_value(json_object_get(rule, "server"));
		if (r->server != NULL)
			r->server_hash = fnv32(r->server);
		r->glob = json_string_value(json_object_get(rule, "tool"));
		if (r->glob != NULL)
			r->glob_lit = policyrules_literal(r->glob);
		json_object_foreach((json_t *)(uintptr_t)json_object_get(rule,
					"annotations"),
		    key, v) {
			h = policyrules_hint(key);
			r->mask |= 1u << h;
			if (json_is_true(v))
				r->bits |= 1u << h;
		}
	}
	*ret = pr;
	return 0;
}

void
policyrules_free(struct policyrules *pr)
{
	if (pr == NULL)
		return;
	json_decref(pr->rules);
	free(pr->v);
	free(pr);
}

/* Whether annotation i of a tool's annotations says true. */
static bool
policyrules_says(const json_t *annotations, size_t i, bool *ret_is_missing)
{
	const json_t *v = json_object_get(annotations,
	    policyrules_hints[i].name);

	*ret_is_missing = !json_is_boolean(v);
	return *ret_is_missing ? policyrules_hints[i].missing : json_is_true(v);
}

unsigned
policyrules_bits(const json_t *annotations)
{
	unsigned bits = 0;
	bool is_missing;

	for (size_t i = 0; i < POLICYRULES_HINTS; i++)
		if (policyrules_says(annotations, i, &is_missing))
			bits |= 1u << i;
	return bits;
}

size_t
policyrules_match(const struct policyrules *pr, const char *profile,
    const char *server, const char *name, unsigned bits)
{
	uint32_t h = fnv32(server);
	const struct policyrules_rule *r;

	for (size_t i = 0; i < pr->n; i++) {
		r = &pr->v[i];
		/* The cheap tests first: 1,000 rules are matched in microseconds. */
		if ((bits & r->mask) != r->bits)
			continue;
		if (r->server != NULL &&
		    (r->server_hash != h || strcmp(r->server, server) != 0))
			continue;
		if (r->profile != NULL &&
		    (profile == NULL || strcmp(r->profile, profile) != 0))
			continue;
		if (r->glob != NULL &&
		    (strncmp(r->glob, name, r->glob_lit) != 0 ||
			!toolglob_match(r->glob, name)))
			continue;
		return i + 1;
	}
	return 0;
}

enum policyrules_effect
policyrules_effect_of(const struct policyrules *pr, size_t n)
{
	return n == 0 || n > pr->n ? pr->def : pr->v[n - 1].effect;
}

char *
policyrules_text(const json_t *rule)
{
	const json_t *ann = json_object_get(rule, "annotations"), *v;
	const char *key;
	char *s = xstrdup(json_string_value(json_object_get(rule, "effect")));

	if ((v = json_object_get(rule, "server")) != NULL)
		xappendf(&s, " --server %s", json_string_value(v));
	if ((v = json_object_get(rule, "tool")) != NULL)
		xappendf(&s, " --tool '%s'", json_string_value(v));
	json_object_foreach((json_t *)(uintptr_t)ann, key, v)
		xappendf(&s, " --annotation %s=%s", key,
		    json_is_true(v) ? "true" : "false");
	if ((v = json_object_get(rule, "profile")) != NULL)
		xappendf(&s, " --profile %s", json_string_value(v));
	return s;
}

/* Appends one reason, after a ", " when there is one before it. */
static void
policyrules_reason(char **s, char *reason)
{
	xappendf(s, "%s%s", **s != '\0' ? ", " : "", reason);
	free(reason);
}

char *
policyrules_why(const json_t *rule, const char *server, const char *name,
    const json_t *annotations)
{
	const json_t *ann = json_object_get(rule, "annotations"), *v;
	const char *key;
	char *s = xstrdup(""), *reason;
	bool is_missing, says;
	int h;

	if ((v = json_object_get(rule, "profile")) != NULL) {
		xasprintf(&reason, "the session's profile is %s",
		    json_string_value(v));
		policyrules_reason(&s, reason);
	}
	if (json_object_get(rule, "server") != NULL) {
		xasprintf(&reason, "its server is %s", server);
		policyrules_reason(&s, reason);
	}
	if ((v = json_object_get(rule, "tool")) != NULL) {
		xasprintf(&reason, "%s matches '%s'", name,
		    json_string_value(v));
		policyrules_reason(&s, reason);
	}
	json_object_foreach((json_t *)(uintptr_t)ann, key, v) {
		h = policyrules_hint(key);
		says = policyrules_says(annotations, (size_t)h, &is_missing);
		if (is_missing)
			xasprintf(&reason,
			    "%s is %s (%s missing: the spec's default %s)",
			    name,
			    says ? policyrules_hints[h].yes :
				   policyrules_hints[h].no,
			    key, says ? "true" : "false");
		else
			xasprintf(&reason, "%s is %s (%s %s)", name,
			    says ? policyrules_hints[h].yes :
				   policyrules_hints[h].no,
			    key, says ? "true" : "false");
		policyrules_reason(&s, reason);
	}
	if (*s == '\0')
		xappendf(&s, "the rule matches every tool");
	return s;
}
