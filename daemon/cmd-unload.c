/* SPDX-License-Identifier: ISC */
/* mcpd/unload: stops a server and forgets it, saved row included. */
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "mcpd.h"

/* A saved row with no server (its restore failed early): the row goes. */
static void
cmd_unload_saved_only(struct request *req, const char *target)
{
	const char *agent = control_agent(req);
	const json_t *row = enable_row_find(agent, target);
	json_t *name;
	char *copy, *cause = NULL;
	bool removed = false;

	if (row == NULL) {
		cmd_server(req, target); /* fails req: not found */
		return;
	}
	name = json_incref(json_object_get(row, "name"));
	copy = xstrdup(json_string_value(json_object_get(row, "id")));
	if (enable_remove(agent, copy, &removed, &cause) < 0)
		control_fail(req, ERRORS_STORAGE, NULL,
		    "cannot remove the saved row %s: %s; nothing was changed",
		    copy, cause != NULL ? cause : "unknown error");
	else
		control_reply(req,
		    json_pack("{s:s, s:O?, s:b, s:b, s:b}", "id", copy, "name",
			name, "stopped_live", 0, "removed_saved", removed,
			"container_removed", 0));
	json_decref(name);
	free(cause);
	free(copy);
}

static void
cmd_unload_exec(struct request *req, json_t *params)
{
	const char *target = cmd_string(params, "target");
	bool failed;
	struct server *s = cmd_server_or_none(req, target, &failed);

	if (s != NULL)
		server_unload(s, control_server_reply(req, NULL));
	else if (!failed)
		cmd_unload_saved_only(req, target);
}

static const struct cmd_param cmd_unload_params[] = {
	{ "target", JSON_STRING, true },
	{ NULL, 0, false },
};

const struct cmd_entry cmd_unload_entry = {
	"mcpd/unload",
	cmd_unload_exec,
	cmd_unload_params,
	0,
};
