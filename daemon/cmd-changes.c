/* SPDX-License-Identifier: ISC */
/* mcpd/changes: the held tools (changed or new since pinned), with diffs. */
#include "mcpd.h"

static void
cmd_changes_exec(struct request *req, json_t *params)
{
	const char *target = cmd_string(params, "server");
	struct server *s = NULL;

	if (target != NULL && (s = cmd_server(req, target)) == NULL)
		return;
	control_reply(req,
	    json_pack("{s:o}", "changes",
		server_pins_changes(control_agent(req), s)));
}

static const struct cmd_param cmd_changes_params[] = {
	{ "server", JSON_STRING, false },
	{ NULL, 0, false },
};

const struct cmd_entry cmd_changes_entry = {
	"mcpd/changes",
	cmd_changes_exec,
	cmd_changes_params,
	0,
};
