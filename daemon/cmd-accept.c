/* SPDX-License-Identifier: ISC */
/* mcpd/accept: a server's held tool definitions become its pins. */
#include <errno.h>
#include <stdlib.h>

#include "mcpd.h"

static void
cmd_accept_exec(struct request *req, json_t *params)
{
	const char *tool = cmd_string(params, "tool");
	json_t *accepted = NULL;
	struct server *s;
	char *cause = NULL;
	int r;

	if ((s = cmd_server(req, cmd_string(params, "server"))) == NULL)
		return;
	r = server_pins_accept(s, tool, &accepted, &cause);
	if (r == -ENOENT)
		control_fail(req, ERRORS_NOT_FOUND,
		    json_pack("{s:s, s:s}", "what", "held tool", "tool", tool),
		    "server %s holds no tool named %s; nothing was changed (mcpctl changes %s lists what it holds)",
		    server_name(s), tool, server_name(s));
	else if (r < 0)
		control_fail(req, ERRORS_STORAGE,
		    json_pack("{s:s}", "server", server_name(s)),
		    "cannot save the pins of %s: %s; nothing was accepted",
		    server_name(s), cause != NULL ? cause : "unknown error");
	else
		control_reply(req,
		    json_pack("{s:s, s:o, s:b}", "server", server_name(s),
			"accepted", accepted, "persistent", 1));
	free(cause);
}

static const struct cmd_param cmd_accept_params[] = {
	{ "server", JSON_STRING, true },
	{ "tool", JSON_STRING, false },
	{ NULL, 0, false },
};

const struct cmd_entry cmd_accept_entry = {
	"mcpd/accept",
	cmd_accept_exec,
	cmd_accept_params,
	0,
};
