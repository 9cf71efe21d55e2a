/* SPDX-License-Identifier: ISC */
/* mcpd/tools: the tools of one server or of all the caller's servers. */
#include "mcpd.h"

static void
cmd_tools_exec(struct request *req, json_t *params)
{
	const char *target = cmd_string(params, "server");
	json_t *tools;
	struct server *s;

	if (target != NULL) {
		if ((s = cmd_server(req, target)) == NULL)
			return;
		tools = json_array();
		server_tools_append(s, tools);
		control_reply(req, json_pack("{s:o}", "tools", tools));
		return;
	}
	control_reply(req,
	    json_pack("{s:o}", "tools", server_list_tools(control_agent(req))));
}

static const struct cmd_param cmd_tools_params[] = {
	{ "server", JSON_STRING, false },
	{ NULL, 0, false },
};

const struct cmd_entry cmd_tools_entry = {
	"mcpd/tools",
	cmd_tools_exec,
	cmd_tools_params,
	CMD_STOPPING,
};
