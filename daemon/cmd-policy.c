/* SPDX-License-Identifier: ISC */
/* mcpd/policy: add, list, remove and test an agent's rules, and set its default. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "gateway.h"
#include "mcpd.h"
#include "names.h"
#include "policyrules.h"

static void cmd_policy_bad(struct request *req, const char *field,
    const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void
cmd_policy_bad(struct request *req, const char *field, const char *fmt, ...)
{
	va_list ap;
	char *text;

	va_start(ap, fmt);
	xvasprintf(&text, fmt, ap);
	va_end(ap);
	control_fail_code(req, JSONRPC_INVALID_PARAMS,
	    json_pack("{s:s}", "field", field), "%s", text);
	free(text);
}

/* The effect params give: allow, deny or ask. */
static const char *
cmd_policy_effect(struct request *req, json_t *params)
{
	const char *effect = cmd_string(params, "effect");

	if (effect == NULL || policyrules_effect_parse(effect) < 0) {
		cmd_policy_bad(req, "effect",
		    "the effect is allow, deny or ask");
		return NULL;
	}
	return effect;
}

static void
cmd_policy_storage(struct request *req, char *cause)
{
	control_fail(req, ERRORS_STORAGE, NULL,
	    "cannot save the policy: %s; nothing changed",
	    cause != NULL ? cause : "unknown error");
	free(cause);
}

/* One rule as shown: n, its members, its text (new). */
static json_t *
cmd_policy_rule_view(const json_t *rule, size_t n)
{
	json_t *out = xjson(json_deep_copy(rule));
	char *text = policyrules_text(rule);

	json_object_set_new(out, "n", json_integer((json_int_t)n));
	json_object_set_new(out, "text", json_string(text));
	free(text);
	return out;
}

/* The agent's approvals for always, each with its gateway name (new). */
static json_t *
cmd_policy_always_view(const char *agent)
{
	json_t *out = xjson(json_array()), *one;
	const json_t *e;
	char *name;
	size_t i;

	json_array_foreach(policy_always(agent), i, e) {
		name = gateway_name_plain(json_string_value(json_object_get(e,
					      "server")),
		    json_string_value(json_object_get(e, "tool")), true);
		one = xjson(json_deep_copy(e));
		json_object_set_new(one, "name", json_string(name));
		json_array_append_new(out, one);
		free(name);
	}
	return out;
}

/* An agent's policy as shown (new). */
static json_t *
cmd_policy_view(const char *agent)
{
	const json_t *rules = policy_rules(agent), *rule;
	json_t *list = xjson(json_array());
	size_t i;

	json_array_foreach(rules, i, rule)
		json_array_append_new(list, cmd_policy_rule_view(rule, i + 1));
	return xjson(json_pack("{s:s, s:s, s:o, s:o}", "agent", agent,
	    "default", policy_default(agent), "rules", list, "always",
	    cmd_policy_always_view(agent)));
}

/*
 * Saves rules as the agent's and answers {agent, what: rule (stolen),
 * policy}; the rule's profile says whose sessions are told.
 */
static void
cmd_policy_commit(struct request *req, const char *agent, const json_t *rules,
    const char *what, json_t *rule)
{
	char *cause = NULL;

	if (policy_save(agent, rules, policy_default(agent),
		json_string_value(json_object_get(rule, "profile")),
		&cause) < 0)
		cmd_policy_storage(req, cause);
	else
		control_reply(req,
		    json_pack("{s:s, s:O, s:o}", "agent", agent, what, rule,
			"policy", cmd_policy_view(agent)));
	json_decref(rule);
}

/* The rule params describe (new), or NULL after failing req. */
static json_t *
cmd_policy_rule_new(struct request *req, const char *agent, json_t *params)
{
	const char *effect = cmd_policy_effect(req, params);
	const char *profile = cmd_string(params, "profile");
	json_t *rule, *v;
	char *cause = NULL, *near;
	const char *keys[] = { "server", "tool", "annotations", "profile" };

	if (effect == NULL)
		return NULL;
	if (profile != NULL && names_valid(profile) &&
	    profile_find(agent, profile) == NULL) {
		near = profile_did_you_mean(agent, profile);
		cmd_policy_bad(req, "profile",
		    "agent %s has no profile %s%s (mcpctl profile list shows them); nothing changed",
		    agent, profile, near);
		free(near);
		return NULL;
	}
	rule = xjson(json_pack("{s:s}", "effect", effect));
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
		if ((v = json_object_get(params, keys[i])) != NULL &&
		    (!json_is_object(v) || json_object_size(v) > 0))
			json_object_set(rule, keys[i], v);
	if (policyrules_check(rule, &cause) < 0) {
		cmd_policy_bad(req, "rule", "%s; nothing changed", cause);
		free(cause);
		json_decref(rule);
		return NULL;
	}
	return rule;
}

static void
cmd_policy_add(struct request *req, const char *agent, json_t *params)
{
	const json_t *have = policy_rules(agent);
	size_t n = json_array_size(have);
	const json_t *at = json_object_get(params, "at");
	json_int_t pos = at != NULL ? json_integer_value(at) :
				      (json_int_t)n + 1;
	json_t *rule, *rules;

	if (pos < 1 || pos > (json_int_t)n + 1) {
		cmd_policy_bad(req, "at",
		    "--at %lld: agent %s has %zu rule%s, so the new one can be rule 1 to %zu; nothing changed",
		    (long long)pos, agent, n, n == 1 ? "" : "s", n + 1);
		return;
	}
	if (n >= POLICYRULES_MAX) {
		cmd_policy_bad(req, "agent",
		    "agent %s has %d rules, the most it may have; remove some first (mcpctl policy rm)",
		    agent, POLICYRULES_MAX);
		return;
	}
	if ((rule = cmd_policy_rule_new(req, agent, params)) == NULL)
		return;
	rules = xjson(have != NULL ? json_copy((json_t *)(uintptr_t)have) :
				     json_array());
	json_array_insert(rules, (size_t)pos - 1, rule);
	cmd_policy_commit(req, agent, rules, "added",
	    cmd_policy_rule_view(rule, (size_t)pos));
	json_decref(rule);
	json_decref(rules);
}

static void
cmd_policy_rm(struct request *req, const char *agent, json_t *params)
{
	const json_t *have = policy_rules(agent);
	size_t n = json_array_size(have);
	json_int_t pos = json_integer_value(json_object_get(params, "n"));
	json_t *rules, *gone;

	if (pos < 1 || pos > (json_int_t)n) {
		if (n == 0)
			cmd_policy_bad(req, "n",
			    "agent %s has no rules; nothing changed", agent);
		else
			cmd_policy_bad(req, "n",
			    "agent %s has %zu rule%s: N is 1 to %zu (mcpctl policy list %s shows them); nothing changed",
			    agent, n, n == 1 ? "" : "s", n, agent);
		return;
	}
	gone = cmd_policy_rule_view(json_array_get(have, (size_t)pos - 1),
	    (size_t)pos);
	rules = xjson(json_copy((json_t *)(uintptr_t)have));
	json_array_remove(rules, (size_t)pos - 1);
	cmd_policy_commit(req, agent, rules, "removed", gone);
	json_decref(rules);
}

static void
cmd_policy_set_default(struct request *req, const char *agent, json_t *params)
{
	const char *effect = cmd_policy_effect(req, params);
	const json_t *rules = policy_rules(agent);
	json_t *none = xjson(json_array());
	char *cause = NULL;

	if (effect != NULL) {
		if (policy_save(agent, rules != NULL ? rules : none, effect,
			NULL, &cause) < 0)
			cmd_policy_storage(req, cause);
		else
			control_reply(req, cmd_policy_view(agent));
	}
	json_decref(none);
}

static void
cmd_policy_list(struct request *req, const char *agent)
{
	json_t *agents = agent != NULL ? json_pack("[s]", agent) :
					 policy_agents(),
	       *out = json_array(), *v;
	size_t i;

	json_array_foreach(agents, i, v)
		json_array_append_new(out,
		    cmd_policy_view(json_string_value(v)));
	json_decref(agents);
	control_reply(req, json_pack("{s:o}", "agents", out));
}

/* The catalog entry the gateway names name for agent (new), or NULL. */
static json_t *
cmd_policy_find_tool(const char *agent, const char *name)
{
	json_t *all = server_gateway_catalog(agent, NULL), *e, *found = NULL;
	size_t i;

	gateway_names(all, true);
	json_array_foreach(all, i, e)
		if (strcmp(json_string_value(json_object_get(e, "name")),
			name) == 0) {
			found = json_incref(e);
			break;
		}
	json_decref(all);
	return found;
}

/* What decides a call of tool by agent, and why, in words (new). */
static char *
cmd_policy_explain(const char *agent, const char *name, const json_t *e,
    const json_t *d)
{
	const json_t *rule = json_object_get(d, "rule");
	const char *by = json_string_value(json_object_get(d, "by"));
	const json_t *tool = json_object_get(e, "tool");
	char *why, *text;

	if (strcmp(by, "broken-deny") == 0)
		return policy_denial(agent, name, d);
	if (!json_is_integer(rule)) {
		xasprintf(&text,
		    "%s by the default of agent %s: no rule of its %zu matches %s",
		    policy_default(agent), agent,
		    json_array_size(policy_rules(agent)), name);
		return text;
	}
	why = policyrules_why(json_array_get(policy_rules(agent),
				  (size_t)json_integer_value(rule) - 1),
	    json_string_value(json_object_get(e, "server")), name,
	    json_object_get(tool, "annotations"));
	xasprintf(&text, "%s by rule %lld (%s): %s", strrchr(by, '-') + 1,
	    (long long)json_integer_value(rule),
	    json_string_value(json_object_get(d, "text")), why);
	free(why);
	return text;
}

static void
cmd_policy_test(struct request *req, const char *agent, json_t *params)
{
	const char *name = cmd_string(params, "tool");
	const char *profile = cmd_string(params, "profile");
	json_t *e, *d;
	char *text;

	if (name == NULL) {
		cmd_policy_bad(req, "tool",
		    "test needs the tool as the gateway names it: SERVER__TOOL");
		return;
	}
	if ((e = cmd_policy_find_tool(agent, name)) == NULL) {
		control_fail(req, ERRORS_NOT_FOUND,
		    json_pack("{s:s, s:s}", "what", "tool", "tool", name),
		    "agent %s has no tool %s now: the gateway names a tool SERVER__TOOL (mcpctl tools lists them)",
		    agent, name);
		return;
	}
	d = policy_decide(agent, profile,
	    json_string_value(json_object_get(e, "server")),
	    json_object_get(e, "tool"));
	text = cmd_policy_explain(agent, name, e, d);
	control_reply(req,
	    json_pack("{s:s, s:s, s:s, s:O, s:O, s:s}", "agent", agent, "tool",
		name, "effect",
		strrchr(json_string_value(json_object_get(d, "by")), '-') + 1,
		"rule", json_object_get(d, "rule"), "decision", d, "explain",
		text));
	free(text);
	json_decref(d);
	json_decref(e);
}

/* forget: the approvals for always of a tool (SERVER__TOOL) go. */
static void
cmd_policy_forget(struct request *req, const char *agent, json_t *params)
{
	const char *name = cmd_string(params, "tool");
	char *cause = NULL;
	size_t n = 0;

	if (name == NULL) {
		cmd_policy_bad(req, "tool",
		    "forget needs the tool as the gateway names it: SERVER__TOOL");
		return;
	}
	if (policy_always_forget(agent, name, &n, &cause) < 0) {
		cmd_policy_storage(req, cause);
		return;
	}
	if (n == 0) {
		control_fail(req, ERRORS_NOT_FOUND,
		    json_pack("{s:s, s:s}", "what", "approval", "tool", name),
		    "agent %s approved no tool %s for always (mcpctl policy list %s shows what it did)",
		    agent, name, agent);
		return;
	}
	control_reply(req,
	    json_pack("{s:s, s:s, s:I, s:o}", "agent", agent, "forgot", name,
		"n", (json_int_t)n, "policy", cmd_policy_view(agent)));
}

static void
cmd_policy_exec(struct request *req, json_t *params)
{
	const char *op = cmd_string(params, "op");
	const char *agent = cmd_string(params, "agent");

	if (agent != NULL && !names_valid(agent)) {
		cmd_policy_bad(req, "agent",
		    "agent must match [A-Za-z0-9][A-Za-z0-9_-]{0,62}");
		return;
	}
	if (strcmp(op, "list") == 0) {
		cmd_policy_list(req, agent);
		return;
	}
	if (agent == NULL) {
		cmd_policy_bad(req, "agent", "%s needs the agent", op);
		return;
	}
	if (strcmp(op, "add") == 0)
		cmd_policy_add(req, agent, params);
	else if (strcmp(op, "rm") == 0)
		cmd_policy_rm(req, agent, params);
	else if (strcmp(op, "default") == 0)
		cmd_policy_set_default(req, agent, params);
	else if (strcmp(op, "test") == 0)
		cmd_policy_test(req, agent, params);
	else if (strcmp(op, "forget") == 0)
		cmd_policy_forget(req, agent, params);
	else
		cmd_policy_bad(req, "op",
		    "op must be add, list, rm, default, test or forget");
}

static const struct cmd_param cmd_policy_params[] = {
	{ "op", JSON_STRING, true },
	{ "agent", JSON_STRING, false },
	{ "effect", JSON_STRING, false },
	{ "server", JSON_STRING, false },
	{ "tool", JSON_STRING, false },
	{ "annotations", JSON_OBJECT, false },
	{ "profile", JSON_STRING, false },
	{ "at", JSON_INTEGER, false },
	{ "n", JSON_INTEGER, false },
	{ NULL, 0, false },
};

const struct cmd_entry cmd_policy_entry = {
	"mcpd/policy",
	cmd_policy_exec,
	cmd_policy_params,
	0,
};
