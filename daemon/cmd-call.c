/* SPDX-License-Identifier: ISC */
/* mcpd/call: calls one tool by handle or by server and tool name. */
#include <stdlib.h>
#include <string.h>

#include "gateway.h"
#include "mcpd.h"
#include "names.h"

static void
cmd_call_bad(struct request *req, const char *field, const char *why)
{
	control_fail_code(req, JSONRPC_INVALID_PARAMS,
	    json_pack("{s:s}", "field", field), "mcpd/call: %s", why);
}

/*
 * answers (may be NULL), the requests the caller answers, as the client
 * capabilities a gateway client would declare (*ret_caps, new) and
 * whether it takes input_required results. False for a word it does not
 * know, which would otherwise pass for an answer it cannot give.
 */
static bool
cmd_call_answers(const json_t *answers, json_t **ret_caps,
    bool *ret_takes_input)
{
	json_t *caps = json_object(), *e = NULL, *word;
	const char *w;
	size_t i;

	*ret_takes_input = false;
	json_array_foreach(answers, i, word) {
		if ((w = json_string_value(word)) == NULL)
			break;
		if (strcmp(w, "input_required") == 0)
			*ret_takes_input = true;
		else if (strcmp(w, "sampling") == 0 || strcmp(w, "roots") == 0)
			json_object_set_new(caps, w, json_object());
		else if (strcmp(w, "elicitation") != 0 &&
		    strcmp(w, "elicitation-url") != 0)
			break;
		else {
			if (e == NULL)
				json_object_set_new(caps, "elicitation",
				    e = json_object());
			json_object_set_new(e, w[11] == '\0' ? "form" : "url",
			    json_object());
		}
	}
	if (i < json_array_size(answers)) {
		json_decref(caps);
		return false;
	}
	*ret_caps = caps;
	return true;
}

static void
cmd_call_handle(struct request *req, const char *handle, json_t *args,
    int timeout, const struct server_call_opts *opts)
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
	if ((s = cmd_server(req, server_part)) != NULL &&
	    gateway_view_call_ok(req, s, tool))
		server_call(s, gen == 0 ? UINT64_MAX : gen, tool, args, timeout,
		    control_server_reply(req, NULL), opts);
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
	struct server_call_opts opts = { NULL, false,
		json_object_get(params, "input_responses"),
		json_object_get(params, "request_state"),
		cmd_string(params, "definition") };
	json_t *caps = NULL;
	struct server *s;
	int timeout;

	if (!cmd_timeout(req, params, mcpd_opts.call_timeout_ms, &timeout))
		return;
	if (!cmd_call_answers(json_object_get(params, "answers"), &caps,
		&opts.takes_input)) {
		cmd_call_bad(req, "answers",
		    "answers is a list of elicitation, elicitation-url, roots, sampling and input_required");
		return;
	}
	opts.caps = caps;
	if (json_is_true(json_object_get(params, "progress")))
		control_want_progress(req);
	if ((handle != NULL) == (server != NULL || tool != NULL)) {
		cmd_call_bad(req, handle != NULL ? "handle" : "server",
		    "give handle, or server and tool");
		json_decref(caps);
		return;
	}
	args = args != NULL ? json_incref(args) : json_object();
	if (handle != NULL)
		cmd_call_handle(req, handle, args, timeout, &opts);
	else if (server == NULL || tool == NULL)
		cmd_call_bad(req, server == NULL ? "server" : "tool",
		    "give both server and tool");
	else if ((s = cmd_server(req, server)) != NULL &&
	    gateway_view_call_ok(req, s, tool))
		server_call(s, 0, tool, args, timeout,
		    control_server_reply(req, NULL), &opts);
	json_decref(args);
	json_decref(caps);
}

static const struct cmd_param cmd_call_params[] = {
	{ "handle", JSON_STRING, false },
	{ "server", JSON_STRING, false },
	{ "tool", JSON_STRING, false },
	{ "arguments", JSON_OBJECT, false },
	{ "timeout_ms", JSON_INTEGER, false },
	{ "progress", JSON_TRUE, false },
	{ "answers", JSON_ARRAY, false },
	{ "input_responses", JSON_OBJECT, false },
	{ "request_state", JSON_STRING, false },
	{ "definition", JSON_STRING, false },
	{ NULL, 0, false },
};

const struct cmd_entry cmd_call_entry = {
	"mcpd/call",
	cmd_call_exec,
	cmd_call_params,
	0,
};
