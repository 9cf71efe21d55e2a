/* SPDX-License-Identifier: ISC */
/* mcpd/call: calls one tool by handle or by server and tool name. */
#include <stdlib.h>

#include "mcpd.h"
#include "names.h"

static void
cmd_call_bad(struct request *req, const char *field, const char *why)
{
	control_fail_code(req, JSONRPC_INVALID_PARAMS,
	    json_pack("{s:s}", "field", field), "mcpd/call: %s", why);
}

static void
cmd_call_handle(struct request *req, const char *handle, json_t *args,
    int timeout)
{
	char *server_part, *tool;
	uint64_t gen;
	struct server *s;

	if (xenomem(names_handle_parse(handle, &server_part, &gen, &tool)) <
	    0) {
		cmd_call_bad(req, "handle",
		    "a handle looks like <server>.<generation>/<tool>; see mcpctl tools");
		return;
	}
	if ((s = cmd_server(req, server_part)) != NULL)
		server_call(s, gen == 0 ? UINT64_MAX : gen, tool, args, timeout,
		    req);
	free(server_part);
	free(tool);
}

static void
cmd_call_exec(struct request *req, json_t *params)
{
	const char *handle = cmd_string(params, "handle");
	const char *server = cmd_string(params, "server");
	const char *tool = cmd_string(params, "tool");
	json_t *args = json_object_get(params, "arguments");
	struct server *s;
	int timeout;

	if (!cmd_timeout(req, params, mcpd_opts.call_timeout_ms, &timeout))
		return;
	if (json_is_true(json_object_get(params, "progress")))
		control_want_progress(req);
	if ((handle != NULL) == (server != NULL || tool != NULL)) {
		cmd_call_bad(req, handle != NULL ? "handle" : "server",
		    "give handle, or server and tool");
		return;
	}
	args = args != NULL ? json_incref(args) : json_object();
	if (handle != NULL)
		cmd_call_handle(req, handle, args, timeout);
	else if (server == NULL || tool == NULL)
		cmd_call_bad(req, server == NULL ? "server" : "tool",
		    "give both server and tool");
	else if ((s = cmd_server(req, server)) != NULL)
		server_call(s, 0, tool, args, timeout, req);
	json_decref(args);
}

static const struct cmd_param cmd_call_params[] = {
	{ "handle", JSON_STRING, false },
	{ "server", JSON_STRING, false },
	{ "tool", JSON_STRING, false },
	{ "arguments", JSON_OBJECT, false },
	{ "timeout_ms", JSON_INTEGER, false },
	{ "progress", JSON_TRUE, false },
	{ NULL, 0, false },
};

const struct cmd_entry cmd_call_entry = {
	"mcpd/call",
	cmd_call_exec,
	cmd_call_params,
	0,
};
