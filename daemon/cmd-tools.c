/* SPDX-License-Identifier: ISC */
/*
 * mcpd/tools: the tools of one server or of all the caller's servers; with
 * a tool name, only that one of the server's (what mcpctl call needs).
 */
#include <string.h>

#include "mcpd.h"

/* Keeps the tools named name (new array; tools is taken). */
static json_t *
cmd_tools_only(json_t *tools, const char *name)
{
	json_t *kept = json_array(), *t;
	size_t i;

	json_array_foreach(tools, i, t)
		if (strcmp(json_string_value(json_object_get(t, "name")),
			name) == 0)
			json_array_append(kept, t);
	json_decref(tools);
	return kept;
}

static void
cmd_tools_exec(struct request *req, json_t *params)
{
	const char *target = cmd_string(params, "server");
	const char *tool = cmd_string(params, "tool");
	json_t *tools;
	struct server *s;

	if (tool != NULL && target == NULL) {
		control_fail_code(req, JSONRPC_INVALID_PARAMS, NULL,
		    "a tool name needs its server (\"server\")");
		return;
	}
	if (target != NULL) {
		if ((s = cmd_server(req, target)) == NULL)
			return;
		tools = json_array();
		server_tools_append(s, tools);
		if (tool != NULL)
			tools = cmd_tools_only(tools, tool);
		control_reply(req, json_pack("{s:o}", "tools", tools));
		return;
	}
	control_reply(req,
	    json_pack("{s:o}", "tools", server_list_tools(control_agent(req))));
}

static const struct cmd_param cmd_tools_params[] = {
	{ "server", JSON_STRING, false },
	{ "tool", JSON_STRING, false },
	{ NULL, 0, false },
};

const struct cmd_entry cmd_tools_entry = {
	"mcpd/tools",
	cmd_tools_exec,
	cmd_tools_params,
	CMD_STOPPING,
};
