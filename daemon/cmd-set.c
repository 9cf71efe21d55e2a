/* SPDX-License-Identifier: ISC */
/* mcpd/set: whether a server runs always or on demand, saved first. */
#include <stdlib.h>

#include "mcpd.h"

static void
cmd_set_exec(struct request *req, json_t *params)
{
	const json_t *on = json_object_get(params, "on_demand");
	const json_t *idle = json_object_get(params, "idle_stop_ms");
	struct server *s = cmd_server(req, cmd_string(params, "target"));
	json_t *changes;
	char *cause = NULL;
	int idle_ms = idle != NULL ? (int)json_integer_value(idle) : -1;

	if (s == NULL)
		return; /* failed: no such server */
	if (idle != NULL && !loadspec_idle_stop_ok(idle)) {
		control_fail_code(req, JSONRPC_INVALID_PARAMS,
		    json_pack("{s:s}", "field", "idle_stop_ms"),
		    "%s; nothing was changed", LOADSPEC_IDLE_STOP_WHY);
		return;
	}
	/* The row first: nothing changes unless it is saved and read back. */
	changes = json_pack("{s:b, s:o}", "on_demand", json_is_true(on),
	    "idle_stop_ms", idle != NULL ? json_integer(idle_ms) : json_null());
	if (server_is_persistent(s) &&
	    enable_set_params(control_agent(req), server_id(s), changes,
		&cause) < 0) {
		control_fail(req, ERRORS_STORAGE,
		    json_pack("{s:s}", "server", server_name(s)),
		    "cannot save the saved row of %s: %s; nothing was changed",
		    server_name(s), cause != NULL ? cause : "unknown error");
		free(cause);
		json_decref(changes);
		return;
	}
	json_decref(changes);
	server_idle_configure(s, json_is_true(on), idle_ms);
	control_reply(req,
	    json_pack("{s:s, s:s, s:b, s:i, s:b}", "id", server_id(s), "name",
		server_name(s), "on_demand", server_is_on_demand(s),
		"idle_stop_ms", server_idle_stop_ms(s), "persistent",
		server_is_persistent(s)));
}

static const struct cmd_param cmd_set_params[] = {
	{ "target", JSON_STRING, true },
	{ "on_demand", JSON_TRUE, true },
	{ "idle_stop_ms", JSON_INTEGER, false },
	{ NULL, 0, false },
};

const struct cmd_entry cmd_set_entry = {
	"mcpd/set",
	cmd_set_exec,
	cmd_set_params,
	0,
};
