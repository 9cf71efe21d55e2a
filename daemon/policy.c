/* SPDX-License-Identifier: ISC */
/* Policy: each agent's rules in policy.json, the decision of a call (a lookup once made), and its refusal. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gateway.h"
#include "log.h"
#include "mcpd.h"
#include "policyrules.h"
#include "server-reply.h"

#define POLICY_FILE	 "policy.json"
#define POLICY_ROW	 "@policy" /* one row per agent: its default, rules */
#define POLICY_CACHE_MAX 8192	   /* decisions kept; more start afresh */
#define POLICY_KEY_PARTS 5	   /* agent, profile, server, tool, digest */
#define POLICY_KEY_BUF	 512	   /* a longer key is allocated */

/* One agent's rules as compiled at generation gen. */
struct policy_compiled {
	char *agent;
	struct policyrules *pr; /* NULL: its rules cannot be used (error) */
	char *error;
	struct policy_compiled *next;
};

static struct store *policy_store;
static uint64_t policy_gen = 1;
static struct policy_compiled *policy_compiled;
static uint64_t policy_compiled_gen;
static json_t *policy_cache; /* key of a call -> its decision */
static uint64_t policy_cache_gen;
static json_t *policy_allow; /* see policy_default_allow */

int
policy_open(const char *state_dir)
{
	return store_open_file(state_dir, POLICY_FILE, &policy_store);
}

/* Forgets the rules compiled (decisions are the cache's, kept apart). */
static void
policy_forget(void)
{
	struct policy_compiled *pc;

	while ((pc = policy_compiled) != NULL) {
		policy_compiled = pc->next;
		policyrules_free(pc->pr);
		free(pc->error);
		free(pc->agent);
		free(pc);
	}
}

void
policy_close(void)
{
	policy_forget();
	json_decref(policy_cache);
	policy_cache = NULL;
	json_decref(policy_allow);
	policy_allow = NULL;
	store_free(policy_store);
	policy_store = NULL;
}

const char *
policy_store_error(void)
{
	return store_error(policy_store);
}

uint64_t
policy_generation(void)
{
	return policy_gen;
}

/* The array key of the agent's row (borrowed), or NULL. */
static const json_t *
policy_row_array(const char *agent, const char *key)
{
	const json_t *a = json_object_get(store_row_peek(policy_store, agent,
					      POLICY_ROW),
	    key);

	return json_is_array(a) ? a : NULL;
}

const json_t *
policy_rules(const char *agent)
{
	return policy_row_array(agent, "rules");
}

const char *
policy_default(const char *agent)
{
	const char *def =
	    json_string_value(json_object_get(store_row_peek(policy_store,
						  agent, POLICY_ROW),
		"default"));

	return def != NULL ? def : "allow";
}

json_t *
policy_agents(void)
{
	const json_t *agents = store_agents_peek(policy_store), *rows;
	json_t *out = xjson(json_array());
	const char *agent;

	json_object_foreach((json_t *)(uintptr_t)agents, agent, rows)
		if (store_row_peek(policy_store, agent, POLICY_ROW) != NULL)
			json_array_append_new(out, json_string(agent));
	return out;
}

const json_t *
policy_always(const char *agent)
{
	return policy_row_array(agent, "always");
}

/* The agent's row with always as its approvals, saved (and read back). */
static int
policy_save_always(const char *agent, json_t *always, char **cause)
{
	const json_t *have = store_row_peek(policy_store, agent, POLICY_ROW);
	json_t *row = have != NULL ?
	    xjson(json_copy((json_t *)(uintptr_t)have)) :
	    xjson(json_pack("{s:s, s:s, s:[]}", "id", POLICY_ROW, "default",
		"allow", "rules"));
	int r;

	if (json_array_size(always) > 0)
		json_object_set(row, "always", always);
	else
		json_object_del(row, "always");
	r = store_put(policy_store, agent, row, cause);
	json_decref(row);
	return r;
}

int
policy_always_add(const char *agent, const char *server, const char *tool,
    const char *digest, char **cause)
{
	const json_t *have = policy_always(agent);
	json_t *always = xjson(have != NULL ?
		json_copy((json_t *)(uintptr_t)have) :
		json_array());
	int r;

	json_array_append_new(always,
	    json_pack("{s:s, s:s, s:s}", "server", server, "tool", tool,
		"definition", digest));
	r = policy_save_always(agent, always, cause);
	json_decref(always);
	return r;
}

int
policy_always_forget(const char *agent, const char *name, size_t *ret_n,
    char **cause)
{
	const json_t *have = policy_always(agent), *e;
	json_t *always = xjson(json_array());
	char *full;
	size_t i, n = 0;
	int r = 0;

	json_array_foreach(have, i, e) {
		full = gateway_name_plain(json_string_value(json_object_get(e,
					      "server")),
		    json_string_value(json_object_get(e, "tool")), true);
		if (strcmp(full, name) == 0)
			n++;
		else
			json_array_append(always, (json_t *)(uintptr_t)e);
		free(full);
	}
	if (n > 0)
		r = policy_save_always(agent, always, cause);
	json_decref(always);
	if (r == 0)
		*ret_n = n;
	return r;
}

/* Whether agent approved tool of server always, as digest defines it. */
static bool
policy_always_has(const char *agent, const char *server, const char *tool,
    const char *digest)
{
	const json_t *e;
	size_t i;

	json_array_foreach(policy_always(agent), i, e)
		if (strcmp(json_string_value(json_object_get(e, "server")),
			server) == 0 &&
		    strcmp(json_string_value(json_object_get(e, "tool")),
			tool) == 0 &&
		    digest != NULL &&
		    strcmp(json_string_value(json_object_get(e, "definition")),
			digest) == 0)
			return true;
	return false;
}

int
policy_save(const char *agent, const json_t *rules, const char *def,
    const char *profile, char **cause)
{
	json_t *row;
	int r;

	const json_t *always = policy_always(agent);

	if (json_array_size(rules) == 0 && strcmp(def, "allow") == 0 &&
	    json_array_size(always) == 0)
		r = store_remove(policy_store, agent, POLICY_ROW, NULL, cause);
	else {
		row = xjson(json_pack("{s:s, s:s, s:O}", "id", POLICY_ROW,
		    "default", def, "rules", rules));
		if (json_array_size(always) > 0)
			json_object_set(row, "always",
			    (json_t *)(uintptr_t)always);
		r = store_put(policy_store, agent, row, cause);
		json_decref(row);
	}
	if (r < 0)
		return r;
	policy_gen++;
	/* The sessions whose lists this may change are told. */
	if (profile != NULL)
		gateway_profile_changed(agent, profile, false);
	else
		gateway_tools_changed(agent);
	return 0;
}

/* The agent's rules, compiled (made again after every change). */
static struct policy_compiled *
policy_compiled_of(const char *agent)
{
	struct policy_compiled *pc;
	const json_t *rules = policy_rules(agent);
	int def = policyrules_effect_parse(policy_default(agent));
	json_t *none;

	if (policy_compiled_gen != policy_gen) {
		policy_forget();
		policy_compiled_gen = policy_gen;
	}
	for (pc = policy_compiled; pc != NULL; pc = pc->next)
		if (strcmp(pc->agent, agent) == 0)
			return pc;
	pc = xcalloc(1, sizeof *pc);
	pc->agent = xstrdup(agent);
	if (def < 0)
		xasprintf(&pc->error,
		    "its default %s is not allow, deny or ask",
		    policy_default(agent));
	else {
		none = xjson(json_array());
		if (policyrules_new(rules != NULL ? rules : none,
			(enum policyrules_effect)def, &pc->pr, &pc->error) < 0)
			pc->pr = NULL;
		json_decref(none);
	}
	if (pc->error != NULL)
		log_warnx(
		    "policy: the rules of agent %s in %s cannot be used (%s); every call of its tools is denied until they are fixed",
		    agent, POLICY_FILE, pc->error);
	pc->next = policy_compiled;
	policy_compiled = pc;
	return pc;
}

json_t *
policy_decide(const char *agent, const char *profile, const char *server,
    const json_t *tool)
{
	struct policy_compiled *pc = policy_compiled_of(agent);
	const char *tname = json_string_value(json_object_get(tool, "name"));
	char *name, *text, by[32];
	size_t n;
	enum policyrules_effect e;
	json_t *d;

	if (pc->pr == NULL)
		return xjson(json_pack("{s:n, s:s, s:s}", "rule", "by",
		    "broken-deny", "error", pc->error));
	name = gateway_name_plain(server, tname != NULL ? tname : "", true);
	n = policyrules_match(pc->pr, profile, server, name,
	    policyrules_bits(json_object_get(tool, "annotations")));
	free(name);
	e = policyrules_effect_of(pc->pr, n);
	snprintf(by, sizeof by, "%s-%s", n > 0 ? "rule" : "default",
	    policyrules_effect_name(e));
	if (n == 0)
		return xjson(json_pack("{s:n, s:s}", "rule", "by", by));
	text = policyrules_text(json_array_get(policy_rules(agent), n - 1));
	d = xjson(json_pack("{s:I, s:s, s:s}", "rule", (json_int_t)n, "by", by,
	    "text", text));
	free(text);
	return d;
}

bool
policy_is_allow(const json_t *decision)
{
	const char *by = json_string_value(json_object_get(decision, "by"));
	const char *dash = by != NULL ? strrchr(by, '-') : NULL;

	return dash != NULL && strcmp(dash + 1, "allow") == 0;
}

/* Whether a decision is a deny (of a rule, the default, broken rules). */
static bool
policy_is_deny(const json_t *decision)
{
	const char *by = json_string_value(json_object_get(decision, "by"));
	const char *dash = by != NULL ? strrchr(by, '-') : NULL;

	return dash == NULL || strcmp(dash + 1, "deny") == 0;
}

bool
policy_lists(const struct call_who *who, const json_t *e)
{
	json_t *d = policy_decide(who->agent,
	    profile_effective(who->agent, who->profile),
	    json_string_value(json_object_get(e, "server")),
	    json_object_get(e, "tool"));
	bool yes = !policy_is_deny(d);

	json_decref(d);
	return yes;
}

void
policy_filter(json_t *all, const char *agent, const char *profile)
{
	size_t i = 0;
	json_t *e, *d;

	while ((e = json_array_get(all, i)) != NULL) {
		d = policy_decide(agent, profile,
		    json_string_value(json_object_get(e, "server")),
		    json_object_get(e, "tool"));
		if (!policy_is_deny(d))
			i++;
		else
			json_array_remove(all, i);
		json_decref(d);
	}
}

char *
policy_denial(const char *agent, const char *name, const json_t *d)
{
	const json_t *rule = json_object_get(d, "rule");
	const char *by = json_string_value(json_object_get(d, "by"));
	char *text;

	if (strcmp(by, "broken-deny") == 0)
		xasprintf(&text,
		    "policy denies tool %s to agent %s: its rules in %s cannot be used (%s); nothing was sent; fix or remove them (mcpctl policy list %s)",
		    name, agent, POLICY_FILE,
		    json_string_value(json_object_get(d, "error")), agent);
	else if (!json_is_integer(rule))
		xasprintf(&text,
		    "policy denies tool %s to agent %s: no rule matches and the agent's default is %s; nothing was sent; to allow it: mcpctl policy add %s allow --tool '%s'",
		    name, agent, policy_default(agent), agent, name);
	else
		xasprintf(&text,
		    "policy denies tool %s to agent %s: rule %lld (%s) decides; nothing was sent; to allow it: mcpctl policy add %s allow --tool '%s' --at %lld",
		    name, agent, (long long)json_integer_value(rule),
		    json_string_value(json_object_get(d, "text")), agent, name,
		    (long long)json_integer_value(rule));
	return text;
}

/*
 * The decision of an agent that has no row (no rules, no approvals kept,
 * the default allow), the one policy_decide makes for it: shared, never
 * changed.
 */
static json_t *
policy_default_allow(void)
{
	if (policy_allow == NULL)
		policy_allow = xjson(json_pack("{s:n, s:s}", "rule", "by",
		    "default-allow"));
	return policy_allow;
}

/*
 * The cache's key of a call: its parts joined by \x1f into buf (size
 * bytes) when they fit, else into a new string (*ret_heap, to free).
 */
static const char *
policy_key(char *buf, size_t size, const char *const parts[POLICY_KEY_PARTS],
    char **ret_heap)
{
	size_t len[POLICY_KEY_PARTS], total = POLICY_KEY_PARTS, n = 0;
	char *key = buf;

	for (size_t i = 0; i < POLICY_KEY_PARTS; i++)
		total += len[i] = strlen(parts[i]);
	*ret_heap = NULL;
	if (total > size)
		key = *ret_heap = xmalloc(total);
	for (size_t i = 0; i < POLICY_KEY_PARTS; i++) {
		memcpy(key + n, parts[i], len[i]);
		n += len[i];
		key[n++] = i + 1 < POLICY_KEY_PARTS ? '\x1f' : '\0';
	}
	return key;
}

/* The decision of a call of tool of s by who: looked up once made. */
static json_t *
policy_decision_of(const struct call_who *who, struct server *s,
    const char *tool)
{
	const char *agent = who->agent, *profile, *digest, *key;
	char buf[POLICY_KEY_BUF], *heap;
	json_t *d;

	/* Most agents have no rules: one lookup of the row, no key made. */
	if (store_row_peek(policy_store, agent, POLICY_ROW) == NULL)
		return json_incref(policy_default_allow());
	profile = profile_effective(agent, who->profile);
	digest = server_tool_definition(s, tool);
	if (policy_cache == NULL || policy_cache_gen != policy_gen ||
	    json_object_size(policy_cache) >= POLICY_CACHE_MAX) {
		json_decref(policy_cache);
		policy_cache = xjson(json_object());
		policy_cache_gen = policy_gen;
	}
	/* The definition's digest: a changed tool is decided again. */
	key = policy_key(buf, sizeof buf,
	    (const char *const[POLICY_KEY_PARTS]){ agent,
		profile != NULL ? profile : "", server_name(s), tool,
		digest != NULL ? digest : "" },
	    &heap);
	if ((d = json_object_get(policy_cache, key)) == NULL) {
		d = policy_decide(agent, profile, server_name(s),
		    server_tool_peek(s, tool));
		json_object_set_new(policy_cache, key, d);
	}
	free(heap);
	return json_incref(d);
}

void
policy_audit_denied(const struct call_who *who, struct server *s,
    const char *tool, const json_t *decision)
{
	struct audit_end denied = { "denied", errors_kind_code(ERRORS_DENIED),
		errors_kind_name(ERRORS_DENIED), 0 };
	struct audit_call *ac;

	if ((ac = audit_call_new(who, "tools/call", server_name(s), tool,
		 server_tool_definition(s, tool), NULL)) != NULL) {
		audit_call_set_decision(ac,
		    json_incref((json_t *)(uintptr_t)decision));
		audit_call_end(ac, &denied);
	}
}

enum policy_verdict
policy_call_check(const struct call_who *who, struct server_reply *rep,
    struct server *s, const char *tool, json_t **ret_decision)
{
	json_t *d = policy_decision_of(who, s, tool);
	const char *digest, *by;
	char *name, *text;

	if (d == policy_allow) { /* known, not read again */
		*ret_decision = d;
		return POLICY_GO;
	}
	if (!policy_is_deny(d)) {
		*ret_decision = d;
		if (policy_is_allow(d))
			return POLICY_GO;
		/* An ask answered for always or for this session goes. */
		digest = server_tool_definition(s, tool);
		if (policy_always_has(who->agent, server_name(s), tool, digest))
			by = "approval-always";
		else if (policy_ask_session_has(who->session, s, tool, digest))
			by = "approval-session";
		else
			return POLICY_ASK;
		*ret_decision = xjson(json_deep_copy(d));
		json_object_set_new(*ret_decision, "by", json_string(by));
		json_decref(d);
		return POLICY_GO;
	}
	name = gateway_name_plain(server_name(s), tool, true);
	policy_audit_denied(who, s, tool, d);
	text = policy_denial(who->agent, name, d);
	rep->ops->fail(rep, ERRORS_DENIED,
	    json_pack("{s:s, s:s, s:O}", "tool", name, "agent", who->agent,
		"rule", json_object_get(d, "rule")),
	    text);
	free(text);
	free(name);
	json_decref(d);
	return POLICY_REFUSED;
}
