/* SPDX-License-Identifier: ISC */
/* mcpd/enable: starts a disabled server again from its saved row. */
#include <stdlib.h>

#include "mcpd.h"

/* The mark goes first (read back), then the row starts as at restore. */
static void
cmd_enable_row(struct request *req, const json_t *row, int timeout)
{
	const char *agent = control_agent(req);
	char *id = xstrdup(json_string_value(json_object_get(row, "id")));
	char *cause = NULL;

	if (enable_row_is_disabled(row) &&
	    enable_set_disabled(agent, id, false, &cause) < 0)
		control_fail(req, ERRORS_STORAGE, NULL,
		    "cannot clear the disabled mark of %s: %s; nothing was changed",
		    json_string_value(json_object_get(row, "name")),
		    cause != NULL ? cause : "unknown error");
	else if (enable_start(agent, store_row_peek(mcpd_store, agent, id),
		     control_server_reply(req, NULL), timeout, NULL, NULL,
		     &cause) < 0)
		control_fail(req, ERRORS_CONFLICT, NULL,
		    "cannot start the saved row %s: %s", id, cause);
	free(cause);
	free(id);
}

static void
cmd_enable_exec(struct request *req, json_t *params)
{
	const char *target = cmd_string(params, "target");
	const json_t *row;
	struct server *s;
	bool failed;
	int timeout;

	if (!cmd_timeout(req, params, mcpd_opts.load_timeout_ms, &timeout))
		return;
	if (json_is_true(json_object_get(params, "progress")))
		control_want_progress(req);
	if ((s = cmd_server_or_none(req, target, &failed)) != NULL)
		control_reply(req,
		    json_pack("{s:s, s:s, s:b}", "id", server_id(s), "name",
			server_name(s), "already", 1));
	else if (failed)
		return;
	else if ((row = enable_row_find(control_agent(req), target)) == NULL)
		(void)cmd_server(req, target); /* fails req: not found */
	else if (cmd_server_room(req))
		cmd_enable_row(req, row, timeout);
}

static const struct cmd_param cmd_enable_params[] = {
	{ "target", JSON_STRING, true },
	{ "timeout_ms", JSON_INTEGER, false },
	{ "progress", JSON_TRUE, false },
	{ NULL, 0, false },
};

const struct cmd_entry cmd_enable_entry = {
	"mcpd/enable",
	cmd_enable_exec,
	cmd_enable_params,
	0,
};
