/* SPDX-License-Identifier: ISC */
/* mcpd/list: every server of the caller's agent (or of all agents). */
#include "mcpd.h"

static void
cmd_list_exec(struct request *req, json_t *params)
{
	bool all = json_is_true(json_object_get(params, "all"));
	const char *agent = all ? NULL : control_agent(req);
	json_t *rows = server_list_rows(agent), *disabled;

	/* Disabled servers are rows only: listed after the running ones. */
	disabled = enable_disabled_rows(agent);
	json_array_extend(rows, disabled);
	json_decref(disabled);
	control_reply(req, json_pack("{s:o}", "servers", rows));
}

static const struct cmd_param cmd_list_params[] = {
	{ "all", JSON_TRUE, false },
	{ NULL, 0, false },
};

const struct cmd_entry cmd_list_entry = {
	"mcpd/list",
	cmd_list_exec,
	cmd_list_params,
	CMD_STOPPING,
};
