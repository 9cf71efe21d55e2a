/* SPDX-License-Identifier: ISC */
/* mcpd/profile: make, change, show, list and remove an agent's profiles. */
#include <stdlib.h>
#include <string.h>

#include "gateway.h"
#include "mcpd.h"
#include "names.h"

#define CMD_PROFILE_BUDGET_MAX 100000000 /* tokens: more is a typo */

/* The agent asked about: params.agent, else the connection's. */
static const char *
cmd_profile_agent(struct request *req, json_t *params)
{
	const char *agent = cmd_string(params, "agent");

	if (agent != NULL && !names_valid(agent)) {
		control_fail_code(req, JSONRPC_INVALID_PARAMS,
		    json_pack("{s:s}", "field", "agent"),
		    "agent must match [A-Za-z0-9][A-Za-z0-9_-]{0,62}");
		return NULL;
	}
	return agent != NULL ? agent : control_agent(req);
}

const json_t *
cmd_profile_row(struct request *req, const char *agent, const char *name)
{
	const json_t *row = profile_find(agent, name);
	char *near;

	if (row != NULL)
		return row;
	near = profile_did_you_mean(agent, name);
	control_fail(req, ERRORS_NOT_FOUND,
	    json_pack("{s:s, s:s}", "what", "profile", "profile", name),
	    "no profile %s for agent %s%s (mcpctl profile list shows them)",
	    name, agent, near);
	free(near);
	return NULL;
}

static void
cmd_profile_storage(struct request *req, const char *what, char *cause)
{
	control_fail(req, ERRORS_STORAGE, NULL, "cannot save the %s: %s", what,
	    cause != NULL ? cause : "unknown error");
	free(cause);
}

/* The profile as shown: its row, whether it is the default, its tools. */
static json_t *
cmd_profile_view(const char *agent, const json_t *row)
{
	const char *name = json_string_value(json_object_get(row, "id"));
	const char *def = profile_default(agent);
	json_t *out = xjson(json_deep_copy(row)), *all, *names, *e;
	json_t *chosen = xjson(json_array());
	const json_t *budget = json_object_get(row, "budget");
	size_t i, bytes, tokens;
	json_int_t limit;

	json_object_del(out, "id");
	json_object_set_new(out, "name", json_string(name));
	json_object_set_new(out, "agent", json_string(agent));
	json_object_set_new(out, "is_default",
	    json_boolean(def != NULL && strcmp(def, name) == 0));
	all = server_gateway_catalog(agent, NULL);
	gateway_names(all, true);
	/* The view is also what the policy lets it list (DESIGN 13). */
	policy_filter(all, agent, name);
	names = xjson(json_array());
	json_array_foreach(all, i, e)
		if (profile_allows(row,
			json_string_value(json_object_get(e, "server")),
			json_string_value(json_object_get(json_object_get(e,
							      "tool"),
			    "name")),
			false)) {
			json_array_append(names, json_object_get(e, "name"));
			json_array_append(chosen, e);
		}
	json_decref(all);
	json_object_set_new(out, "selects", names);
	/* What its view's tools/list costs, against its budget (or mcpd's). */
	bytes = gateway_cost_entries(chosen);
	tokens = gateway_cost_tokens(bytes);
	limit = json_is_integer(budget) ? json_integer_value(budget) :
					  (json_int_t)mcpd_opts.tool_budget;
	json_object_set_new(out, "cost",
	    json_pack("{s:I, s:I, s:I, s:b}", "bytes", (json_int_t)bytes,
		"tokens", (json_int_t)tokens, "budget", limit, "over_budget",
		limit > 0 && (json_int_t)tokens > limit));
	json_decref(chosen);
	return out;
}

/* create and set: the row changed as params say, then saved. */
static void
cmd_profile_write(struct request *req, const char *agent, const char *name,
    json_t *params, bool is_create)
{
	const json_t *have = profile_find(agent, name);
	json_t *budget = json_object_get(params, "budget"), *row;
	char *cause = NULL;

	if (is_create && have != NULL) {
		control_fail(req, ERRORS_CONFLICT,
		    json_pack("{s:s}", "profile", name),
		    "agent %s has a profile %s already: mcpctl profile set %s changes it",
		    agent, name, name);
		return;
	}
	if (!is_create && (have = cmd_profile_row(req, agent, name)) == NULL)
		return;
	if (budget != NULL &&
	    (json_integer_value(budget) < 0 ||
		json_integer_value(budget) > CMD_PROFILE_BUDGET_MAX)) {
		control_fail_code(req, JSONRPC_INVALID_PARAMS,
		    json_pack("{s:s}", "field", "budget"),
		    "budget must be 0 (never search) to 100000000 tokens");
		return;
	}
	row = have != NULL ? xjson(json_deep_copy(have)) :
			     xjson(json_pack("{s:s}", "id", name));
	if (profile_row_edit(row, params, &cause) < 0) {
		control_fail_code(req, JSONRPC_INVALID_PARAMS, NULL, "%s",
		    cause);
		free(cause);
	} else if (profile_put(agent, row, &cause) < 0)
		cmd_profile_storage(req, "profile", cause);
	else
		control_reply(req, cmd_profile_view(agent, row));
	json_decref(row);
}

/* rm: refused while the agent's default or a token's profile. */
static void
cmd_profile_rm(struct request *req, const char *agent, const char *name)
{
	const char *def = profile_default(agent);
	bool is_default = def != NULL && strcmp(def, name) == 0;
	bool has_token = tokens_has_profile(agent, name);
	char *cause = NULL;

	if (cmd_profile_row(req, agent, name) == NULL)
		return;
	if (is_default || has_token) {
		control_fail(req, ERRORS_CONFLICT,
		    json_pack("{s:s, s:b, s:b}", "profile", name, "is_default",
			is_default, "has_token", has_token),
		    "profile %s is in use%s%s%s%s%s; nothing removed", name,
		    is_default ? ": it is the default of agent " : "",
		    is_default ? agent : "",
		    is_default ? " (mcpctl profile default AGENT --none)" : "",
		    has_token ? (is_default ? ", and" : ":") : "",
		    has_token ?
			" an HTTP token is bound to it (mcpctl token --profile PROFILE --revoke)" :
			"");
		return;
	}
	if (profile_remove(agent, name, &cause) < 0)
		cmd_profile_storage(req, "profiles", cause);
	else
		control_reply(req,
		    json_pack("{s:s, s:s, s:b}", "name", name, "agent", agent,
			"removed", 1));
}

static void
cmd_profile_default(struct request *req, const char *agent, const char *name)
{
	char *cause = NULL;

	if (name != NULL && cmd_profile_row(req, agent, name) == NULL)
		return;
	if (profile_set_default(agent, name, &cause) < 0)
		cmd_profile_storage(req, "profiles", cause);
	else
		control_reply(req,
		    json_pack("{s:s, s:s?}", "agent", agent, "default", name));
}

static void
cmd_profile_list(struct request *req, const char *agent)
{
	json_t *names = profile_names(agent), *v, *out = json_array();
	size_t i;

	json_array_foreach(names, i, v)
		json_array_append_new(out,
		    cmd_profile_view(agent,
			profile_find(agent, json_string_value(v))));
	json_decref(names);
	control_reply(req,
	    json_pack("{s:s, s:s?, s:o}", "agent", agent, "default",
		profile_default(agent), "profiles", out));
}

static void
cmd_profile_exec(struct request *req, json_t *params)
{
	const char *op = cmd_string(params, "op");
	const char *name = cmd_string(params, "name");
	const char *agent = cmd_profile_agent(req, params);
	const json_t *row;

	if (agent == NULL)
		return;
	if (strcmp(op, "list") == 0) {
		cmd_profile_list(req, agent);
		return;
	}
	if (strcmp(op, "default") == 0 && name == NULL) {
		cmd_profile_default(req, agent, NULL);
		return;
	}
	if (name == NULL || !names_valid(name)) {
		control_fail_code(req, JSONRPC_INVALID_PARAMS,
		    json_pack("{s:s}", "field", "name"),
		    "a profile name must match [A-Za-z0-9][A-Za-z0-9_-]{0,62}");
		return;
	}
	if (strcmp(op, "create") == 0 || strcmp(op, "set") == 0)
		cmd_profile_write(req, agent, name, params,
		    strcmp(op, "create") == 0);
	else if (strcmp(op, "show") == 0) {
		if ((row = cmd_profile_row(req, agent, name)) != NULL)
			control_reply(req, cmd_profile_view(agent, row));
	} else if (strcmp(op, "rm") == 0)
		cmd_profile_rm(req, agent, name);
	else if (strcmp(op, "default") == 0)
		cmd_profile_default(req, agent, name);
	else
		control_fail_code(req, JSONRPC_INVALID_PARAMS,
		    json_pack("{s:s}", "field", "op"),
		    "op must be create, set, show, list, rm or default");
}

static const struct cmd_param cmd_profile_params[] = {
	{ "op", JSON_STRING, true },
	{ "name", JSON_STRING, false },
	{ "agent", JSON_STRING, false },
	{ "servers", JSON_ARRAY, false },
	{ "tools", JSON_ARRAY, false },
	{ "exclude_tools", JSON_ARRAY, false },
	{ "pins", JSON_ARRAY, false },
	{ "budget", JSON_INTEGER, false },
	{ "clear", JSON_ARRAY, false },
	{ NULL, 0, false },
};

const struct cmd_entry cmd_profile_entry = {
	"mcpd/profile",
	cmd_profile_exec,
	cmd_profile_params,
	0,
};
