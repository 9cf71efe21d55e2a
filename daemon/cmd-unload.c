/* SPDX-License-Identifier: ISC */
/* mcpd/unload: stops a server and forgets it. */
#include "mcpd.h"

static void
cmd_unload_exec(struct request *req, json_t *params)
{
	struct server *s = cmd_server(req, cmd_string(params, "target"));

	if (s != NULL)
		server_unload(s, req);
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
