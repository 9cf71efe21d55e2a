/* SPDX-License-Identifier: ISC */
/* mcpd/reload: a fresh connection replaces the current one. */
#include "mcpd.h"

static void
cmd_reload_exec(struct request *req, json_t *params)
{
	struct server *s;
	int timeout;

	if (!cmd_timeout(req, params, mcpd_opts.load_timeout_ms, &timeout))
		return;
	if (json_is_true(json_object_get(params, "progress")))
		control_want_progress(req);
	if ((s = cmd_server(req, cmd_string(params, "target"))) != NULL)
		server_reload(s, control_server_reply(req, NULL), timeout);
}

static const struct cmd_param cmd_reload_params[] = {
	{ "target", JSON_STRING, true },
	{ "timeout_ms", JSON_INTEGER, false },
	{ "progress", JSON_TRUE, false },
	{ NULL, 0, false },
};

const struct cmd_entry cmd_reload_entry = {
	"mcpd/reload",
	cmd_reload_exec,
	cmd_reload_params,
	0,
};
