/* SPDX-License-Identifier: ISC */
/*
 * mcpd/tools: the tools of one server or of all the caller's servers; with
 * a tool name, only that one of the server's, with the digest of its
 * definition (what mcpctl call needs); with cost, what the agent's
 * default view's tools/list costs (gateway-cost.c).
 */

#include "gateway.h"
#include "mcpd.h"

static void
cmd_tools_exec(struct request *req, json_t *params)
{
	const char *target = cmd_string(params, "server");
	const char *tool = cmd_string(params, "tool");
	json_t *tools, *entry;
	struct server *s;

	if (json_is_true(json_object_get(params, "cost"))) {
		if (target != NULL)
			control_fail_code(req, JSONRPC_INVALID_PARAMS, NULL,
			    "cost is of the agent's whole view: give no server");
		else
			control_reply(req,
			    gateway_cost(control_agent(req), NULL));
		return;
	}
	if (tool != NULL && target == NULL) {
		control_fail_code(req, JSONRPC_INVALID_PARAMS, NULL,
		    "a tool name needs its server (\"server\")");
		return;
	}
	if (target != NULL) {
		if ((s = cmd_server(req, target)) == NULL)
			return;
		tools = json_array();
		if (tool == NULL)
			server_tools_append(s, tools);
		else if ((entry = server_tool_listed(s, tool)) != NULL)
			json_array_append_new(tools, entry);
		control_reply(req, json_pack("{s:o}", "tools", tools));
		return;
	}
	control_reply(req,
	    json_pack("{s:o}", "tools", server_list_tools(control_agent(req))));
}

static const struct cmd_param cmd_tools_params[] = {
	{ "server", JSON_STRING, false },
	{ "tool", JSON_STRING, false },
	{ "cost", JSON_TRUE, false },
	{ NULL, 0, false },
};

const struct cmd_entry cmd_tools_entry = {
	"mcpd/tools",
	cmd_tools_exec,
	cmd_tools_params,
	CMD_STOPPING,
};
