/* SPDX-License-Identifier: ISC */
/* mcpd/disable: stops a server and keeps its saved row, marked disabled. */
#include <stdlib.h>

#include "mcpd.h"

/* The answer for a row that stays stopped: already disabled, or now. */
static void
cmd_disable_reply(struct request *req, const json_t *row, bool was_disabled)
{
	control_reply(req,
	    json_pack("{s:O, s:O, s:b, s:b, s:b, s:b, s:b}", "id",
		json_object_get(row, "id"), "name",
		json_object_get(row, "name"), "disabled", 1, "already",
		was_disabled, "stopped_live", 0, "removed_saved", 0,
		"container_removed", 0));
}

/* A saved row without a server: disabled already, or its start failed. */
static void
cmd_disable_row(struct request *req, const char *target)
{
	const char *agent = control_agent(req);
	const json_t *row = enable_row_find(agent, target);
	char *id, *cause = NULL;

	if (row == NULL) {
		(void)cmd_server(req, target); /* fails req: not found */
		return;
	}
	if (enable_row_is_disabled(row)) {
		cmd_disable_reply(req, row, true);
		return;
	}
	id = xstrdup(json_string_value(json_object_get(row, "id")));
	if (enable_set_disabled(agent, id, true, &cause) < 0)
		control_fail(req, ERRORS_STORAGE, NULL,
		    "cannot mark the saved row %s disabled: %s; nothing was changed",
		    target, cause != NULL ? cause : "unknown error");
	else
		cmd_disable_reply(req, store_row_peek(mcpd_store, agent, id),
		    false);
	free(cause);
	free(id);
}

static void
cmd_disable_exec(struct request *req, json_t *params)
{
	const char *target = cmd_string(params, "target");
	bool failed;
	struct server *s = cmd_server_or_none(req, target, &failed);

	if (s != NULL)
		server_disable(s, control_server_reply(req, NULL));
	else if (!failed)
		cmd_disable_row(req, target);
}

static const struct cmd_param cmd_disable_params[] = {
	{ "target", JSON_STRING, true },
	{ NULL, 0, false },
};

const struct cmd_entry cmd_disable_entry = {
	"mcpd/disable",
	cmd_disable_exec,
	cmd_disable_params,
	0,
};
