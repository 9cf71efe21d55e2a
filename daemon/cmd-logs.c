/* SPDX-License-Identifier: ISC */
/* mcpd/logs: the last stderr lines of a server, or those and what follows. */
#include "mcpd.h"

#define CMD_LOGS_DEFAULT 100
#define CMD_LOGS_REMOTE \
	"a remote server has no stderr: these lines are mcpd's own notes about its connection"

static void
cmd_logs_exec(struct request *req, json_t *params)
{
	json_t *v = json_object_get(params, "lines");
	json_int_t lines = v != NULL ? json_integer_value(v) : CMD_LOGS_DEFAULT;
	struct server *s;

	if (lines < 0) {
		control_fail_code(req, JSONRPC_INVALID_PARAMS,
		    json_pack("{s:s}", "field", "lines"),
		    "lines must be 0 (all) or more");
		return;
	}
	if ((s = cmd_server(req, cmd_string(params, "server"))) == NULL)
		return;
	if (json_is_true(json_object_get(params, "follow")))
		server_logs_follow(s, control_server_reply(req, NULL),
		    (size_t)lines);
	else {
		json_t *result = server_logs(s, (size_t)lines);

		/* A remote server has no stderr: mcpd says what there is. */
		if (server_get_mode(s) == SERVER_REMOTE)
			json_object_set_new(result, "note",
			    json_string(CMD_LOGS_REMOTE));
		control_reply(req, result);
	}
}

static const struct cmd_param cmd_logs_params[] = {
	{ "server", JSON_STRING, true },
	{ "lines", JSON_INTEGER, false },
	{ "follow", JSON_TRUE, false },
	{ NULL, 0, false },
};

const struct cmd_entry cmd_logs_entry = {
	"mcpd/logs",
	cmd_logs_exec,
	cmd_logs_params,
	CMD_STOPPING,
};
