/* SPDX-License-Identifier: ISC */
/* mcpd/rename: a server gets a new name; a running one keeps running. */
#include <stdlib.h>
#include <string.h>

#include "mcpd.h"
#include "names.h"

/* A disabled server is its row only: the row is renamed. */
static void
cmd_rename_row(struct request *req, const char *target, const char *name)
{
	const char *agent = control_agent(req);
	const json_t *row = enable_row_find(agent, target);
	char *id, *old, *cause = NULL;

	if (row == NULL) {
		char *near = server_did_you_mean(agent, target);

		control_fail(req, ERRORS_NOT_FOUND,
		    json_pack("{s:s}", "what", "server"),
		    "no server %s for agent %s%s", target, agent, near);
		free(near);
		return;
	}
	id = xstrdup(json_string_value(json_object_get(row, "id")));
	old = xstrdup(json_string_value(json_object_get(row, "name")));
	if (enable_rename(agent, id, name, &cause) < 0)
		control_fail(req, ERRORS_STORAGE, NULL,
		    "cannot rename the saved row of %s: %s; nothing was changed",
		    old, cause != NULL ? cause : "unknown error");
	else
		control_reply(req,
		    json_pack("{s:s, s:s, s:s, s:b}", "id", id, "name", name,
			"old_name", old, "persistent", 1));
	free(cause);
	free(old);
	free(id);
}

static void
cmd_rename_exec(struct request *req, json_t *params)
{
	const char *agent = control_agent(req);
	const char *target = cmd_string(params, "target");
	const char *name = cmd_string(params, "name");
	const json_t *row = enable_row_find(agent, name);
	struct server *s;
	bool failed;

	if (!names_valid(name)) {
		control_fail_code(req, JSONRPC_INVALID_PARAMS,
		    json_pack("{s:s}", "field", "name"),
		    "%s is not a valid server name: a name must match [A-Za-z0-9][A-Za-z0-9_-]{0,62}; nothing was changed",
		    name);
		return;
	}
	if (names_reserved(name)) {
		control_fail_code(req, JSONRPC_INVALID_PARAMS,
		    json_pack("{s:s}", "field", "name"),
		    "the name mcpd is mcpd's own (its tools are mcpd__find_tools and mcpd__call_tool); nothing was changed");
		return;
	}
	if (server_find_name(agent, name) != NULL || row != NULL) {
		control_fail(req, ERRORS_CONFLICT,
		    json_pack("{s:s}", "name", name),
		    "the name %s is taken by another server; nothing was changed",
		    name);
		return;
	}
	if ((s = cmd_server_or_none(req, target, &failed)) != NULL)
		server_rename(s, control_server_reply(req, NULL), name);
	else if (!failed)
		cmd_rename_row(req, target, name);
}

static const struct cmd_param cmd_rename_params[] = {
	{ "target", JSON_STRING, true },
	{ "name", JSON_STRING, true },
	{ NULL, 0, false },
};

const struct cmd_entry cmd_rename_entry = {
	"mcpd/rename",
	cmd_rename_exec,
	cmd_rename_params,
	0,
};
