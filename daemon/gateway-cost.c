/* SPDX-License-Identifier: ISC */
/* What a view's tools/list costs an agent's context: bytes and tokens. */
#include <string.h>

#include "gateway.h"
#include "mcpd.h"

/*
 * The estimator (doc/views.md, "Cost"): a token is 4 bytes of the compact
 * JSON, rounded up. Measured against a real tokenizer on the search
 * fixture, it is within the figures doc/views.md gives.
 */
#define GATEWAY_COST_BYTES_PER_TOKEN 4
#define GATEWAY_COST_FRAME	     12 /* {"tools":[ and ]} */

size_t
gateway_cost_tokens(size_t bytes)
{
	return (bytes + GATEWAY_COST_BYTES_PER_TOKEN - 1) /
	    GATEWAY_COST_BYTES_PER_TOKEN;
}

/* The bytes of one Tool object in a list: its compact JSON and a comma. */
static size_t
gateway_cost_tool(const json_t *tool)
{
	return json_dumpb(tool, NULL, 0, JSON_COMPACT) + 1;
}

size_t
gateway_cost_views(const json_t *tools)
{
	const json_t *t;
	size_t i, bytes = GATEWAY_COST_FRAME;

	json_array_foreach(tools, i, t)
		bytes += gateway_cost_tool(t);
	return json_array_size(tools) > 0 ? bytes - 1 : bytes;
}

size_t
gateway_cost_entries(const json_t *all)
{
	json_t *views = xjson(json_array()), *e;
	size_t i, bytes;

	json_array_foreach(all, i, e)
		json_array_append_new(views, gateway_tool_view(e));
	bytes = gateway_cost_views(views);
	json_decref(views);
	return bytes;
}

/* The row of the profile gw's view is made by, or NULL. */
static const json_t *
gateway_view_profile(const struct gateway *gw)
{
	struct client *c = gw != NULL ? gateway_client(gw) : NULL;
	const char *agent = c != NULL ? control_client_agent(c) : NULL;

	if (agent == NULL)
		return NULL;
	return profile_find(agent,
	    profile_effective(agent, control_client_profile(c)));
}

long long
gateway_view_budget(const struct gateway *gw)
{
	const json_t *budget = json_object_get(gateway_view_profile(gw),
	    "budget");

	/* A profile's --budget, else --tool-budget. */
	return json_is_integer(budget) ? json_integer_value(budget) :
					 (long long)mcpd_opts.tool_budget;
}

const json_t *
gateway_view_pins(const struct gateway *gw)
{
	static json_t *none;
	const json_t *pins = json_object_get(gateway_view_profile(gw), "pins");

	/* A profile's --pin globs; without one nothing is pinned. */
	if (json_is_array(pins))
		return pins;
	if (none == NULL)
		none = xjson(json_array());
	return none;
}

bool
gateway_is_over_budget(const struct gateway *gw, size_t bytes)
{
	long long budget = gateway_view_budget(gw);

	return budget > 0 && gateway_cost_tokens(bytes) > (size_t)budget;
}

/* {tools, bytes, tokens} of one list of Tool objects. */
static json_t *
gateway_cost_row(size_t tools, size_t bytes)
{
	return xjson(json_pack("{s:I, s:I, s:I}", "tools", (json_int_t)tools,
	    "bytes", (json_int_t)bytes, "tokens",
	    (json_int_t)gateway_cost_tokens(bytes)));
}

/* Writes a server's row's counts into by. */
static void
gateway_cost_server(json_t *by, size_t tools, size_t bytes)
{
	json_t *row = gateway_cost_row(tools, bytes);

	json_object_update(by, row);
	json_decref(row);
}

json_t *
gateway_cost(const char *agent, const json_t *scope)
{
	json_t *all = gateway_catalog(agent, scope), *e, *row, *by = NULL;
	json_t *servers = xjson(json_array()), *out, *listed, *views;
	const char *server;
	size_t i, bytes, n = 0, sb = 0;

	/* What the policy denies is not listed, so it costs nothing. */
	policy_filter(all, agent, NULL);
	bytes = gateway_cost_entries(all);

	/* Per server, in the catalog's order: its tools as the view has them. */
	json_array_foreach(all, i, e) {
		server = json_string_value(json_object_get(e, "server"));
		if (by == NULL ||
		    strcmp(json_string_value(json_object_get(by, "server")),
			server) != 0) {
			if (by != NULL)
				gateway_cost_server(by, n, sb);
			by = json_pack("{s:s}", "server", server);
			json_array_append_new(servers, by);
			n = sb = 0;
		}
		row = gateway_tool_view(e);
		sb += json_dumpb(row, NULL, 0, JSON_COMPACT);
		n++;
		json_decref(row);
	}
	if (by != NULL)
		gateway_cost_server(by, n, sb);
	out = gateway_cost_row(json_array_size(all), bytes);
	json_object_set_new(out, "servers", servers);
	json_object_set_new(out, "budget",
	    json_integer(gateway_view_budget(NULL)));
	if (gateway_is_over_budget(NULL, bytes)) {
		listed = gateway_search_view(NULL, all,
		    gateway_view_pins(NULL));
		views = gateway_search_tools();
		json_array_foreach(listed, i, e)
			json_array_insert_new(views, i, gateway_tool_view(e));
		json_object_set_new(out, "search",
		    gateway_cost_row(json_array_size(views),
			gateway_cost_views(views)));
		json_decref(views);
		json_decref(listed);
	}
	json_decref(all);
	return out;
}
